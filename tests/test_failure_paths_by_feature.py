"""Failure paths by feature (issue 46's round): what a hostile user and a hostile server found in
change streams and ``singlemongo watch``, GridFS, authentication, compression, exhaust
cursors, the topology cache and load balancers. Each test failed before its fix and names the
rule it guards."""
import pytest

from singlemongo import errors
from singlemongo.client import MongoClient

from .side_by_side.harness import _Recorder
from .util import selection_records


def test_a_gridfs_download_whose_chunk_query_keeps_failing_retries_once(mongo_replica_set):
    """GridFS download, CursorNotFound: the chunks query is started again once where it was,
    then the error is raised, as PyMongo does. Before, every CursorNotFound started it again:
    968 finds, then RecursionError."""
    from singlemongo.gridfs import GridFSBucket
    recorder = _Recorder()
    client = MongoClient(mongo_replica_set.uri, event_listeners=[recorder])
    bucket = GridFSBucket(client.g)
    file_id = bucket.upload_from_stream("f", b"x" * 10, chunk_size_bytes=4)
    for server in mongo_replica_set.servers:
        server.fail("find", code=43, errmsg="cursor id 1 not found", times=None,
                    namespace="g.fs.chunks")
    stream = bucket.open_download_stream(file_id)
    del recorder.commands[:]
    with pytest.raises(errors.CursorNotFound):
        stream.read()
    assert [name for name, _ in recorder.commands].count("find") == 2
    client.close()


def test_an_incompatible_wire_version_logs_server_selection_failed(mongo_standalone,
                                                                    fake_clock, caplog):
    """Server Selection, single-threaded step 5 and "Logging": an invalid topology wire
    version raises, and the "Server selection failed" message is logged with it. Before,
    only "started" was logged."""
    mongo_standalone.servers[0].limits = {"maxWireVersion": 6}
    client = MongoClient(mongo_standalone.uri, clock=fake_clock)
    records = selection_records(caplog, lambda: pytest.raises(
        errors.IncompatibleWireVersionError, client.admin.command, "ping"))
    assert [r["message"] for r in records] == ["Server selection started",
                                               "Server selection failed"]
    assert "requires at least" in records[-1]["failure"]
    client.close()


def test_a_load_balanced_client_ignores_an_application_server_selector(mongo_load_balanced,
                                                                        fake_clock):
    """Load Balancer Support, "Server Selection": the single server in the topology MUST
    always be selected. Before, a ``server_selector`` returning nothing made every operation
    fail in load-balanced mode (PyMongo ignores the selector there)."""
    client = MongoClient(mongo_load_balanced.uri, clock=fake_clock,
                         server_selector=lambda servers: [])
    assert client.admin.command("ping")["ok"] == 1
    client.t.c.insert_one({"_id": 1})
    assert client.t.c.find_one() == {"_id": 1}
    client.close()


def test_load_balanced_mode_does_not_wait_for_a_scan_after_an_error(mongo_load_balanced,
                                                                    fake_clock):
    """Load Balancer Support: a load balancer is never monitored, so there is no scan to
    wait for. Before, the next operation after any error slept 500 ms (minHeartbeatFrequency)
    for a scan this mode never performs."""
    client = MongoClient(mongo_load_balanced.uri, clock=fake_clock, retryWrites=False)
    client.admin.command("ping")
    mongo_load_balanced.servers[0].fail("insert", action="close")
    with pytest.raises(errors.AutoReconnect):
        client.t.c.insert_one({"_id": 1})
    before = fake_clock.monotonic()
    client.t.c.insert_one({"_id": 2})
    assert fake_clock.monotonic() - before < 0.05
    client.close()


def _names(events, start=0):
    return [type(e).__name__ for e in events[start:]]


def _became_unknown(event):
    return type(event).__name__ == "ServerDescriptionChangedEvent" and \
        event.new_description.server_type_name == "Unknown"


def _assert_unknown_then_cleared(after, interrupt):
    """One PoolClearedEvent (with ``interrupt``), after the server became Unknown."""
    cleared = [e for e in after if type(e).__name__ == "PoolClearedEvent"]
    assert len(cleared) == 1 and cleared[0].interrupt_connections is interrupt
    unknown = next(i for i, e in enumerate(after) if _became_unknown(e))
    assert unknown < after.index(cleared[0]), _names(after)


def test_a_check_timeout_clears_the_pool_interrupting_connections_after_unknown(
        mongo_standalone):
    """Server Monitoring, "Network or command error during server check", step 3: a check's
    network timeout marks the server Unknown, then clears its pool with
    interruptInUseConnections=true. Before, the event said false, and it came before the
    server was Unknown (a listener saw PoolClearedEvent while the server was selectable)."""
    from singlemongo.clock import Clock
    events = []
    client = MongoClient(mongo_standalone.uri, clock=Clock(), connectTimeoutMS=200,
                         heartbeatFrequencyMS=500, event_listeners=[events.append])
    client.admin.command("ping")
    mongo_standalone.servers[0].fail("hello", action="hang")
    import time
    time.sleep(0.6)  # a heartbeat is due: the next operation checks the server
    start = len(events)
    client.admin.command("ping")
    _assert_unknown_then_cleared(events[start:], interrupt=True)
    client.close()


def test_an_application_network_error_marks_unknown_before_clearing(mongo_replica_set,
                                                                    fake_clock):
    """Server Monitoring / application errors: the server is marked Unknown, then its pool
    is cleared (interruptInUseConnections=false). Before, PoolClearedEvent came first."""
    events = []
    client = MongoClient(mongo_replica_set.uri, clock=fake_clock, retryReads=False,
                         event_listeners=[events.append])
    client.t.c.find_one()
    mongo_replica_set.primary.fail("find", action="close")
    start = len(events)
    with pytest.raises(errors.AutoReconnect):
        client.t.c.find_one()
    _assert_unknown_then_cleared(events[start:], interrupt=False)
    client.close()


@pytest.mark.parametrize("kind", ["Standalone", "LoadBalancer"])
def test_an_authentication_error_clears_the_pool_before_closing_the_connection(kind,
                                                                               fake_clock):
    """CMAP logging, load balancers ("errors during authentication are processed") and
    SDAM's pool-clear-checkout-error, at this project's specifications revision: check-out
    started, (Unknown,) pool cleared, the connection closed with reason "error", then the
    check-out failed. Before, the pool was cleared last."""
    from singlemongo import testing
    with getattr(testing, kind)(users={"alice": "right-pw"}) as deployment:
        events = []
        uri = deployment.uri.replace("mongodb://", "mongodb://alice:wrong-pw@", 1)
        client = MongoClient(uri, clock=fake_clock, retryWrites=False,
                             event_listeners=[events.append])
        with pytest.raises(errors.OperationFailure):
            client.t.c.insert_one({"_id": 1})
        client.close()
    pool = [e for e in _names(events) if e.startswith(("Connection", "Pool")) and
            e not in ("PoolCreatedEvent", "PoolReadyEvent", "PoolClosedEvent")]
    assert pool[-3:] == ["PoolClearedEvent", "ConnectionClosedEvent",
                         "ConnectionCheckOutFailedEvent"], pool
    closed = next(e for e in events if type(e).__name__ == "ConnectionClosedEvent")
    assert closed.reason == "error"
    if kind == "Standalone":
        names = _names(events)
        assert any(_became_unknown(e) for e in events[:names.index("PoolClearedEvent")])


def test_a_change_stream_resumes_across_an_election_within_server_selection_timeout():
    """Change Streams, "Resume Process": the resume's server selection may take the stream's
    own budget, serverSelectionTimeoutMS. Before, the primary going down while an election
    took 1.5 s ended the stream (``singlemongo watch`` exited 4): the resume's selection
    tried once (serverSelectionTryOnce) and failed. PyMongo's stream waits and continues."""
    import threading

    from singlemongo.testing import ReplicaSet
    with ReplicaSet(3) as rs:
        client = MongoClient(rs.uri, serverSelectionTimeoutMS=10_000)
        coll = client.db.c
        with coll.watch(max_await_time_ms=50) as stream:
            assert stream.try_next() is None
            old = rs.primary
            old.fail("getMore", action="close", times=1)
            rs.step_down()
            timer = threading.Timer(1.5, rs.elect, args=(1,))
            timer.start()
            try:
                changes = [stream.try_next() for _ in range(3)]
            finally:
                timer.join()
            assert stream.alive
            client.db.c.insert_one({"_id": "after"})
            assert next(stream)["documentKey"] == {"_id": "after"}
        assert changes == [None, None, None]
        client.close()


def test_an_endless_exhaust_stream_does_not_block_the_next_operation(mongo_standalone):
    """Issue 46: a server that streams without end blocked every later operation for ever
    while memory grew by 200 MiB in 5 s. The stream's connection is closed when the next
    operation needs the server (tests/test_exhaust_abandoned.py: at once, nothing of it
    read), the operation runs on a new one, and the cursor raises when it reaches the end of
    what it had received."""
    import time
    import tracemalloc

    from bson import Int64

    from singlemongo.cursor import CursorType
    server = mongo_standalone.servers[0]
    real = server.handler

    def endless(srv, name, cmd, state):
        if name == "getMore":
            return {"ok": 1, "cursor": {"id": Int64(7), "ns": "t.c",
                                        "nextBatch": [{"pad": "x" * 10_000}] * 20}}
        return real(srv, name, cmd, state)
    client = MongoClient(mongo_standalone.uri)
    client.t.c.insert_many([{"_id": i} for i in range(5)])
    server.handler = endless
    try:
        cursor = client.t.c.find(cursor_type=CursorType.EXHAUST, batch_size=2)
        next(cursor), next(cursor), next(cursor)  # the stream has begun
        tracemalloc.start()
        started = time.monotonic()
        assert client.t.c.count_documents({}) == 5
        elapsed = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    finally:
        server.handler = real
    assert elapsed < 5 and peak < 100 * 2**20
    with pytest.raises(errors.AutoReconnect, match="exhaust"):
        for _ in cursor:
            pass
    client.close()
