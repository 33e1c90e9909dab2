"""SDAM stays linear in the member count (issue 20): applying one scan's hellos parses each
announced host once and walks the servers for derived facts only when they are read."""
from bson import ObjectId

from singlemongo.sdam import address, topology_description
from singlemongo.sdam.address import parse_announced
from singlemongo.sdam.server_description import ServerDescription
from singlemongo.sdam.server_description import ServerType, TopologyType
from singlemongo.sdam.topology_description import TopologyDescription

N = 50
HOSTS = [f"h{i}.example.com:27017" for i in range(N)]


def _hello(i):
    reply = {"ok": 1, "isWritablePrimary": i == 0, "secondary": i != 0, "setName": "rs",
             "hosts": HOSTS, "me": HOSTS[i], "primary": HOSTS[0], "maxWireVersion": 21,
             "logicalSessionTimeoutMinutes": 30, "setVersion": 1}
    if i == 0:
        reply["electionId"] = ObjectId("000000000000000000000001")
    return reply


def _scan():
    td = TopologyDescription.initial([parse_announced(HOSTS[0])], "rs")
    for i in range(N):
        td = td.update(ServerDescription.from_hello(parse_announced(HOSTS[i]), _hello(i), 0.001))
    return td


def _counting(monkeypatch, module, name):
    calls = []
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a: calls.append(a) or real(*a))
    return calls


def test_each_announced_host_is_parsed_once_per_scan(monkeypatch):
    """Rule: the hosts every member announces are validated once each, not once per reply.
    Before: 50 replies x 50 hosts = 2,500 validations, most of a 50-member scan's 14 ms."""
    monkeypatch.setattr(address, "_ANNOUNCED", {})
    parses = _counting(monkeypatch, address, "_parse_announced")
    td = _scan()
    assert td.topology_type is TopologyType.REPLICA_SET_WITH_PRIMARY and len(td.servers) == N
    assert len(parses) == N


def test_each_announced_list_is_read_once_per_scan(monkeypatch):
    """Rule: the hosts list every member announces is read once, not once per reply (a list
    of n hosts read n times is n squared steps, even with each host's parse kept).
    Before: 50 replies x 50 hosts = 2,500 lookups."""
    from singlemongo.sdam import server_description
    monkeypatch.setattr(server_description, "_LISTS", {})
    monkeypatch.setattr(server_description, "_last_list", (None, None))
    lookups = _counting(monkeypatch, server_description, "_announced")
    td = _scan()
    assert td.topology_type is TopologyType.REPLICA_SET_WITH_PRIMARY and len(td.servers) == N
    # the list once; each reply's own "me" and "primary"
    assert len(lookups) == N + 2 * N


def test_an_invalid_announced_host_is_dropped_from_every_reply_that_lists_it(monkeypatch):
    """Rule: a list read once still says its bad entries for every reply that holds it."""
    from singlemongo.sdam import server_description
    monkeypatch.setattr(server_description, "_LISTS", {})
    hello = dict(_hello(1), hosts=HOSTS[:2] + ["bad host:1"])
    for _ in range(2):
        sd = ServerDescription.from_hello(parse_announced(HOSTS[1]), hello, 0.001)
        assert sd.hosts == tuple(parse_announced(h) for h in HOSTS[:2])
        assert len(sd.dropped_hosts) == 1 and "bad host" in sd.dropped_hosts[0]


def test_derived_facts_are_computed_when_read_not_at_every_update(monkeypatch):
    """Rule: wire compatibility and the session timeout walk all servers once, when read.
    Before: every one of a scan's 50 updates walked all 50 servers for both."""
    walks = _counting(monkeypatch, topology_description, "_compatibility")
    td = _scan()
    assert walks == []
    assert td.compatible and td.logical_session_timeout_minutes == 30
    assert td.compatible and len(walks) == 1


def test_a_list_like_the_last_one_read_but_for_a_non_string_is_refused():
    """Rule: a hosts list equal to the last one read skips the per-entry type test (issue
    59), so only an equal list may skip it: one that differs by a value of another type
    (5, b"h:1", a document) still makes the server Unknown, naming the field."""
    good = _hello(1)
    ServerDescription.from_hello(parse_announced(HOSTS[1]), good, 0.001)
    for odd in (5, HOSTS[0].encode(), {"h": HOSTS[0]}):
        hostile = dict(good, hosts=[odd] + good["hosts"][1:])
        sd = ServerDescription.from_hello(parse_announced(HOSTS[1]), hostile, 0.001)
        assert sd.server_type is ServerType.UNKNOWN
        assert "hosts must be a list of host strings" in sd.error
