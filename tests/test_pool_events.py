"""Connection pool events (engine/cmap_events.py): the one connection each server has, described as
CMAP describes a pool holding it, for programs that listen (a ConnectionPoolListener).

PyMongo is the oracle: the same program, both drivers, the same simulated deployment, the same
events in the same order. Pool-level events (created, ready, closed) are compared per server
only, as PyMongo's monitor threads publish them whenever their checks finish. Behind a load
balancer, a cursor or a transaction keeps its connection checked out (load balancer spec,
"Connection Pinning"). Before this, only PoolClearedEvent was published."""
import gc
import time

import pymongo
import pytest

import singlemongo
from singlemongo import monitoring
from singlemongo.testing import LoadBalancer, ReplicaSet, Standalone

POOL_LEVEL = ("PoolCreated", "PoolReady", "PoolClosed")


def recorder(driver):
    """Listeners (pool and command events) that append to one list, and the list."""
    seen = []
    pool_methods = [m for m in dir(driver.monitoring.ConnectionPoolListener)
                    if not m.startswith("_")]
    pool = type("Pool", (driver.monitoring.ConnectionPoolListener,), {
        m: (lambda self, event: seen.append(event)) for m in pool_methods})
    commands = type("Commands", (driver.monitoring.CommandListener,), {
        "started": lambda self, event: seen.append(event),
        "succeeded": lambda self, event: None, "failed": lambda self, event: None})
    return [pool(), commands()], seen


def shape(events):
    """(connection-level sequence, pool-level events per server): what both drivers must
    agree on."""
    sequence, per_server = [], {}
    for event in events:
        name = type(event).__name__.replace("Event", "")
        if name in POOL_LEVEL:
            per_server.setdefault(event.address, []).append(name)
        elif name == "CommandStarted":
            sequence.append(event.command_name)
        else:
            sequence.append((name, getattr(event, "reason", "")))
    return sequence, per_server


def fail_once(uri, **data):
    with pymongo.MongoClient(uri) as admin:
        admin.admin.command({"configureFailPoint": "failCommand", "mode": {"times": 1},
                             "data": data})


def plain(coll, uri):
    coll.insert_one({"x": 1})
    coll.find_one()


def cursor(coll, uri):
    coll.insert_many([{"i": i} for i in range(5)])
    assert len(list(coll.find({}, batch_size=2))) == 5  # find and two getMores
    partial = coll.find({}, batch_size=2)
    next(partial)
    partial.close()  # killCursors


def network_error(coll, uri):
    """The find's connection is closed by the server: it is checked in, then closed (CMAP's
    order), the pool cleared; the retry gets a new connection once the pool is ready."""
    coll.insert_one({"x": 1})
    fail_once(uri, failCommands=["find"], closeConnection=True)
    assert coll.find_one()["x"] == 1


def run(driver, deployment, program):
    listeners, seen = recorder(driver)
    client = driver.MongoClient(deployment.uri, event_listeners=listeners)
    client.test.c.drop()
    program(client.test.c, deployment.uri)
    if driver is pymongo:
        _every_member_known(client, len(deployment.servers))
    client.close()
    return shape(seen)


def _every_member_known(client, members, timeout_s=10.0):
    """Wait (bounded) until PyMongo's monitor threads have checked every member: a pool is
    made ready when its server's check succeeds, so a client closed before a monitor's
    first check publishes no PoolReady for that server (a race of PyMongo's threads, seen
    once in a fresh clone's make test). singlemongo's scan has checked them all by then."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        known = [sd for sd in client.topology_description.server_descriptions().values()
                 if sd.is_server_type_known]
        if len(known) == members:
            return
        time.sleep(0.01)
    raise AssertionError(f"PyMongo knew {len(known)} of {members} members after {timeout_s} s")


@pytest.mark.parametrize("program", [plain, cursor, network_error])
@pytest.mark.parametrize("kind", [Standalone, ReplicaSet])
def test_pool_events_match_pymongo(kind, program):
    """Rule: a ConnectionPoolListener sees what PyMongo's sees for the same program: check-out
    started, created and ready for a new connection, checked out, checked in for every
    command (endSessions at close included), cleared and closed ("error") on a network
    error, closed ("poolClosed") at close; each server's pool created, ready and closed.
    Before, only pool_cleared was called."""
    with kind() as deployment:
        theirs = run(pymongo, deployment, program)
        ours = run(singlemongo, deployment, program)
    assert ours[0] == theirs[0]
    assert ours[1] == theirs[1]
    assert ("ConnectionCheckedOut", "") in ours[0]


def test_no_pool_monitor_without_a_pool_listener():
    """Rule: a program without a pool listener pays nothing: no monitor, its module not
    loaded by the client (a command listener alone does not make one)."""
    commands = type("C", (monitoring.CommandListener,), {
        "started": lambda s, e: None, "succeeded": lambda s, e: None,
        "failed": lambda s, e: None})()
    assert singlemongo.MongoClient("mongodb://h", connect=False)._topology.pool is None
    client = singlemongo.MongoClient("mongodb://h", event_listeners=[commands])
    assert client._topology.pool is None


def _lb_client(lb, seen_listeners):
    return singlemongo.MongoClient(lb.uri, event_listeners=seen_listeners)


def _checks(events):
    return [type(e).__name__.replace("Connection", "").replace("Event", "") for e in events
            if type(e).__name__ in ("ConnectionCheckedOutEvent", "ConnectionCheckedInEvent",
                                    "ConnectionReadyEvent", "ConnectionClosedEvent")]


def test_load_balanced_cursor_keeps_its_connection_until_it_ends():
    """Load balancer spec, "Connection Pinning": a cursor keeps the connection that opened it
    checked out until it is exhausted or closed; its getMores check nothing out."""
    with LoadBalancer() as lb:
        listeners, seen = recorder(singlemongo)
        client = _lb_client(lb, listeners)
        coll = client.test.c
        coll.insert_many([{"i": i} for i in range(5)])
        pool = client._topology.pool
        seen.clear()
        cur = coll.find({}, batch_size=2)
        next(cur)
        assert pool.total_checked_out == 1
        assert len(list(cur)) == 4  # two getMores on the pinned connection
        assert pool.total_checked_out == 0
        assert _checks(seen) == ["CheckedOut", "CheckedIn"]
        partial = coll.find({}, batch_size=2)
        next(partial)
        assert pool.total_checked_out == 1
        partial.close()
        assert pool.total_checked_out == 0
        client.close()


def _dropped_pinned_cursor(lb):
    """A load-balanced client whose cursor, pinned to its connection, was dropped without
    close(), and the events recorded since just before the drop."""
    listeners, seen = recorder(singlemongo)
    client = _lb_client(lb, listeners)
    coll = client.test.c
    coll.insert_many([{"i": i} for i in range(5)])
    cur = coll.find({}, batch_size=2)
    next(cur)
    seen.clear()
    del cur
    gc.collect()
    return client, seen


def test_a_dropped_pinned_cursor_checks_its_connection_in_at_the_next_operation():
    """Rule (standards: a finalizer runs inside whatever the program is doing, on whatever
    thread; it runs no listener and imports nothing): a load-balanced cursor dropped without
    close() queues its killCursors and its connection's check-in, and both happen before the
    next operation's own check-out, as PyMongo's close-soon queue does. Before, the
    cursor's ``__del__`` published ConnectionCheckedInEvent from inside the garbage
    collector."""
    with LoadBalancer() as lb:
        client, seen = _dropped_pinned_cursor(lb)
        assert seen == []
        pool = client._topology.pool
        assert pool.total_checked_out == 1  # held until the next operation
        client.test.c.find_one({})
        assert shape(seen)[0] == [
            "killCursors", ("ConnectionCheckedIn", ""),
            ("ConnectionCheckOutStarted", ""), ("ConnectionCheckedOut", ""), "find",
            ("ConnectionCheckedIn", "")]
        assert pool.total_checked_out == 0
        client.close()


def test_a_pinned_cursor_dropped_before_close_is_checked_in_before_its_connection_closes():
    """Rule (CMAP: a checked-out connection's ConnectionClosedEvent comes after its check-in;
    PyMongo's close() sends pending kills first): close() sends the dropped cursor's
    killCursors, checks its connection in, then closes the connection and the pool."""
    with LoadBalancer() as lb:
        client, seen = _dropped_pinned_cursor(lb)
        seen.clear()
        client.close()
        sequence, per_server = shape(seen)
        assert sequence[:2] == ["killCursors", ("ConnectionCheckedIn", "")]
        assert ("ConnectionClosed", "poolClosed") in sequence
        closed = ("ConnectionClosed", "poolClosed")
        assert sequence.index(("ConnectionCheckedIn", "")) < sequence.index(closed)
        assert list(per_server.values()) == [["PoolClosed"]]


def test_a_dropped_pinned_cursor_left_queued_is_checked_in_when_the_topology_closes():
    """Rule (CMAP, as above): when the client's close could not send the queued kills (its
    wait for another thread's operation timed out), the topology's close still checks the
    connection in before closing it, and sends nothing."""
    with LoadBalancer() as lb:
        client, seen = _dropped_pinned_cursor(lb)
        seen.clear()
        client._topology.close()
        sequence = shape(seen)[0]
        assert "killCursors" not in sequence
        assert sequence[:2] == [("ConnectionCheckedIn", ""), ("ConnectionClosed", "poolClosed")]


def test_load_balanced_transaction_keeps_its_connection_until_unpinned():
    """Load balancer spec, "Connection Pinning": a transaction's first command pins the
    connection until the transaction is unpinned (the next transaction, a command outside
    it, or the session's end), through any number of commits; an abort unpins at once."""
    with LoadBalancer() as lb:
        listeners, seen = recorder(singlemongo)
        client = _lb_client(lb, listeners)
        coll = client.test.c
        coll.insert_one({"x": 0})
        pool = client._topology.pool
        with client.start_session() as session:
            session.start_transaction()
            coll.insert_one({"x": 1}, session=session)
            coll.insert_one({"x": 2}, session=session)
            assert pool.total_checked_out == 1
            session.commit_transaction()
            session.commit_transaction()
            assert pool.total_checked_out == 1
            coll.find_one({}, session=session)  # outside a transaction: unpinned
            assert pool.total_checked_out == 0
            session.start_transaction()
            coll.insert_one({"x": 3}, session=session)
            assert pool.total_checked_out == 1
            session.abort_transaction()
            assert pool.total_checked_out == 0
        client.close()


@pytest.mark.parametrize("operation", [
    lambda c: c.test.c.find_one()["_id"], lambda c: c.test.c.insert_one({}).acknowledged],
    ids=["read", "write"])
def test_handshake_network_error_is_retried_like_pymongo(operation):
    """Retryable reads and writes: an error in a connection's handshake, authentication
    included, is retried as the operation is. singlemongo raised the reconnection's
    saslContinue network error (found by the retryable reads and writes handshakeError
    tests, which need pool events). PyMongo is the oracle: the same fail point, the same
    outcome."""
    outcomes = {}
    with ReplicaSet(users={"u": "pw"}) as rs:
        uri = rs.uri.replace("mongodb://", "mongodb://u:pw@", 1)
        for driver in (pymongo, singlemongo):
            client = driver.MongoClient(uri, appName="hs")
            client.test.c.replace_one({"_id": 1}, {"_id": 1}, upsert=True)  # authenticated
            # A ping fails and closes the connection; then the reconnection's saslContinue
            # fails the same way, and the operation is retried on a third connection.
            with pymongo.MongoClient(uri) as admin:
                admin.admin.command({"configureFailPoint": "failCommand",
                                     "mode": {"times": 2}, "data": {
                                         "failCommands": ["ping", "saslContinue"],
                                         "closeConnection": True, "appName": "hs"}})
            with pytest.raises(driver.errors.AutoReconnect):
                client.admin.command("ping")  # not retryable
            try:
                outcomes[driver.__name__] = operation(client)
            except driver.errors.PyMongoError as exc:
                outcomes[driver.__name__] = type(exc).__name__
            client.close()
    assert outcomes["singlemongo"] == outcomes["pymongo"]
    assert outcomes["pymongo"] in (1, True)


class _Messages:
    """A logging handler keeping each connection message's name (both drivers' fields)."""

    def __init__(self):
        import logging
        self.names = []
        self.handler = logging.Handler()
        self.handler.emit = self._keep

    def _keep(self, record):
        import json
        fields = getattr(record, "mongodb", None)  # singlemongo: the spec's fields
        if fields is None:  # PyMongo: the message is the fields as JSON
            fields = json.loads(str(record.msg))
        self.names.append((fields["message"], fields.get("reason")))


def test_connection_log_messages_match_pymongo():
    """Logging spec, the connection component: a client made while the connection logger is
    enabled logs CMAP's messages (no listener needed) with the spec's texts, in PyMongo's
    order ("Connection pool ready" compared by count: PyMongo's monitor thread logs it when
    its check finishes). Before, nothing was logged under singlemongo.connection."""
    import logging
    seen = {}
    with Standalone() as deployment:
        for driver, logger_name in ((pymongo, "pymongo.connection"),
                                    (singlemongo, "singlemongo.connection")):
            logger, messages = logging.getLogger(logger_name), _Messages()
            level = logger.level
            logger.setLevel(logging.DEBUG)
            logger.addHandler(messages.handler)
            try:
                client = driver.MongoClient(deployment.uri)
                client.test.c.insert_one({"x": 1})
                client.close()
            finally:
                logger.removeHandler(messages.handler)
                logger.setLevel(level)
            ready = [m for m in messages.names if m[0] == "Connection pool ready"]
            seen[driver.__name__] = ([m for m in messages.names if m not in ready], len(ready))
    assert seen["singlemongo"] == seen["pymongo"]
    assert ("Connection closed", "Connection pool was closed") in seen["pymongo"][0]


def test_a_client_dropped_without_close_publishes_nothing_from_its_finalizer():
    """Rule (Topology.release: a client dropped without close() frees its sockets with no
    events; no listener runs in a finalizer): before, closing the socket published
    ConnectionClosedEvent from inside the garbage collector."""
    with Standalone() as deployment:
        listeners, seen = recorder(singlemongo)
        client = singlemongo.MongoClient(deployment.uri, event_listeners=listeners)
        client.test.c.insert_one({})
        connection = next(iter(client._topology._connections.values()))
        seen.clear()
        del client
        gc.collect()
        assert connection.closed
        assert seen == []
