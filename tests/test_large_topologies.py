"""Large host lists (issue 12): planning is n log n, a wave holds a bounded number of sockets,
and a server cannot announce more hosts than a replica set can have."""
import importlib
import random
import select

import pytest
from bson import ObjectId

from singlemongo import errors
from singlemongo.client import MongoClient
from singlemongo.clock import FakeClock
from singlemongo.engine import wave
from singlemongo.engine.poll_fallback import Poll
from singlemongo.engine.scan_plan import ScanPlan
from singlemongo.engine.scanner import WAVE_LIMIT, plan_next_check
from singlemongo.sdam import ServerDescription, ServerType, TopologyDescription, TopologyType


def test_a_hello_announcing_ten_thousand_hosts_marks_the_server_unknown(mongo_replica_set):
    """A replica set has at most 50 members: a hello announcing 10,000 hosts is refused, that
    server is Unknown with a clear error. Before, the client tried to check all 10,000 (one
    find_one took 72 s and exhausted file descriptors)."""
    primary = mongo_replica_set.servers[0]
    primary.hello_extra = {"hosts": [f"host{i}.example:27017" for i in range(10_000)]}
    client = MongoClient(mongo_replica_set.uri, clock=FakeClock())
    client.test.c.find_one({}, read_preference="secondaryPreferred")
    sd = client.topology_description.servers[primary.address]
    # Unknown, then a PossiblePrimary when a secondary names it (SDAM); the reason stays.
    assert sd.server_type in (ServerType.UNKNOWN, ServerType.POSSIBLE_PRIMARY)
    assert "10000 hosts" in sd.error
    assert len(client.topology_description.servers) == 3
    client.close()


def test_a_wave_holds_a_bounded_number_of_sockets(monkeypatch):
    """A scan of 2,000 seeds opens at most WAVE_LIMIT sockets at once. Before, one wave opened
    a socket per server: 10,000 seeds exhausted the process's file descriptors."""
    most, watched = [0], set()

    class Counting(Poll):
        def register(self, fd, mask):
            super().register(fd, mask)
            watched.add(fd)
            most[0] = max(most[0], len(watched))

        def unregister(self, fd):
            super().unregister(fd)
            watched.discard(fd)
    monkeypatch.setattr(wave, "_POLL", Counting)
    seeds = ",".join(f"127.0.0.1:{port}" for port in range(2, 2002))  # refused at once
    checks = []
    client = MongoClient(f"mongodb://{seeds}/", clock=FakeClock(), event_listeners=[
        lambda e: checks.append(e) if type(e).__name__ == "ServerHeartbeatStartedEvent" else None])
    with pytest.raises(errors.ServerSelectionError):
        client.admin.command("ping")
    assert 0 < most[0] <= WAVE_LIMIT
    assert client._topology.scan_count == 1 and len(checks) == 2000


@pytest.mark.parametrize("poll", [select.poll, Poll], ids=["poll", "selectors"])
def test_a_wave_checks_each_server_with_poll_or_with_selectors(monkeypatch, poll):
    """Rule: select.poll and its stand-in made on selectors (a platform without poll) both
    carry a wave to the end: every member answers, a refused one fails on its own."""
    from singlemongo.testing import ReplicaSet
    monkeypatch.setattr(wave, "_POLL", poll)
    failed = []
    with ReplicaSet(3) as rs:
        client = MongoClient(rs.uri.replace("mongodb://", "mongodb://127.0.0.1:1,", 1),
                             event_listeners=[lambda e: failed.append(e.connection_id) if type(
                                 e).__name__ == "ServerHeartbeatFailedEvent" else None])
        try:
            client.admin.command("ping")
            servers = client._topology.description.servers
            assert {s.address_text for s in rs.servers} == {
                f"{h}:{p}" for (h, p), sd in servers.items() if sd.is_known}
            assert failed == [("127.0.0.1", 1)]  # refused, on its own
        finally:
            client.close()


def test_a_platform_without_poll_gets_the_selectors_stand_in(monkeypatch):
    """Rule: where select has no poll (Windows), the wave watches its sockets with the stand-in
    made on selectors, with the same event bits, instead of failing to import."""
    try:
        monkeypatch.delattr(select, "poll")
        importlib.reload(wave)
        assert wave._POLL is Poll and (wave.READ, wave.WRITE) == (1, 4)
    finally:
        monkeypatch.undo()
        importlib.reload(wave)
    assert wave._POLL is select.poll and (wave.READ, wave.WRITE) == (select.POLLIN,
                                                                     select.POLLOUT)


def _random_td(rng, n):
    types = [ServerType.UNKNOWN, ServerType.RS_SECONDARY, ServerType.RS_ARBITER,
             ServerType.RS_GHOST, ServerType.POSSIBLE_PRIMARY, ServerType.RS_OTHER]
    servers = {}
    for i in range(n):
        address = (f"h{i}", 27017)
        kind = rng.choice(types)
        checked = None if rng.random() < 0.3 else float(rng.randint(0, 20))
        servers[address] = ServerDescription(address, kind, last_update_time=checked,
                                             error_is_network=kind is ServerType.UNKNOWN)
    return TopologyDescription.from_servers(
        __import__("singlemongo.sdam", fromlist=["TopologyType"]).TopologyType.REPLICA_SET_NO_PRIMARY,
        servers.values(), "rs", tuple(servers))


@pytest.mark.parametrize("seed", range(20))
def test_the_heap_plan_checks_in_the_pure_planners_order(seed):
    """ScanPlan (n log n) picks what plan_next_check (the spec's pseudocode, O(n) a step) picks,
    step by step, as the scan marks servers checked."""
    rng = random.Random(seed)
    td = _random_td(rng, rng.randint(1, 40))
    plan, checked = ScanPlan(td, 25.0, random_key=lambda: 0.5), set()
    for _ in range(len(td.servers) + 1):
        expected = plan_next_check(td, checked, 25.0)
        assert plan.next(td, checked) == expected
        if expected is None:
            break
        checked.add(expected)


def _random_hello(rng, names, i):
    """A reply a member of a set in flux may give: a primary, a secondary or a ghost, each
    announcing some of ``names`` (a few new), or a failure ({})."""
    kind = rng.choice(["primary", "secondary", "secondary", "ghost", "failure"])
    if kind == "failure":
        return {}
    hosts = sorted(rng.sample(names, rng.randint(1, len(names))))
    if kind == "ghost":
        return {"ok": 1, "isreplicaset": True, "minWireVersion": 0, "maxWireVersion": 21}
    hello = {"ok": 1, "setName": "rs", "hosts": hosts, "minWireVersion": 0,
             "maxWireVersion": 21, "isWritablePrimary": kind == "primary",
             "secondary": kind == "secondary", "me": names[i] if i < len(names) else None}
    if kind == "secondary" and rng.random() < 0.7:
        hello["primary"] = rng.choice(names)
    if kind == "primary":
        hello["setVersion"], hello["electionId"] = 1, ObjectId(f"{i + 1:024x}")
    return {k: v for k, v in hello.items() if v is not None}


@pytest.mark.parametrize("seed", range(40))
def test_the_heap_plan_follows_the_pure_planner_through_replies(seed):
    """Rule: ScanPlan picks what the spec's pseudocode picks while replies change the set:
    announced hosts appear, a server announced as primary becomes a PossiblePrimary (checked
    next), servers are removed and announced again (checked in this scan, even one that was
    in its cooldown: before, ScanPlan never checked such a server again). Its shortcuts
    (issue 59: an announced list already covered is known by identity; a primary is pushed
    again only when its key changed) must not change a pick. Ties are any of the servers
    the pseudocode finds equally good."""
    from singlemongo.sdam.address import parse_announced
    rng = random.Random(seed)
    names = [f"h{i}.example.com:27017" for i in range(rng.randint(4, 30))]
    seeds = [parse_announced(n) for n in rng.sample(names, rng.randint(1, 4))]
    # Some seeds failed on the network 3 s before the scan: in their cooldown until a reply
    # removes them and another announces them again, as new Unknowns.
    td = TopologyDescription.from_servers(TopologyType.REPLICA_SET_NO_PRIMARY, [
        ServerDescription(a, error="refused", error_is_network=True, last_update_time=22.0)
        if rng.random() < 0.4 else ServerDescription(a) for a in seeds], "rs", seeds)
    plan, checked = ScanPlan(td, 25.0, random_key=lambda: 0.5), set()
    for _ in range(3 * len(names)):
        ties = plan_next_check(td, checked, 25.0, choose=tuple)
        if ties is not None and isinstance(ties[0], str):  # a primary: no tie to break
            ties = (ties,)
        pick = plan.next(td, checked)
        assert pick == ties if ties is None else pick in ties
        if pick is None:
            break
        checked.add(pick)
        index = names.index(f"{pick[0]}:{pick[1]}")
        sd = ServerDescription.from_hello(pick, _random_hello(rng, names, index), 0.01,
                                          float(len(checked)))
        td = td.update(sd)
        plan.announced(td, td.servers.get(pick, sd))  # as check_server returns it


def test_a_server_dropped_in_its_cooldown_then_announced_anew_is_checked_in_the_scan():
    """Rule (scanning order, as the spec's pseudocode picks): a server in its cooldown is
    skipped, but once a reply removes it and another announces it again it is a new Unknown,
    checked before the scan ends. Before, ScanPlan kept it as already planned and never
    checked it."""
    from singlemongo.sdam.address import parse_announced
    a, b, c = (parse_announced(f"{n}:27017") for n in "abc")
    td = TopologyDescription.from_servers(TopologyType.REPLICA_SET_NO_PRIMARY, [
        ServerDescription(a, error="command failed", last_update_time=23.0),
        ServerDescription(b, error="refused", error_is_network=True, last_update_time=22.0)],
        "rs", (a, b))
    plan, checked, picks = ScanPlan(td, 25.0, random_key=lambda: 0.5), set(), []

    def primary(me, hosts, election):
        return {"ok": 1, "isWritablePrimary": True, "setName": "rs", "me": me,
                "hosts": hosts, "setVersion": 1, "electionId": ObjectId(f"{election:024x}"),
                "minWireVersion": 0, "maxWireVersion": 21}
    replies = {a: primary("a:27017", ["a:27017", "c:27017"], 1),  # b removed
               c: primary("c:27017", ["a:27017", "b:27017", "c:27017"], 2)}  # b anew
    while (pick := plan.next(td, checked)) is not None:
        assert pick == plan_next_check(td, checked, 25.0)
        picks.append(pick)
        checked.add(pick)
        sd = ServerDescription.from_hello(pick, replies.get(pick, {}), 0.01, 30.0)
        td = td.update(sd)
        plan.announced(td, td.servers.get(pick, sd))
    assert picks == [a, c, b]


def test_a_scan_that_grows_past_a_few_servers_goes_on_with_the_heap_plan(monkeypatch):
    """Rule (scanning order: servers discovered during a scan are checked before it
    completes): a scan planned by the spec's pseudocode from two seeds, whose primary announces
    20 members, hands over to ScanPlan (more than SMALL_SCAN servers) and checks every member
    exactly once, in the same scan."""
    from singlemongo.engine.scanner import SMALL_SCAN
    from singlemongo.testing import ReplicaSet
    plans = []
    monkeypatch.setattr(ScanPlan, "__init__", lambda self, *args, init=ScanPlan.__init__: (
        plans.append(self), init(self, *args))[1])
    with ReplicaSet(20) as rs:
        assert len(rs.servers) > SMALL_SCAN
        seeds = ",".join(s.address_text for s in rs.servers[:2])
        checks = []
        client = MongoClient(f"mongodb://{seeds}/?replicaSet={rs.name}", clock=FakeClock(),
                             event_listeners=[lambda e: checks.append(e.connection_id) if
                                              type(e).__name__ == "ServerHeartbeatStartedEvent"
                                              else None])
        client.admin.command("ping")
        servers = client.topology_description.servers
        assert len(servers) == 20 and client._topology.scan_count == 1
        assert len(set(map(id, plans))) == 1  # one handover, in the middle of the scan
        assert sorted(checks) == sorted(servers) and len(set(checks)) == 20
        assert all(sd.server_type is not ServerType.UNKNOWN for sd in servers.values())
        client.close()
