"""Tailable cursors on capped collections (issue 22): the simulated server keeps them open at
the end of the collection, and the driver's find(cursor_type=...) reads what is inserted
later, with PyMongo on the same simulated replica set as the oracle (documents, errors, and
the commands sent)."""
import pymongo
import pytest
from pymongo import monitoring as pm_monitoring

import singlemongo
from singlemongo import CursorType, monitoring
from singlemongo.errors import ConfigurationError
from singlemongo.testing import ReplicaSet


class Commands(pm_monitoring.CommandListener, monitoring.CommandListener):
    """The commands a client starts (a listener both drivers accept)."""

    def __init__(self):
        self.commands = []

    def started(self, event):
        self.commands.append(dict(event.command))

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass


@pytest.fixture()
def rs():
    with ReplicaSet(1) as deployment:
        yield deployment


def _clients(rs):
    pm, sm = Commands(), Commands()
    return [("pymongo", pymongo.MongoClient(rs.uri, event_listeners=[pm]), pm),
            ("singlemongo", singlemongo.MongoClient(rs.uri, event_listeners=[sm]), sm)]


def _tail(client, name, cursor_type, **find):
    """A user's tail loop: what each round of ``for doc in cursor`` returns, with an insert
    between rounds, while the cursor lives."""
    coll = client.db[name]
    coll.drop()
    client.db.create_collection(name, capped=True, size=4096)
    coll.insert_many([{"_id": 1, "k": "a"}, {"_id": 2, "k": "b"}])
    cursor = coll.find({"k": {"$ne": "skip"}}, cursor_type=cursor_type, batch_size=1, **find)
    if cursor_type == CursorType.TAILABLE_AWAIT:
        cursor = cursor.max_await_time_ms(20)
    rounds = []
    for extra in ({"_id": 3, "k": "skip"}, {"_id": 4, "k": "c"}, None):
        rounds.append([doc["_id"] for doc in cursor])
        if extra is not None:
            coll.insert_one(extra)
    alive = cursor.alive
    cursor.close()
    return rounds, alive


def _get_mores(listener):
    return [{k: v for k, v in c.items() if k in ("batchSize", "maxTimeMS", "collection")}
            for c in listener.commands if "getMore" in c]


@pytest.mark.parametrize("cursor_type", [CursorType.TAILABLE, CursorType.TAILABLE_AWAIT])
def test_a_tailable_cursor_reads_what_is_inserted_later_as_pymongo_does(rs, cursor_type):
    """CRUD "Find" (tailable, awaitData): the cursor stays open at the end of a capped
    collection; each later round returns the new documents its filter matches; an
    awaitData getMore carries max_await_time_ms as maxTimeMS. Same rounds, same getMores."""
    seen = {}
    for name, client, listener in _clients(rs):
        seen[name] = (_tail(client, f"log_{name}", cursor_type), _get_mores(listener))
        client.close()
    assert seen["singlemongo"][0] == seen["pymongo"][0]
    assert seen["pymongo"][0] == ([[1, 2], [], [4]], True)
    strip = [{k: v for k, v in g.items() if k != "collection"} for g in seen["pymongo"][1]]
    assert [{k: v for k, v in g.items() if k != "collection"}
            for g in seen["singlemongo"][1]] == strip
    if cursor_type == CursorType.TAILABLE_AWAIT:
        assert all(g["maxTimeMS"] == 20 for g in strip)
    else:
        assert all("maxTimeMS" not in g for g in strip)


def test_a_tailable_find_on_a_collection_that_is_not_capped_fails_as_on_pymongo(rs):
    """A server refuses a tailable cursor on a collection that is not capped (2 BadValue)."""
    codes = {}
    for name, client, _ in _clients(rs):
        client.db[f"plain_{name}"].insert_one({"_id": 1})
        with pytest.raises(Exception) as caught:
            list(client.db[f"plain_{name}"].find(cursor_type=CursorType.TAILABLE))
        codes[name] = (type(caught.value).__name__, caught.value.code)
        assert "capped" in str(caught.value)
        client.close()
    assert codes["singlemongo"] == codes["pymongo"] == ("OperationFailure", 2)


def test_a_tailable_cursor_that_falls_behind_a_full_capped_collection_dies(rs):
    """When the capped collection has dropped the document a tailable cursor stood on, the
    server cannot continue it (CappedPositionLost, 136): the cursor ends, quietly as in
    PyMongo (its getMore's error ends the iteration, ``alive`` becomes False)."""
    outcomes = {}
    for name, client, _ in _clients(rs):
        coll = client.db[f"tiny_{name}"]
        client.db.create_collection(coll.name, capped=True, size=4096, max=2)
        coll.insert_many([{"_id": 1}, {"_id": 2}])
        cursor = coll.find(cursor_type=CursorType.TAILABLE)
        assert [d["_id"] for d in cursor] == [1, 2]
        coll.insert_many([{"_id": 3}, {"_id": 4}, {"_id": 5}])
        outcomes[name] = (list(cursor), cursor.alive)
        client.close()
    assert outcomes["singlemongo"] == outcomes["pymongo"] == ([], False)


def test_max_await_time_not_below_timeout_ms_is_refused_before_anything_is_sent(rs):
    """CSOT, "Tailable awaitData Cursors": maxAwaitTimeMS >= timeoutMS is a client error,
    raised before any command (PyMongo 4.20 does not check it: a README difference)."""
    listener = Commands()
    client = singlemongo.MongoClient(rs.uri, timeoutMS=100, event_listeners=[listener])
    client.db.create_collection("capped", capped=True, size=4096)
    before = len(listener.commands)
    cursor = client.db.capped.find(cursor_type=CursorType.TAILABLE_AWAIT).max_await_time_ms(100)
    with pytest.raises(ConfigurationError, match=r"max_await_time_ms \(100\) must be less"):
        next(cursor)
    with pytest.raises(ConfigurationError):
        client.db.capped.watch(max_await_time_ms=150)
    assert len(listener.commands) == before
    with singlemongo.timeout(1):  # a longer timeout in force: fine
        assert client.db.capped.find(cursor_type=CursorType.TAILABLE_AWAIT) \
            .max_await_time_ms(100).try_next() is None


def test_each_next_of_a_tailable_cursor_gets_the_whole_timeout_again(rs):
    """CSOT, "Tailable Cursors": timeoutMode ITERATION; the timeoutMS a tailable cursor was
    made with bounds each next() anew (a cursor that lives for minutes is not killed by a
    lifetime deadline), and each awaitData getMore waits at most what is left of it."""
    from singlemongo.clock import FakeClock
    clock = FakeClock()
    listener = Commands()
    client = singlemongo.MongoClient(rs.uri, timeoutMS=500, event_listeners=[listener],
                                     clock=clock)
    client.db.create_collection("ticks", capped=True, size=4096)
    client.db.ticks.insert_one({"_id": 0})
    cursor = client.db.ticks.find(cursor_type=CursorType.TAILABLE_AWAIT).max_await_time_ms(50)
    assert next(cursor)["_id"] == 0
    clock.advance(10.0)  # far beyond a lifetime of 500 ms
    client.db.ticks.insert_one({"_id": 1})
    assert next(cursor)["_id"] == 1
    get_more = [c for c in listener.commands if "getMore" in c][-1]
    assert get_more["maxTimeMS"] == 50
    find = [c for c in listener.commands if "find" in c][0]
    assert find["tailable"] and find["awaitData"] and 0 < find["maxTimeMS"] <= 500
