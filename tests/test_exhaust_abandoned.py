"""An exhaust cursor's stream that a program stops reading (it closes the cursor, or runs
another operation on the server without reading the cursor to its end) never holds the next
operation: the stream's connection is closed at once (it cannot be reused mid-stream), none
of the rest of the stream is read or kept, and the next operation runs on a new connection,
counted and evented as CMAP says. PyMongo is the control on the same server.

Rule guarded: the next operation starts within its own latency, and memory stays flat.
Before, the rest of the stream was drained (up to 32 MiB or 5 s): a server streaming empty
batches without end held the next find_one past 5 s (117,214 replies read); with 1 KB
documents it waited 1.4 s and memory grew by 40 MiB."""
import time
import tracemalloc

import pymongo
import pytest
from bson import Int64

from singlemongo import MongoClient, errors
from singlemongo.cursor import CursorType
from singlemongo.testing import Standalone

SHAPES = {
    "empty batches": [],
    "small documents": [{"pad": "x" * 1000}] * 20,
}


@pytest.fixture()
def endless(request):
    """A standalone whose getMore replies stream without end (each reply a batch of the
    shape asked for, the cursor never ending)."""
    batch = SHAPES[request.param]
    with Standalone() as standalone:
        server = standalone.servers[0]
        real = server.handler

        def stream(srv, name, cmd, state):
            if name == "getMore":
                return {"ok": 1, "cursor": {"id": Int64(7), "ns": "t.c", "nextBatch": batch}}
            return real(srv, name, cmd, state)
        with pymongo.MongoClient(standalone.uri) as setup:
            setup.t.c.insert_many([{"_id": i} for i in range(5)])
        server.handler = stream
        yield standalone


def _next_operation_after_abandoning(client, close, driver_exhaust):
    cursor = client.t.c.find(cursor_type=driver_exhaust, batch_size=2)
    for _ in range(3):  # the first batch, then the stream begins (its batches may be empty)
        try:
            next(cursor)
        except StopIteration:
            pass
    if close:
        cursor.close()
    tracemalloc.start()
    started = time.monotonic()
    count = client.t.c.find_one({"_id": 4})
    elapsed = time.monotonic() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return cursor, count, elapsed, peak


@pytest.mark.parametrize("endless", list(SHAPES), indirect=True)
@pytest.mark.parametrize("close", [True, False], ids=["closed", "left unread"])
@pytest.mark.parametrize("timeout_ms", [None, 10_000], ids=["", "timeoutMS"])
def test_the_next_operation_does_not_wait_for_an_abandoned_stream(endless, close, timeout_ms):
    options = {"timeoutMS": timeout_ms} if timeout_ms else {}
    with pymongo.MongoClient(endless.uri, **options) as control:
        _, theirs, their_s, _ = _next_operation_after_abandoning(
            control, close, pymongo.CursorType.EXHAUST)
    client = MongoClient(endless.uri, **options)
    before = endless.servers[0].connections
    cursor, ours, our_s, peak = _next_operation_after_abandoning(client, close,
                                                                 CursorType.EXHAUST)
    assert ours == theirs == {"_id": 4}
    assert our_s < max(0.5, 3 * their_s), (our_s, their_s)
    assert peak < 2 * 2**20  # nothing of the stream kept
    # The client's first connection (its stream's), then the next operation's new one.
    assert endless.servers[0].connections == before + 2
    if not close:  # the documents it had received stay readable, then it says why it ended
        with pytest.raises(errors.AutoReconnect, match="exhaust"):
            for _ in range(10_000):
                next(cursor)
    client.close()


def test_the_closed_stream_connection_is_evented_as_cmap_says(mongo_standalone):
    """CMAP: the abandoned stream's connection is closed (reason "error": it cannot be
    reused), and the next operation's connection is created, ready, checked out and in."""
    events = []
    client = MongoClient(mongo_standalone.uri, event_listeners=[events.append])
    client.t.c.insert_many([{"_id": i} for i in range(5)])
    cursor = client.t.c.find(cursor_type=CursorType.EXHAUST, batch_size=2)
    next(cursor), next(cursor), next(cursor)  # the first batch, then the stream's first
    del events[:]
    client.t.c.find_one()
    kinds = [type(e).__name__ for e in events]
    closed = [e for e in events if type(e).__name__ == "ConnectionClosedEvent"]
    assert closed and closed[0].reason == "error"
    assert kinds.index("ConnectionClosedEvent") < kinds.index("ConnectionCreatedEvent")
    client.close()
