"""Tailable cursors on capped collections, as a MongoDB 7.0 server keeps them.

A find with ``tailable`` on a capped collection leaves its cursor open at the end of the
collection: a later getMore returns the documents inserted since, in natural (insertion)
order, that match the find's filter, and an empty batch when there are none. With
``awaitData`` a getMore with nothing to return waits up to its ``maxTimeMS`` (1 s by
default) for an insert (``pending`` tells the server's connection loop).

The cursor remembers the last document it looked at; when the capped collection has dropped
that document to make room, the server cannot say where it was: CappedPositionLost (136),
and the cursor is gone. A dropped collection kills its tailable cursors (QueryPlanKilled).
Differences from a real server, kept on purpose: a tailable cursor on an empty capped
collection stays open (a server may return a dead cursor), and the position is a document's
``_id`` (a real server uses the record id).
"""
from mongomock_ng import filtering

from singlemongo.testing.query.codes import CommandError
from singlemongo.testing.query.collection_options import options_of
from singlemongo.testing.query.reads import exists, project

_START = object()  # the position before the first document


class TailCursor:
    """A tailable cursor: documents not yet returned, and where it stands in the collection."""

    def __init__(self, ns, docs, server, cmd, position):
        self.ns, self.docs, self.server = ns, docs, server
        self.query = cmd.get("filter") or {}
        self.projection = cmd.get("projection")
        self.await_data = bool(cmd.get("awaitData"))
        self.position = position


def check(store, ns, cmd):
    """The errors a server gives a tailable find before running it."""
    if cmd.get("awaitData") and not cmd.get("tailable"):
        raise CommandError(9, "Cannot set 'awaitData' without also setting 'tailable'")
    if not cmd.get("tailable"):
        return
    if not exists(store, ns) or not options_of(store.collection(*ns)).get("capped"):
        raise CommandError(2, f"error processing query: ns={ns[0]}.{ns[1]}: tailable cursor "
                              f"requested on non capped collection")
    sort = cmd.get("sort")
    if sort and dict(sort) != {"$natural": 1}:
        raise CommandError(2, "cannot use tailable option with a sort other than "
                              "{$natural: 1}")


def _keys(store, ns):
    return list(store.collection(*ns)._store._documents)


def first_batch(store, server, ns, cmd, docs, batch_size):
    """The find's reply: its first batch, the cursor left open at the collection's end."""
    keys = _keys(store, ns)
    batch = docs if batch_size is None else docs[:batch_size]
    rest = [] if batch_size is None else docs[batch_size:]
    cursor_id = next(store._cursor_ids)
    store.cursors[cursor_id] = TailCursor(ns, rest, server.address, cmd,
                                          keys[-1] if keys else _START)
    return {"ok": 1, "cursor": {"id": cursor_id, "ns": f"{ns[0]}.{ns[1]}",
                                "firstBatch": batch}}


def _after(documents, position):
    """The keys after ``position`` in natural order, or None if its document is gone."""
    keys = list(documents)
    if position is _START:
        return keys
    if position not in documents:
        return None
    return keys[keys.index(position) + 1:]


def _newer(store, cursor_id, cursor):
    """Documents inserted after the cursor's position; the position moves to the end."""
    if not exists(store, cursor.ns):
        del store.cursors[cursor_id]
        raise CommandError(175, f"collection {cursor.ns[0]}.{cursor.ns[1]} was dropped while a "
                                f"tailable cursor was open on it")
    documents = store.collection(*cursor.ns)._store._documents
    keys = _after(documents, cursor.position)
    if keys is None:
        del store.cursors[cursor_id]
        raise CommandError(136, "CollectionScan died due to position in capped collection "
                                "being deleted")
    if keys:
        cursor.position = keys[-1]
    return [dict(documents[key]) for key in keys]


def get_more(store, cursor_id, cursor, cmd):
    """A getMore: buffered documents first, then the new ones that match; the cursor stays."""
    if not cursor.docs:
        found = [doc for doc in _newer(store, cursor_id, cursor)
                 if filtering.filter_applies(cursor.query, doc)]
        cursor.docs = project(store, cursor.ns, found, cursor.projection, cursor.query)
    size = cmd.get("batchSize") or len(cursor.docs)
    batch, cursor.docs = cursor.docs[:size], cursor.docs[size:]
    return {"ok": 1, "cursor": {"id": cursor_id, "ns": f"{cursor.ns[0]}.{cursor.ns[1]}",
                                "nextBatch": batch}}


def pending(store, cursor):
    """Whether a getMore would return something, or an error, now (an awaitData getMore
    waits till then)."""
    if cursor.docs or not exists(store, cursor.ns):
        return True
    documents = store.collection(*cursor.ns)._store._documents
    keys = _after(documents, cursor.position)
    return keys is None or any(filtering.filter_applies(cursor.query, documents[key])
                               for key in keys)
