"""Every wait bounded (issue 19; client-side operations timeout, "Cursors"): a getMore loop on
empty batches, a cursor's close, killCursors under overload. Each test failed on the code
before the fix; its docstring names the rule."""
import pytest
from bson import Int64

from singlemongo import errors
from singlemongo.client import MongoClient
from singlemongo.clock import Clock


OVERLOAD = ("SystemOverloadedError", "RetryableError")


def _empty_batches_forever(server, cursor_id):
    """The server answers every getMore with an empty batch and the same live cursor."""
    reply = {"cursor": {"id": Int64(cursor_id), "ns": "test.c", "nextBatch": []}, "ok": 1}
    server.fail("getMore", action="raw-reply", times=None,
                raw=lambda request_id: server._op_msg_reply(request_id, reply))


def _seeded(deployment, client, n=3):
    client.test.c.insert_many([{"i": i} for i in range(n)])


def test_an_empty_getmore_batch_ends_that_next(mongo_standalone, fake_clock):
    """As PyMongo's Cursor.next(): one getMore per refresh; an empty batch ends that next()
    (StopIteration, the cursor still alive). Before, one next() sent getMores in a loop
    forever (about 14,000 a second)."""
    server = mongo_standalone.servers[0]
    client = MongoClient(mongo_standalone.uri, clock=fake_clock)
    _seeded(mongo_standalone, client)
    cursor = client.test.c.find(batch_size=2)
    assert [next(cursor)["i"], next(cursor)["i"]] == [0, 1]
    _empty_batches_forever(server, cursor.cursor_id)
    before = server.commands["getMore"]
    assert list(cursor) == []
    assert server.commands["getMore"] == before + 1
    assert cursor.alive
    cursor.close()
    client.close()


def test_timeout_ms_bounds_a_command_cursors_whole_next(mongo_standalone):
    """CSOT, "Cursors": timeoutMS applies to the entire next() call, not to each getMore.
    A command cursor keeps asking while it is alive (PyMongo's CommandCursor.next()), so
    timeoutMS is what ends it. Before, it never ended, timeoutMS or not."""
    server = mongo_standalone.servers[0]
    client = MongoClient(mongo_standalone.uri, clock=Clock(), timeoutMS=300)
    _seeded(mongo_standalone, client)
    cursor = client.test.c.aggregate([{"$match": {}}], batchSize=1)
    assert next(cursor)["i"] == 0
    _empty_batches_forever(server, cursor.cursor_id)
    with pytest.raises(errors.PyMongoError) as info:
        next(cursor)
    assert info.value.timeout
    cursor.close()
    client.close()


@pytest.mark.parametrize("how", ["close", "with"])
def test_close_is_bounded_by_timeout_ms(mongo_standalone, how):
    """CSOT, "Cursors": close() kills the server cursor within timeoutMS (refreshed for the
    close), whether called or run by leaving a ``with`` block. Before, a killCursors the
    server never answered blocked forever."""
    server = mongo_standalone.servers[0]
    client = MongoClient(mongo_standalone.uri, clock=Clock(), timeoutMS=300)
    _seeded(mongo_standalone, client)
    server.fail("killCursors", action="hang", times=None)
    cursor = client.test.c.find(batch_size=1)
    if how == "close":
        next(cursor)
        cursor.close()
    else:
        with cursor:
            next(cursor)
    assert server.commands["killCursors"] == 1
    sent = [c for c in server.command_log if "killCursors" in c][-1]
    assert 0 < sent["maxTimeMS"] <= 300
    client.close()


def test_close_without_timeout_ms_is_bounded_by_the_connections_limits(mongo_standalone):
    """Without timeoutMS, socketTimeoutMS bounds the killCursors, and without that,
    connectTimeoutMS: never unbounded. Before, close() waited forever."""
    server = mongo_standalone.servers[0]
    client = MongoClient(mongo_standalone.uri, clock=Clock(), connectTimeoutMS=300)
    _seeded(mongo_standalone, client)
    server.fail("killCursors", action="hang", times=None)
    cursor = client.test.c.find(batch_size=1)
    next(cursor)
    cursor.close()
    assert server.commands["killCursors"] == 1
    assert client.test.c.count_documents({}) == 3  # the next operation: a new connection
    client.close()


@pytest.mark.parametrize("where", ["client", "session", "block"])
def test_with_transaction_is_bounded_by_timeout_ms(mongo_replica_set, where):
    """CSOT, "Convenient Transactions API": timeoutMS applies to the whole with_transaction
    call (the client's, the session's default_timeout_ms, or a timeout() block around it).
    Before, a commit that never answered was retried for 120 s although timeoutMS was set."""
    import time

    import singlemongo
    rs = mongo_replica_set
    client = MongoClient(rs.uri, clock=Clock(), **({"timeoutMS": 300} if where == "client"
                                                   else {}))
    client.test.c.insert_one({"x": 0})
    rs.primary.fail("commitTransaction", action="hang", times=None)
    session = client.start_session(**({"default_timeout_ms": 300} if where == "session"
                                      else {}))
    started = time.monotonic()
    with pytest.raises(errors.PyMongoError) as info:
        if where == "block":
            with singlemongo.timeout(0.3):
                session.with_transaction(lambda s: client.test.c.insert_one({"x": 1},
                                                                            session=s))
        else:
            session.with_transaction(lambda s: client.test.c.insert_one({"x": 1}, session=s))
    assert info.value.timeout
    assert time.monotonic() - started < 5
    session.end_session()
    client.close()


def test_with_transaction_aborts_with_a_refreshed_timeout(mongo_replica_set):
    """CSOT: after a callback that used up timeoutMS, the abortTransaction gets timeoutMS
    afresh (it is sent, with maxTimeMS), and the call raises a timeout error."""
    rs = mongo_replica_set
    client = MongoClient(rs.uri, clock=Clock(), timeoutMS=200)
    client.test.c.insert_one({"x": 0})
    rs.primary.fail("insert", action="hang")

    def callback(s):
        client.test.c.insert_one({"x": 1}, session=s)
    with client.start_session() as session:
        with pytest.raises(errors.PyMongoError) as info:
            session.with_transaction(callback)
    assert info.value.timeout
    aborts = [c for c in rs.primary.command_log if "abortTransaction" in c]
    assert len(aborts) == 1 and 0 < aborts[0]["maxTimeMS"] <= 200
    client.close()


# ----- frozen time never sleeps ---------------------------------------------------------------

def _failover(rs, events):
    client = MongoClient(rs.uri, event_listeners=[events.append])
    client.t.c.insert_one({"x": 1})
    rs.step_down()
    rs.elect(1)
    import time
    started = time.clock_gettime(time.CLOCK_MONOTONIC)  # freezegun leaves this one
    client.t.c.insert_one({"x": 2})  # NotWritablePrimary, a rescan, the retry
    took = time.clock_gettime(time.CLOCK_MONOTONIC) - started
    count = client.t.c.count_documents({})
    client.close()
    return took, count


def test_a_failover_under_freeze_time_does_not_sleep(mongo_replica_set):
    """While freezegun holds time still, a wait only time could end (here the 500 ms before
    the next scan may start) is counted, not slept: the failover completes in milliseconds
    of real time, with the same outcome and the same events as with time running. Before,
    every failover under freeze_time slept a real 500 ms."""
    import freezegun
    frozen_events, running_events = [], []
    with freezegun.freeze_time("2030-01-01"):
        took, frozen_count = _failover(mongo_replica_set, frozen_events)
    assert took < 0.25
    mongo_replica_set.reset()
    _, running_count = _failover(mongo_replica_set, running_events)
    assert frozen_count == running_count == 2
    names = lambda events: [type(e).__name__ for e in events]
    assert names(frozen_events) == names(running_events)


@pytest.mark.parametrize("how", ["close", "garbage collector"])
def test_kill_cursors_is_retried_under_overload(mongo_standalone, fake_clock, how):
    """Client backpressure: every command is retried on SystemOverloadedError, killCursors
    too, whether close() sends it or the operation after the garbage collector took the
    cursor. Before, it was sent once."""
    import gc
    server = mongo_standalone.servers[0]
    client = MongoClient(mongo_standalone.uri, clock=fake_clock)
    _seeded(mongo_standalone, client)
    cursor = client.test.c.find(batch_size=1)
    next(cursor)
    server.fail("killCursors", code=462, labels=OVERLOAD, times=2)
    if how == "close":
        cursor.close()
    else:
        del cursor
        gc.collect()
        assert client.test.c.count_documents({}) == 3
    assert server.commands["killCursors"] == 3
    client.close()
