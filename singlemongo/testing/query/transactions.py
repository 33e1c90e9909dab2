"""Multi-document transactions on the simulated deployment, as a 7.0 server runs them for a
test: snapshot isolation, commit, abort, write conflicts, and the server's checks.

A transaction starts with its first command (``startTransaction: true``) and reads and
writes a private copy of the data taken then (snapshot isolation: uncommitted writes are
invisible to everyone else, and the transaction never sees later commits). Its commit writes
the documents it changed back, and replays the collections and indexes it created. Two
writers of the same document conflict as on a real server: the second transaction gets
WriteConflict (112, labelled TransientTransactionError) and is aborted. A write outside any
transaction to a document an open transaction has written goes ahead and aborts that
transaction (a real server makes the write wait for the transaction; a simulated one,
serving one command at a time, cannot wait). As on a real server, a transaction nobody ends
does not hold its documents for ever: endSessions, killSessions and killAllSessions abort
the sessions' transactions, and one open longer than transactionLifetimeLimitSeconds (60)
is aborted when it is next looked at.
"""
import copy
import itertools
import time

from bson.timestamp import Timestamp
from mongomock_ng import MongoClient
from mongomock_ng.store import ServerStore

from singlemongo.testing.query.codes import CommandError

# Commands a transaction may run (the server's list, as far as the simulator has them).
ALLOWED = frozenset({"find", "aggregate", "distinct", "getMore", "killCursors", "insert",
                     "update", "delete", "findAndModify", "bulkWrite", "create", "createIndexes",
                     "commitTransaction", "abortTransaction"})
WRITES = frozenset({"insert", "update", "delete", "findAndModify"})
CATALOG = frozenset({"create", "createIndexes"})
ENDING = frozenset({"commitTransaction", "abortTransaction"})
# Snapshot reads: what takes one, how many points in time the server keeps (an older
# atClusterTime is SnapshotTooOld, as past a real server's history window).
SNAPSHOT_READS = frozenset({"find", "aggregate", "distinct", "count"})
SNAPSHOT_HISTORY = 16
# mongod's transactionLifetimeLimitSeconds default: its reaper aborts an older transaction.
TRANSACTION_LIFETIME_LIMIT = 60.0
WRITE_CONFLICT = ("WriteConflict error: this operation conflicted with another operation. "
                  "Please retry your operation or multi-document transaction.")


def snapshot(server_store):
    """A private copy of every collection (documents, indexes and options)."""
    copied = ServerStore()
    for db_name, db in server_store._databases.items():
        for name, coll in db._collections.items():
            if not coll.is_created:  # dropped: nothing to see
                continue
            target = copied[db_name][name]
            target._documents = copy.deepcopy(coll._documents)
            target.indexes = copy.deepcopy(coll.indexes)
            target._ttl_indexes = copy.deepcopy(coll._ttl_indexes)
            target.options = copy.deepcopy(coll.options)
            target._is_force_created = coll._is_force_created
    return copied


class StoreView:
    """The store as a transaction sees it: its own data, the shared cursors."""

    def __init__(self, store, client):
        self._store = store
        self.client = client

    def collection(self, db, name):
        return self.client[db][name]

    def __getattr__(self, name):
        return getattr(self._store, name)


class Txn:
    def __init__(self, store, number, server):
        self.number = number
        self.server = server  # a transaction lives on the mongod or mongos it started on
        self.state = "active"
        self.view = StoreView(store, MongoClient(_store=snapshot(store.client._store)))
        self.written = {}  # (db, collection) -> the _id keys this transaction wrote
        self.catalog = []  # create / createIndexes commands, replayed at commit
        self.started = time.monotonic()


def _ns(name, cmd):
    target = cmd.get(name)
    return (cmd.get("$db"), target) if isinstance(target, str) else None


def _written(name, cmd):
    """The namespaces a write command may change: its own, or a bulkWrite's nsInfo."""
    if name == "bulkWrite":
        found = (entry.get("ns") for entry in cmd.get("nsInfo") or () if isinstance(entry, dict))
        return [tuple(ns.split(".", 1)) for ns in found if isinstance(ns, str) and "." in ns]
    ns = _ns(name, cmd) if name in WRITES else None
    return [ns] if ns else []


def _documents(client, ns):
    return client._store[ns[0]][ns[1]]._documents


def _changed(before, after):
    return {k for k in set(before) | set(after) if before.get(k) != after.get(k)}


class Transactions:
    """Every session's transaction on one deployment (lsid -> Txn), the deployment's cluster
    time, and the points in time snapshot reads see."""

    def __init__(self, store):
        self.store = store
        self.by_lsid = {}
        self.snapshots = {}  # Timestamp -> StoreView of the data at that cluster time
        self._ticks = itertools.count(1)
        self.now = Timestamp(1_700_000_000, 0)

    def clear(self):
        self.by_lsid.clear()
        self.snapshots.clear()

    def tick(self):
        """The next cluster time (every reply of a gossiping deployment carries one)."""
        self.now = Timestamp(1_700_000_000, next(self._ticks))
        return self.now

    def snapshot_read(self, name, cmd, execute):
        """readConcern level snapshot outside a transaction (sessions spec, "Snapshot reads"):
        the data at atClusterTime, or at a new point in time reported back as atClusterTime;
        None if the command is not a snapshot read."""
        read_concern = cmd.get("readConcern")
        if not isinstance(read_concern, dict) or read_concern.get("level") != "snapshot" \
                or "autocommit" in cmd or name == "getMore":
            return None  # a getMore continues its cursor, whose results are the snapshot's
        if name not in SNAPSHOT_READS:
            raise CommandError(72, f"Command {name} does not support {{ readConcern: {{ level: "
                                   f"\"snapshot\" }} }} outside a transaction")
        at = read_concern.get("atClusterTime")
        if at is None:
            at = self.tick()
            self.snapshots[at] = StoreView(self.store,
                                           MongoClient(_store=snapshot(self.store.client._store)))
            while len(self.snapshots) > SNAPSHOT_HISTORY:
                del self.snapshots[min(self.snapshots)]
        view = self.snapshots.get(at)
        if view is None:
            raise CommandError(239, f"Read timestamp {at} is older than the oldest available "
                                    f"timestamp.")
        reply = dict(execute(view))
        if isinstance(reply.get("cursor"), dict):
            reply["cursor"] = dict(reply["cursor"], atClusterTime=at)
        elif reply.get("ok"):
            reply["atClusterTime"] = at
        return reply

    def open(self):
        now = time.monotonic()
        for txn in self.by_lsid.values():
            if txn.state == "active" and now - txn.started > TRANSACTION_LIFETIME_LIMIT:
                txn.state = "aborted"  # the server's transaction reaper
        return [t for t in self.by_lsid.values() if t.state == "active"]

    def end(self, lsids=None):
        """endSessions / killSessions (``lsids``) or killAllSessions (None): the sessions'
        open transactions are aborted, and hold no document any more."""
        keys = None if lsids is None else {
            bytes(lsid["id"]) for lsid in lsids if isinstance(lsid, dict) and "id" in lsid}
        for key, txn in self.by_lsid.items():
            if (keys is None or key in keys) and txn.state == "active":
                txn.state = "aborted"

    # ----- routing a command ---------------------------------------------------------------

    def enter(self, name, cmd, server, mongos=False):
        """The Txn a command runs in, or None outside a transaction; CommandError for what a
        server refuses (``mongos``: the server is a mongos)."""
        lsid = cmd.get("lsid")
        if "autocommit" not in cmd:
            if lsid is not None and "txnNumber" in cmd:
                current = self.by_lsid.get(bytes(lsid["id"]))
                if current is not None and current.number < cmd["txnNumber"] and \
                        current.state == "active":
                    current.state = "aborted"  # a newer txnNumber aborts the open transaction
            return None
        if cmd["autocommit"] is not False or lsid is None or "txnNumber" not in cmd:
            raise CommandError(72, "autocommit must be false and come with lsid and txnNumber")
        key, number = bytes(lsid["id"]), cmd["txnNumber"]
        current = self.by_lsid.get(key)
        if cmd.get("startTransaction"):
            if current is not None and current.number >= number:
                raise CommandError(225, f"Cannot start transaction {number} on session because "
                                        f"a newer transaction {current.number} has already "
                                        f"started")
            txn = self.by_lsid[key] = Txn(self.store, number, server)
        else:
            txn = current
            if txn is None or txn.number != number:
                raise _no_such(number)
            if txn.server != server:
                self._elsewhere(txn, name, cmd, mongos)
            if "readConcern" in cmd and name not in ENDING:
                raise CommandError(72, "Only the first command in a transaction may specify "
                                       "a readConcern")
        refusal = self._refusal(name, cmd)
        if refusal is not None:
            txn.state = "aborted" if txn.state == "active" else txn.state
            raise CommandError(263, refusal)
        if name not in ENDING:
            if "writeConcern" in cmd:
                raise CommandError(72, "Cannot set write concern after starting a transaction")
            if txn.state != "active":
                raise _no_such(number, txn.state)
        return txn

    @staticmethod
    def _elsewhere(txn, name, cmd, mongos):
        """A command for a transaction another server started. A mongos asked to commit it
        learns its fate from the shard its ``recoveryToken`` names, as a real one does: a
        committed transaction commits again (ok), any other answer is NoSuchTransaction and
        leaves the transaction as it is; without a token it knows nothing of it. A new
        primary never saw an open transaction: the election aborted it."""
        if mongos and name == "commitTransaction":
            if "recoveryToken" in cmd and txn.state == "committed":
                return
            raise _no_such(txn.number)
        if txn.state == "active":
            if name == "commitTransaction":
                txn.state = "aborted"
            raise _no_such(txn.number)

    def _refusal(self, name, cmd):
        """Why a command cannot run in a transaction (OperationNotSupportedInTransaction),
        or None: a command outside ALLOWED, an index on a collection that existed before it,
        a pipeline that writes ($out, $merge)."""
        if name not in ALLOWED:
            return f"Cannot run '{name}' in a multi-document transaction."
        if name == "createIndexes":
            db, coll = cmd.get("$db"), cmd.get("createIndexes")
            if coll in self.store.client[db].list_collection_names():
                return (f"Cannot create new indexes on existing collection {db}.{coll} in a "
                        f"multi-document transaction.")
        if name == "aggregate" and any(isinstance(s, dict) and ("$out" in s or "$merge" in s)
                                       for s in cmd.get("pipeline") or ()):
            return "$out and $merge cannot be used in a transaction"
        return None

    def run(self, txn, name, cmd, execute):
        """Run ``execute(view)`` in the transaction; a write conflict or any error aborts it."""
        before = {ns: dict(copy.deepcopy(_documents(txn.view.client, ns)))
                  for ns in _written(name, cmd)}
        reply = execute(txn.view)
        for ns, documents in before.items():
            changed = _changed(documents, _documents(txn.view.client, ns))
            if self._conflicts(txn, ns, changed):
                txn.state = "aborted"
                raise CommandError(112, WRITE_CONFLICT)
            txn.written.setdefault(ns, set()).update(changed)
        if name in CATALOG and reply.get("ok"):
            txn.catalog.append((name, cmd))
        if not reply.get("ok") or reply.get("writeErrors"):
            txn.state = "aborted"  # an error in a transaction aborts it on the server
        return reply

    def _conflicts(self, txn, ns, keys):
        return any(other is not txn and keys & other.written.get(ns, set())
                   for other in self.open())

    def outside(self, name, cmd, execute):
        """Run a command outside any transaction; a write to a document an open transaction
        wrote aborts that transaction."""
        before = {ns: dict(copy.deepcopy(_documents(self.store.client, ns)))
                  for ns in (_written(name, cmd) if self.open() else ())}
        reply = execute(self.store)
        for ns, documents in before.items():
            changed = _changed(documents, _documents(self.store.client, ns))
            for txn in self.open():
                if changed & txn.written.get(ns, set()):
                    txn.state = "aborted"
        return reply

    # ----- ending --------------------------------------------------------------------------

    def commit(self, txn):
        if txn.state == "aborted":
            raise _no_such(txn.number, txn.state)
        if txn.state == "committed":
            return {"ok": 1}  # a retried commit is answered again
        for name, cmd in txn.catalog:
            ns = _ns(name, cmd)
            if name == "create" and ns[1] not in self.store.client[ns[0]].list_collection_names():
                self.store.client[ns[0]].create_collection(ns[1])
            elif name == "createIndexes":
                from singlemongo.testing.query.catalog import create_indexes
                create_indexes(self.store, None, cmd)
        for ns, keys in txn.written.items():
            source = _documents(txn.view.client, ns)
            target = _documents(self.store.client, ns)
            for key in keys:
                if key in source:
                    target[key] = copy.deepcopy(source[key])
                elif key in target:
                    del target[key]
        txn.state = "committed"
        return {"ok": 1}

    def abort(self, txn):
        if txn.state == "committed":
            raise CommandError(256, f"Transaction {txn.number} has been committed.")
        if txn.state == "aborted":
            raise _no_such(txn.number, txn.state)
        txn.state = "aborted"
        return {"ok": 1}


def _no_such(number, state=None):
    if state == "aborted":
        return CommandError(251, f"Transaction with {{ txnNumber: {number} }} has been aborted.")
    return CommandError(251, f"Given transaction number {number} does not match any "
                             f"in-progress transactions.")
