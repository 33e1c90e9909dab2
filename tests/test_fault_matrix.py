"""The fault-injection matrix (docs/failures.md): each row breaks something on
purpose and checks the error, the attempts, the bound on time, the topology afterwards,
that a write ran at most once unless the retry rules allow a retry, and the recovery."""
import pytest

from singlemongo import errors
from singlemongo.client import MongoClient
from singlemongo.clock import FakeClock
from singlemongo.errors import DNSError
from singlemongo.sdam import TopologyType
from singlemongo.testing import FakeResolver, LoadBalancer, ReplicaSet, Sharded, Standalone

LABELS = ("RetryableWriteError",)


def client_for(dep, **kw):
    clock = FakeClock()
    return MongoClient(dep.uri, clock=clock, **kw), clock


def types(client, dep):
    td = client.topology_description
    return [td.servers[s.address].server_type.value if s.address in td.servers else "absent"
            for s in dep.servers]


# ----- member down before the first scan / connection refused ---------------------------

def test_standalone_down_before_first_scan():
    with Standalone() as s:
        s.servers[0].stop()
        client, clock = client_for(s)
        with pytest.raises(errors.ServerSelectionError, match="could not connect") as info:
            client.admin.command("ping")
        assert "serverSelectionTryOnce=true" in str(info.value) and "Hint:" in str(info.value)
        assert client._topology.scan_count == 1 and clock.sleeps == []  # one scan, no waiting
        s.servers[0].start()
        clock.advance(5)  # past the cooldown
        assert client.admin.command("ping")["ok"] == 1


def test_replica_set_secondary_down_before_first_scan():
    with ReplicaSet(3) as rs:
        rs.servers[2].stop()
        client, clock = client_for(rs)
        client.admin.command("ping")
        assert types(client, rs) == ["RSPrimary", "RSSecondary", "Unknown"]
        rs.servers[2].start()
        clock.advance(60)
        client.admin.command("ping")
        assert types(client, rs) == ["RSPrimary", "RSSecondary", "RSSecondary"]


def test_sharded_mongos_down_uses_the_other():
    with Sharded(2) as sh:
        sh.servers[0].stop()
        client, clock = client_for(sh)
        client.admin.command("ping")
        assert sh.servers[1].commands["ping"] == 1
        assert client.topology_description.topology_type is TopologyType.SHARDED


def test_load_balancer_down():
    with LoadBalancer() as lb:
        lb.servers[0].stop()
        client, clock = client_for(lb)
        with pytest.raises(errors.ConnectionFailure, match="could not connect"):
            client.admin.command("ping")
        lb.servers[0].start()
        assert client.admin.command("ping")["ok"] == 1


# ----- member dies between scans ------------------------------------------------------------

def test_primary_dies_between_scans_write_not_duplicated():
    with ReplicaSet(3) as rs:
        client, clock = client_for(rs)
        client.test.c.insert_one({"n": 0})
        executions = rs.store.executions
        rs.servers[0].stop()
        with pytest.raises(errors.ConnectionFailure):
            client.test.c.insert_one({"n": 1})
        assert rs.store.executions == executions  # the dead primary never ran it
        assert client.topology_description.topology_type is TopologyType.REPLICA_SET_NO_PRIMARY
        rs.elect(1)
        clock.advance(1)
        client.test.c.insert_one({"n": 2})
        assert client.test.c.count_documents({"n": 2}) == 1


# ----- reset mid-reply, hangs -------------------------------------------------------------

def test_reset_mid_reply_standalone_write_is_not_retried():
    with Standalone() as s:
        client, clock = client_for(s)
        client.test.c.insert_one({})
        s.servers[0].fail("insert", action="reset")
        with pytest.raises(errors.ConnectionFailure):
            client.test.c.insert_one({"x": 1})
        assert s.servers[0].commands["insert"] == 2  # sent once: no retry on a standalone
        clock.advance(1)
        assert client.test.c.count_documents({"x": 1}) == 1  # it ran, once


def test_reset_mid_reply_replica_set_write_is_retried_once_and_applied_once():
    with ReplicaSet(3) as rs:
        client, clock = client_for(rs)
        client.test.c.insert_one({})
        rs.servers[0].fail("insert", action="reset")
        client.test.c.insert_one({"x": 1})
        assert rs.servers[0].commands["insert"] == 3 and client.test.c.count_documents({"x": 1}) == 1


def test_hang_trips_socket_timeout_without_marking_unknown():
    with Standalone() as s:
        client, clock = client_for(s, socketTimeoutMS=100)
        client.admin.command("ping")
        s.servers[0].fail("find", action="hang")
        assert client.test.c.find_one() is None  # a read: retried once, on a new connection
        s.servers[0].fail("find", action="hang", times=2)
        with pytest.raises(errors.NetworkTimeout, match="timed out"):
            client.test.c.find_one()
        assert types(client, s) == ["Standalone"]  # a slow server is not a dead one
        assert s.servers[0].commands["find"] == 4 and client.test.c.find_one() is None


def test_hang_in_handshake_trips_connect_timeout():
    with Standalone() as s:
        s.servers[0].fail("isMaster", action="hang")
        client, clock = client_for(s, connectTimeoutMS=150)
        with pytest.raises(errors.ServerSelectionError, match="timed out"):
            client.admin.command("ping")
        assert types(client, s) == ["Unknown"]
        clock.advance(5)
        assert client.admin.command("ping")["ok"] == 1


# ----- state change errors during a write ------------------------------------------------------

@pytest.mark.parametrize("fault,unknown,stale", [
    (dict(code=10107, errmsg="NotWritablePrimary"), True, True),
    (dict(code=13435, errmsg="NotPrimaryNoSecondaryOk"), True, True),
    (dict(code=11602, errmsg="InterruptedDueToReplStateChange"), True, True),
    (dict(code=189, errmsg="PrimarySteppedDown"), True, True),
    (dict(code=91, errmsg="ShutdownInProgress"), True, True),
    (dict(code=0, errmsg="not master"), True, True),
])
def test_stepdown_during_write(fault, unknown, stale):
    with ReplicaSet(3) as rs:
        client, clock = client_for(rs)
        client.test.c.insert_one({})
        gen = client._topology.generations[rs.servers[0].address]
        rs.servers[0].fail("insert", **fault)  # without RetryableWriteError: not retried
        expected = errors.OperationFailure if fault["code"] == 0 else errors.NotPrimaryError
        with pytest.raises(expected, match=fault["errmsg"]):
            client.test.c.insert_one({"x": 1})
        assert (types(client, rs)[0] == "Unknown") is unknown
        assert client._topology.stale is stale
        shutting_down = fault["code"] == 91
        assert client._topology.generations[rs.servers[0].address] == gen + shutting_down
        assert client.test.c.count_documents({"x": 1}) == 0  # never applied
        client.test.c.insert_one({"x": 2})  # recovers
        assert client.test.c.count_documents({"x": 2}) == 1


def test_stepdown_with_retryable_label_is_retried_and_applied_once():
    with ReplicaSet(3) as rs:
        client, clock = client_for(rs)
        client.test.c.insert_one({})
        rs.servers[0].fail("insert", code=10107, errmsg="NotWritablePrimary", labels=LABELS)
        client.test.c.insert_one({"x": 1})
        assert client.test.c.count_documents({"x": 1}) == 1
        assert clock.sleeps == [0.5]  # the retry waited out minHeartbeatFrequencyMS, rescanned


def test_node_recovering_read_is_retried_after_a_rescan():
    """11602 on a read: the server is Unknown, the topology stale (a scan is requested, SDAM
    summary "Error handling"), and the read's one retry waits out the 500 ms minimum interval,
    rescans and succeeds."""
    with ReplicaSet(3) as rs:
        client, clock = client_for(rs)
        client.test.c.insert_one({"a": 1})
        rs.servers[0].fail("find", code=11602, errmsg="InterruptedDueToReplStateChange")
        assert client.test.c.find_one()["a"] == 1
        assert clock.sleeps == [0.5] and client._topology.scan_count == 2


# ----- overload -----------------------------------------------------------------------------

def test_overload_is_retried_with_backoff_and_never_marks_unknown():
    with ReplicaSet(3) as rs:
        client, clock = client_for(rs)
        client.test.c.insert_one({})
        rs.servers[0].fail("insert", code=462, times=2,
                           labels=("SystemOverloadedError", "RetryableError"))
        client.test.c.insert_one({"x": 1})
        assert clock.sleeps == [0.05, 0.1] and types(client, rs)[0] == "RSPrimary"
        assert client.test.c.count_documents({"x": 1}) == 1


# ----- elections ---------------------------------------------------------------------------

def test_election_in_progress_try_once_fails_within_one_scan():
    with ReplicaSet(3) as rs:
        rs.step_down()
        client, clock = client_for(rs)
        with pytest.raises(errors.ServerSelectionError, match="no primary"):
            client.test.c.insert_one({})
        assert client._topology.scan_count == 1 and clock.sleeps == []


def test_election_in_progress_try_once_false_waits_for_the_new_primary():
    with ReplicaSet(3) as rs:
        rs.step_down()
        clock = FakeClock()
        original = clock.sleep

        def sleep(seconds):
            original(seconds)
            if len(clock.sleeps) == 2:
                rs.elect(1)
        clock.sleep = sleep
        client = MongoClient(rs.uri, clock=clock, serverSelectionTryOnce=False,
                             serverSelectionTimeoutMS=5000)
        client.test.c.insert_one({"x": 1})
        assert clock.sleeps == [0.5, 0.5] and rs.servers[1].commands["insert"] == 1


# ----- reconfig, foreign members ----------------------------------------------------------------

def test_reconfig_removes_the_server_in_use():
    with ReplicaSet(3) as rs:
        client, clock = client_for(rs)
        client.test.c.insert_one({})
        client.test.c.find_one(read_preference="secondary")
        rs.remove_member(2)
        clock.advance(60)
        client.test.c.find_one(read_preference="secondary")
        assert types(client, rs) == ["RSPrimary", "RSSecondary", "absent"]
        assert rs.servers[2].address not in client._topology._connections


@pytest.mark.parametrize("index,field", [(2, {"setName": "other"}),
                                         (1, {"me": "elsewhere:27017"})])
def test_member_with_another_set_name_or_me_is_removed(index, field):
    with ReplicaSet(3) as rs:
        original = rs.hello
        rs.hello = lambda server, cmd: dict(original(server, cmd), **field) \
            if server is rs.servers[index] else original(server, cmd)
        client, clock = client_for(rs)
        client.admin.command("ping")
        assert types(client, rs)[index] == "absent"


# ----- load balancer and DNS ----------------------------------------------------------------

def test_load_balancer_without_service_id_has_the_spec_message():
    with LoadBalancer(service_id=False) as lb:
        client, _ = client_for(lb)
        with pytest.raises(errors.ConfigurationError, match="does not support this mode"):
            client.admin.command("ping")


@pytest.mark.parametrize("fail,message", [
    (DNSError("DNS SRV lookup of _mongodb._tcp.x.example.com timed out after 10.0 s"),
     "timed out"),
    (None, "no SRV records"),
])
def test_dns_failure_or_timeout(fail, message):
    client = MongoClient("mongodb+srv://x.example.com", resolver=FakeResolver(fail=fail),
                         clock=FakeClock())
    with pytest.raises(DNSError, match=message):
        client.admin.command("ping")
