"""The seed rules on failure paths (issue 11), each through the public API against the simulated
deployment. Every test failed on the code before the fix; its docstring names the rule."""
import threading
import time

import pytest
from bson import Timestamp

from singlemongo import errors
from singlemongo.client import MongoClient
from singlemongo.clock import Clock, FakeClock
from singlemongo.sdam import ServerType
from singlemongo.monitoring import sdam_events as m
from singlemongo.testing import LoadBalancer, ReplicaSet, Standalone

from .conftest import server_context
from .util import eventually, selection_records

HELLOS = ("hello", "isMaster", "ismaster")  # the legacy hello, as counted and as sent
OVERLOAD = ("SystemOverloadedError", "RetryableError")


def _types(client, rs):
    td = client.topology_description
    return [td.servers[s.address].server_type for s in rs.servers]


# ----- server monitoring and SDAM -----------------------------------------------------------

@pytest.mark.parametrize("executor", ["concurrent", "sequential"])
def test_a_restarted_primary_is_rechecked_at_once_on_a_new_connection(mongo_replica_set,
                                                                       fake_clock, executor):
    """Server monitoring, "Network or command error during server check" step 4: a known
    server's failed check is retried once, at once, on a new connection. Before, the wave
    dropped the socket before deciding, so a restarted primary went Unknown (5 s cooldown) and
    the next write failed with ReplicaSetNoPrimary."""
    rs = mongo_replica_set
    client = MongoClient(rs.uri, clock=fake_clock, scan_executor=executor)
    client.test.c.insert_one({"x": 1})
    before = rs.servers[0].connections
    rs.servers[0].stop()
    rs.servers[0].start()  # old sockets dead, new connections accepted
    fake_clock.advance(61)
    client.test.c.insert_one({"x": 2})
    assert _types(client, rs)[0] is ServerType.RS_PRIMARY
    assert rs.servers[0].connections == before + 1  # the immediate re-check's connection
    client.close()


def test_every_idle_socket_reset_does_not_turn_the_set_unknown(mongo_replica_set, fake_clock):
    """The same rule for the whole set: every member restarted between scans stays known (one
    scan, each member re-checked once on a new connection)."""
    rs = mongo_replica_set
    client = MongoClient(rs.uri, clock=fake_clock)
    client.admin.command("ping")
    for server in rs.servers:
        server.stop()
        server.start()
    fake_clock.advance(61)
    client.admin.command("ping")
    assert ServerType.UNKNOWN not in _types(client, rs)
    assert client._topology.scan_count == 2


@pytest.mark.parametrize("executor", ["concurrent", "sequential"])
def test_a_known_server_without_an_open_socket_is_also_retried_once(mongo_replica_set,
                                                                     fake_clock, executor):
    """The retry-once rule when the known server has no open socket (a socket timeout closed
    it): its first new connection is dropped during the handshake, the immediate retry
    succeeds. Before, neither executor retried: the primary went Unknown."""
    rs = mongo_replica_set
    client = MongoClient(rs.uri, clock=fake_clock, scan_executor=executor)
    client.admin.command("ping")
    before = rs.servers[0].connections
    client._topology.close_connection(rs.servers[0].address)
    rs.servers[0].fail("*", action="close", times=1, commands=HELLOS)
    fake_clock.advance(61)
    client.test.c.insert_one({"x": 1})
    assert _types(client, rs)[0] is ServerType.RS_PRIMARY
    assert rs.servers[0].connections == before + 2  # dropped in its handshake, then the retry


@pytest.mark.parametrize("code,message", [(11602, ""), (13436, ""), (189, ""), (91, ""),
                                          (0, "node is recovering"),
                                          (0, "not master or secondary; cannot currently read")])
def test_node_is_recovering_requests_a_scan(mongo_replica_set, fake_clock, code, message):
    """SDAM summary, "Error handling": a single-threaded client MUST request a scan after "node
    is recovering" and "shutting down" errors. Before, 11602, 13436, 189 and the recovering
    messages left the topology un-stale."""
    rs = mongo_replica_set
    client = MongoClient(rs.uri, clock=fake_clock, retryReads=False)
    client.test.c.find_one()
    rs.servers[0].fail("find", code=code, errmsg=message)
    # PyMongo's rule: a code decides; only a reply without one is judged by its message.
    with pytest.raises(errors.NotPrimaryError if code else errors.OperationFailure):
        client.test.c.find_one()
    assert client._topology.stale
    assert _types(client, rs)[0] is ServerType.UNKNOWN


def test_a_hello_that_times_out_on_a_new_connection_is_a_failed_check(mongo_standalone,
                                                                      fake_clock):
    """A check that times out while opening a connection marks the server Unknown with its
    cooldown (server monitoring: a failed handshake is a failed check). Before, the driver
    labelled the timeout an overload error and retried it five times with backoff: six full
    connectTimeoutMS waits for a server that hangs."""
    server = mongo_standalone.servers[0]
    client = MongoClient(mongo_standalone.uri, clock=fake_clock, connectTimeoutMS=200)
    client.admin.command("ping")
    client._topology.close_connection(server.address)
    server.fail("*", action="hang", times=None, commands=HELLOS)
    started = time.monotonic()
    with pytest.raises(errors.SingleMongoError) as info:
        client.admin.command("ping")
    assert time.monotonic() - started < 1.0  # one connectTimeoutMS, not six
    assert sum(server.commands[h] for h in HELLOS) == 2  # the handshake before, and this one
    assert "SystemOverloadedError" not in getattr(info.value, "error_labels", ())
    sd = client.topology_description.servers[server.address]
    assert sd.server_type is ServerType.UNKNOWN and sd.error_is_network
    assert [s for s in fake_clock.sleeps if s not in (0.5,)] == []  # no backoff


def test_a_connection_closed_during_the_handshake_is_overload_and_bounded(mongo_standalone,
                                                                        fake_clock):
    """Client backpressure: a connection the server closes before the handshake completes is
    an overload error, retried with backoff, and bounded: at most MAX_ATTEMPTS retries and
    the backoff the token bucket allows (at most 3.1 s); the server stays known."""
    server = mongo_standalone.servers[0]
    client = MongoClient(mongo_standalone.uri, clock=fake_clock)
    client.admin.command("ping")
    client._topology.close_connection(server.address)
    server.fail("*", action="close", times=None, commands=HELLOS)
    with pytest.raises(errors.ConnectionFailure) as info:
        client.admin.command("ping")
    assert info.value.has_error_label("SystemOverloadedError")
    assert sum(fake_clock.sleeps) <= 3.1 and len(fake_clock.sleeps) == 5
    assert client.topology_description.servers[server.address].server_type is \
        ServerType.STANDALONE


class _TickingClock(FakeClock):
    """A fake clock that moves ``tick`` seconds whenever a server answers a hello."""


def test_cooldown_is_measured_from_the_scan_start(mongo_replica_set):
    """Scanning order: beforeCoolDown = scanStartTime - cooldownMS. A server whose cooldown ends
    while a scan runs is not checked in that scan. Before, the planner used the current time."""
    rs = mongo_replica_set
    clock = FakeClock()
    rs.servers[2].stop()
    client = MongoClient(rs.uri, clock=clock)
    client.admin.command("ping")  # scan 1: member 2 fails, cooldown until t0 + 5 s
    clock.advance(4.9)
    for server in rs.servers[:2]:
        server.before_reply = lambda srv, name: clock.advance(0.3) if name in HELLOS else None
    client._topology.mark_stale("test")
    client.admin.command("ping")  # scan 2 starts at t0 + 4.9 and ends after t0 + 5
    checked = [a for n, a, *_ in client._topology.scanner.history if n == 2]
    assert rs.servers[2].address not in checked


def test_every_legacy_hello_check_carries_hello_ok(fake_clock):
    """checkServer pseudocode: every legacy hello carries helloOk: true, so a server that
    learns to speak hello is used with hello. Before, only the handshake did."""
    with Standalone(hello_ok=False) as standalone:
        client = MongoClient(standalone.uri, clock=fake_clock)
        client.admin.command("ping")
        fake_clock.advance(61)
        client.admin.command("ping")
        checks = [c for c in standalone.servers[0].command_log if "ismaster" in c]
        assert len(checks) == 2 and all(c.get("helloOk") is True for c in checks)


def test_every_heartbeat_in_a_wave_ends_and_lasts_the_round_trip():
    """SDAM monitoring: every ServerHeartbeatStartedEvent has its Succeeded or Failed event,
    and a duration is the real round trip. Before, the wave published Started for servers an
    earlier reply removed and never ended them, and durations were about 0 ms."""
    with ReplicaSet(3) as rs, Standalone() as stranger:
        for server in rs.servers:
            server.latency_s = 0.02
        events = []
        uri = rs.uri.replace("/?", f",{stranger.servers[0].address_text}/?")
        client = MongoClient(uri, clock=Clock(), event_listeners=[events.append])
        client.admin.command("ping")
        started = [e.connection_id for e in events if isinstance(e, m.ServerHeartbeatStartedEvent)]
        ended = [e for e in events if isinstance(e, (m.ServerHeartbeatSucceededEvent,
                                                     m.ServerHeartbeatFailedEvent))]
        assert sorted(started) == sorted(e.connection_id for e in ended)
        member_durations = [e.duration for e in ended if e.connection_id != stranger.servers[0].address]
        assert all(d >= 0.02 for d in member_durations)
        assert stranger.servers[0].address not in client.topology_description.servers
        client.close()


def test_a_server_removed_by_an_earlier_reply_gets_no_further_work():
    """A server that an earlier reply of the same scan removed gets no retry, connection or
    hello afterwards (scanning order: removed servers are not checked)."""
    with ReplicaSet(3) as rs, Standalone() as stranger:
        stranger_server = stranger.servers[0]
        uri = rs.uri.replace("/?", f",{stranger_server.address_text}/?")
        client = MongoClient(uri, clock=FakeClock())
        stranger_server.fail("*", action="close", times=None, commands=HELLOS)
        client.admin.command("ping")
        assert stranger_server.connections == 1  # the wave's one attempt, not retried


def test_a_tls_deployment_is_scanned_in_one_wave(certs):
    """TLS handshakes run on the wave's poll loop: a cold scan of a TLS replica set checks every
    member at once. Before, TLS fell back to one member after another (410 ms instead of 203 ms
    at 100 ms per member)."""
    with ReplicaSet(3, tls_context=server_context(certs)) as rs:
        arrived, all_in, in_vain = set(), threading.Event(), []

        def gate(server, name):  # each hello is answered once all three have arrived
            if name in HELLOS:
                arrived.add(server.port)
                if len(arrived) == 3:
                    all_in.set()
                if not all_in.wait(1.0):
                    in_vain.append(server.port)
        for server in rs.servers:
            server.before_reply = gate
        uri = rs.uri.replace("tlsInsecure=true", f"tlsCAFile={certs / 'ca.pem'}")
        client = MongoClient(uri, clock=FakeClock())
        client.admin.command("ping")
        assert all_in.is_set() and in_vain == []  # sequentially, the first hello waits in vain
        assert ServerType.UNKNOWN not in _types(client, rs)
        client.close()


# ----- server selection -----------------------------------------------------------------------

def test_the_generic_command_is_a_read_on_a_direct_connection(mongo_replica_set, fake_clock):
    """Server selection, "Use of read preferences with commands": the generic command is a read
    with primary read preference; to a single direct server it carries $readPreference
    primaryPreferred, so a secondary answers. Before, it was sent as a write, without it."""
    secondary = mongo_replica_set.servers[1]
    client = MongoClient(f"mongodb://{secondary.address_text}/?directConnection=true",
                         clock=fake_clock)
    assert client.test.command("count", "c")["ok"] == 1
    sent = [c for c in secondary.command_log if "count" in c][-1]
    assert sent["$readPreference"] == {"mode": "primaryPreferred"}


def test_a_failed_generic_command_selection_says_read(mongo_replica_set, fake_clock):
    """The same rule in the error: no primary means no server for a read with read preference
    primary. Before, the message said "write"."""
    mongo_replica_set.step_down()
    client = MongoClient(mongo_replica_set.uri, clock=fake_clock)
    with pytest.raises(errors.ServerSelectionError) as info:
        client.admin.command("ping")
    assert "No suitable server for read with read preference primary" in str(info.value)


def test_selection_log_failure_field_does_not_repeat_the_topology(mongo_replica_set, fake_clock,
                                                                  caplog):
    """Server selection, "Logging": the failure field is the error, the topology description has
    its own field. Before, the failure repeated every server's line."""
    mongo_replica_set.step_down()
    client = MongoClient(mongo_replica_set.uri, clock=fake_clock)

    def fail():
        with pytest.raises(errors.ServerSelectionError):
            client.test.c.insert_one({"x": 1})
    failed = [r for r in selection_records(caplog, fail)
              if r["message"] == "Server selection failed"][0]
    assert "RSSecondary" not in failed["failure"] and "\n" not in failed["failure"]
    assert "RSSecondary" in failed["topologyDescription"]


def test_selection_log_names_a_custom_selector_and_a_hedge(mongo_replica_set, fake_clock, caplog):
    """The selector field shows everything that selects: a custom server_selector and a hedged
    read preference. Before, both were missing from it."""
    from singlemongo.selection import ReadPreference

    def keep_all(servers):
        return servers
    client = MongoClient(mongo_replica_set.uri, clock=fake_clock, server_selector=keep_all)
    hedged = ReadPreference("secondaryPreferred", hedge={"enabled": True})
    records = selection_records(
        caplog, lambda: client.test.c.find_one({}, read_preference=hedged))
    selector = records[0]["selector"]
    assert "keep_all" in selector and "hedge" in selector


# ----- load balancers -------------------------------------------------------------------------

def test_a_load_balancer_is_greeted_with_an_op_msg_hello(fake_clock):
    """Handshake spec: in load-balanced mode the handshake is an OP_MSG hello (a load balancer
    may not answer OP_QUERY). Before, a balancer that answers only OP_MSG never replied."""
    with LoadBalancer(op_msg_only=True) as lb:
        client = MongoClient(lb.uri, clock=fake_clock, connectTimeoutMS=500)
        assert client.admin.command("ping")["ok"] == 1
        assert lb.servers[0].commands["hello"] == 1
        client.close()


def test_closing_a_load_balanced_client_emits_server_then_topology_closed(mongo_load_balanced,
                                                                         fake_clock):
    """Load balancer spec, "Monitoring": closing emits exactly ServerClosedEvent then
    TopologyClosedEvent. Before, a TopologyDescriptionChangedEvent came between them."""
    events = []
    client = MongoClient(mongo_load_balanced.uri, clock=fake_clock,
                         event_listeners=[events.append])
    client.admin.command("ping")
    del events[:]
    client.close()
    sdam = [type(e).__name__ for e in events if type(e).__name__.startswith(("Server", "Topology"))]
    assert sdam == ["ServerClosedEvent", "TopologyClosedEvent"]


def test_a_client_closed_before_any_operation_publishes_nothing(mongo_replica_set, fake_clock):
    """The decision for a client closed before any operation: opening events come with the
    first selection (no I/O in a constructor), so a client that never opened publishes no
    closing events either: the listener sees both or neither. (This held before; the test
    guards it.)"""
    events = []
    client = MongoClient(mongo_replica_set.uri, clock=fake_clock, event_listeners=[events.append])
    client.close()
    assert events == []


# ----- client backpressure --------------------------------------------------------------------

def test_get_more_is_retried_on_overload(mongo_replica_set, make_client, fake_clock):
    """Client backpressure: every command is retried on RetryableError, getMore named. Before,
    a getMore failed at the first overload error."""
    coll = make_client(mongo_replica_set).test.c
    coll.insert_many([{"i": i} for i in range(5)])
    mongo_replica_set.servers[0].fail("getMore", code=462, times=2, labels=OVERLOAD)
    assert [d["i"] for d in coll.find({}, batch_size=2, sort=[("i", 1)])] == list(range(5))
    assert mongo_replica_set.servers[0].commands["getMore"] == 4
    assert len(fake_clock.sleeps) == 2  # a backoff before each retry


def test_after_the_last_failed_get_more_the_cursor_is_killed(mongo_replica_set, make_client):
    coll = make_client(mongo_replica_set).test.c
    coll.insert_many([{"i": i} for i in range(5)])
    server = mongo_replica_set.servers[0]
    server.fail("getMore", code=462, times=None, labels=OVERLOAD)
    cursor = coll.find({}, batch_size=2)
    next(cursor), next(cursor)
    with pytest.raises(errors.OperationFailure):
        next(cursor)
    assert server.commands["getMore"] == 6 and server.commands["killCursors"] == 1
    assert not cursor.alive and mongo_replica_set.store.cursors == {}


def test_a_retried_writes_network_error_carries_the_retryable_write_label(mongo_replica_set,
                                                                        make_client):
    """Retryable writes, "Determining Retryable Errors": when retries stop on a network error,
    the error the user sees carries RetryableWriteError. Before, it had no label."""
    coll = make_client(mongo_replica_set).test.c
    mongo_replica_set.servers[0].fail("insert", action="close", times=2)
    with pytest.raises(errors.ConnectionFailure) as info:
        coll.insert_one({"x": 1})
    assert info.value.has_error_label("RetryableWriteError")


# ----- the wire -------------------------------------------------------------------------------

def test_w0_writes_are_unacknowledged(mongo_replica_set, fake_clock):
    """Write concern w: 0: OP_MSG with moreToCome, no reply read, no txnNumber, never retried,
    acknowledged=False. Before, the driver waited for a reply and sent a txnNumber."""
    client = MongoClient(mongo_replica_set.uri, clock=fake_clock, w=0)
    primary = mongo_replica_set.servers[0]
    result = client.test.c.insert_one({"x": 1})
    assert result.acknowledged is False and result.inserted_id is not None
    assert client.test.c.update_one({"x": 1}, {"$set": {"y": 1}}).acknowledged is False
    assert client.test.c.delete_one({"x": 2}).acknowledged is False
    writes = lambda: [c for c in primary.unanswered
                      if next(iter(c)) in ("insert", "update", "delete")]
    assert eventually(lambda: len(writes()) == 3)  # nothing to wait for: no reply comes
    assert all("txnNumber" not in c for c in writes())
    primary.fail("insert", action="close")
    client.test.c.insert_one({"x": 3})  # no reply is read, so nothing fails and nothing retries
    assert eventually(lambda: primary.commands["insert"] == 2)
    assert primary.commands["insert"] == 2


def test_cluster_time_from_the_handshake_is_gossiped_on_the_first_command(mongo_replica_set,
                                                                        fake_clock):
    """Sessions, "Gossipping the cluster time": $clusterTime from any reply, the handshake's
    included, is sent on the next command. Before, the first command carried none."""
    client = MongoClient(mongo_replica_set.uri, clock=fake_clock)
    client.test.c.find_one()
    find = [c for c in mongo_replica_set.servers[0].command_log if "find" in c][0]
    assert isinstance(find.get("$clusterTime", {}).get("clusterTime"), Timestamp)


def test_every_reply_of_a_scan_is_gossiped_an_errors_too(mongo_replica_set, fake_clock):
    """Sessions, "Gossipping the cluster time": the $clusterTime of every hello a scan reads
    is compared with the newest seen, whether the server answered ok or with an error, and
    a wave's replies are each compared where the scanner applies them (not when read)."""
    newest = Timestamp(4_000_000_000, 7)
    mongo_replica_set.servers[1].hello_extra = {
        "ok": 0, "code": 91, "errmsg": "shutting down",
        "$clusterTime": {"clusterTime": newest, "signature": {"hash": b"\x00" * 20,
                                                               "keyId": 0}}}
    client = MongoClient(mongo_replica_set.uri, clock=fake_clock)
    client.test.c.find_one()
    find = [c for c in mongo_replica_set.servers[0].command_log if "find" in c][0]
    assert find["$clusterTime"]["clusterTime"] == newest
    client.close()


def test_a_negative_limit_returns_at_most_that_many_documents(mongo_replica_set, make_client):
    """find(limit=-N) returns at most N documents even from a server that ignores singleBatch.
    (The cursor already enforced it; the test guards it.)"""
    coll = make_client(mongo_replica_set).test.c
    coll.insert_many([{"i": i} for i in range(5)])
    original = mongo_replica_set.commands["find"]
    mongo_replica_set.commands["find"] = lambda server, cmd, state: original(
        server, {k: v for k, v in cmd.items() if k not in ("singleBatch", "limit")}, state)
    assert len(list(coll.find({}, limit=-2))) == 2
    assert len(list(coll.find({}, limit=-2, batch_size=1))) == 2


def test_a_legacy_query_modifier_filter_is_unwrapped(mongo_replica_set, make_client):
    """A {"$query": ..., "$orderby": ...} filter is unwrapped as PyMongo does, never sent as a
    literal filter (which matches nothing)."""
    coll = make_client(mongo_replica_set).test.c
    coll.insert_many([{"i": i} for i in range(5)])
    docs = list(coll.find({"$query": {"i": {"$gt": 1}}, "$orderby": {"i": -1}}))
    assert [d["i"] for d in docs] == [4, 3, 2]
    sent = [c for c in mongo_replica_set.servers[0].command_log if "find" in c][-1]
    assert sent["filter"] == {"i": {"$gt": 1}} and sent["sort"] == {"i": -1}


def test_each_hello_sets_the_connections_limits_again():
    """Rule: a connection's limits are what its latest hello announced (the defaults where
    it announces none or a wrong type), whatever the hello before said: a hello announcing
    the defaults keeps them without reading them again, and brings a connection back to
    them after other values."""
    from singlemongo.engine.connection import Connection
    defaults = {"maxBsonObjectSize": 16 * 1024 * 1024, "maxMessageSizeBytes": 48_000_000,
                "maxWriteBatchSize": 100_000}
    conn = Connection(("a", 1), None, 0, 0.0)
    sizes = lambda: (conn.write_limits, conn.max_message_size, conn.max_reply_size)
    conn.set_hello(dict(defaults))
    assert sizes() == ((16 * 1024 * 1024, 48_000_000, 100_000), 48_000_000, 48_000_000)
    conn.set_hello(dict(defaults, maxMessageSizeBytes=1000, maxWriteBatchSize=3))
    assert sizes() == ((16 * 1024 * 1024, 1000, 3), 1000, 1000)
    conn.set_hello(dict(defaults))
    assert sizes() == ((16 * 1024 * 1024, 48_000_000, 100_000), 48_000_000, 48_000_000)
    conn.set_hello(dict(defaults, maxWriteBatchSize=3.0))  # a float is no limit: default
    assert sizes()[0] == (16 * 1024 * 1024, 48_000_000, 100_000)
    conn.set_hello({})
    assert sizes() == ((16 * 1024 * 1024, 48_000_000, 100_000), 48_000_000, 48_000_000)


def test_a_brand_new_client_respects_the_servers_limits(mongo_standalone, fake_clock):
    """insert_one/insert_many use the selected server's maxBsonObjectSize, maxMessageSizeBytes
    and maxWriteBatchSize, even on a brand-new client, and measure a document after _id is
    added. Before, a new client used the defaults (16 MB) until its first handshake."""
    server = mongo_standalone.servers[0]
    server.limits = {"maxBsonObjectSize": 1000, "maxWriteBatchSize": 3}
    client = MongoClient(mongo_standalone.uri, clock=fake_clock)
    with pytest.raises(errors.DocumentTooLarge, match="up to 1000 bytes .its maxBsonObjectSize"):
        client.test.c.insert_one({"s": "x" * 2000})
    assert server.commands["insert"] == 0
    fresh = MongoClient(mongo_standalone.uri, clock=fake_clock)
    fresh.test.c.insert_many([{"i": i} for i in range(10)])
    assert server.commands["insert"] == 4
    just_under = {"s": "x" * (1000 - 4 - 4 - 2 - 1 - 1)}  # 1000 bytes without _id
    with pytest.raises(errors.InvalidDocument):
        fresh.test.c.insert_one(just_under)  # 1017 bytes with its ObjectId
