"""``local.oplog.rs``, as much of it as code that follows time needs: each write command that
changes the store appends an entry with its ``ts`` (the cluster time), ``wall`` and ``ns``.
The entries are no-ops (``op: "n"``, ``o: {msg: ...}``), as a server's periodic no-op writer
writes them: the simulated members share one store, so there is no replication to replay.
A capped collection of the last ENTRIES entries; tailable and awaitData cursors work on it.
"""
import datetime

from bson import Int64

from singlemongo.testing.query import collection_options

OPLOG = ("local", "oplog.rs")
ENTRIES = 1000
SIZE = 64 * 1024 * 1024
CHANGES = frozenset({"insert", "update", "delete", "findAndModify", "create", "drop",
                     "createIndexes", "dropIndexes", "renameCollection", "dropDatabase",
                     "collMod", "commitTransaction"})


def note(store, name, cmd, reply):
    """Append the entry of a write command that ran (and changed something, for writes)."""
    if name not in CHANGES or not reply.get("ok") or cmd.get("$db") == OPLOG[0]:
        return
    if name in ("insert", "update", "delete") and not reply.get("n"):
        return
    target = cmd.get(name)
    ns = f"{cmd.get('$db')}.{target}" if isinstance(target, str) else f"{cmd.get('$db')}.$cmd"
    coll = _collection(store)
    documents = coll._store._documents
    ts = store.transactions.tick()
    documents[ts] = {"ts": ts, "t": Int64(1), "v": Int64(2), "op": "n", "ns": ns,
                     "wall": datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None),
                     "o": {"msg": f"{name} on {ns}"}}
    while len(documents) > ENTRIES:
        documents.popitem(last=False)


def _collection(store):
    if OPLOG[1] not in store.client[OPLOG[0]].list_collection_names():
        collection_options.create(store, OPLOG, {"capped": True, "size": SIZE})
    return store.collection(*OPLOG)
