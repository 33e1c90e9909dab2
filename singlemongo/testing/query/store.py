"""The data behind a simulated deployment: MongoDB commands run on a real query engine.

Queries, updates, aggregation and indexes are mongomock-ng's (corrected where it departs from
MongoDB, see ``conformance.py``); this module adds what a server does around them: checks with
MongoDB's error codes, cursors that page with getMore on the server that opened them,
retryable writes answered from their first execution, and a lock, since every member of a
deployment serves the same data from its own thread. A command never kills the server: any
failure is an ``ok: 0`` reply.
"""
import itertools
import re
import threading
import time

import mongomock_ng
import bson
from bson import Int64
from mongomock_ng import DuplicateKeyError, OperationFailure, WriteError
from mongomock_ng.helpers import NOTHING

from singlemongo.testing.query import (admin, bulk_write, catalog, changes, collation, collection_options, conformance, explain,
               expressions, mapreduce, oplog, profiler, reads, tailable, uniques, users, views,
               waits, writes)
from singlemongo.testing.query.codes import CommandError, WriteFailure, duplicate_message, error_reply
from singlemongo.testing.query.transactions import Transactions

# What an engine exception means, as MongoDB's code and message: (type, pattern, code, text).
ERROR_TABLE = (
    (WriteError, r"immutable\) field '_id'", 66,
     "Performing an update on the path '_id' would modify the immutable field '_id'"),
    (OperationFailure, r"index not found", 27, None),
    (OperationFailure, r"unknown (top level )?operator", 2, None),
    (OperationFailure, r"already exists", 48, None),
    (OperationFailure, r"does not exist|ns not found|source namespace", 26, None),
    (TypeError, r"concatenate|unsupported operand|can't multiply", 14,
     "Cannot apply $inc to a value of non-numeric type"),
    (NotImplementedError, r"", 238, None),
)
COMMANDS = {**reads.COMMANDS, **writes.COMMANDS, **catalog.COMMANDS,
            **collection_options.COMMANDS, **profiler.COMMANDS, **users.COMMANDS,
            **explain.COMMANDS, **mapreduce.COMMANDS, **admin.COMMANDS,
            **bulk_write.COMMANDS,
            "commitTransaction": lambda store, server, cmd: store.transactions.commit(store.txn),
            "abortTransaction": lambda store, server, cmd: store.transactions.abort(store.txn),
            "killSessions": lambda store, server, cmd: _killed(store, cmd["killSessions"]),
            "killAllSessions": lambda store, server, cmd: _killed(store, None)}
# Commands that change documents other than by insert or update (unique tables are rebuilt).
INVALIDATING = frozenset({"delete", "findAndModify", "bulkWrite", "drop", "dropDatabase", "renameCollection",
                          "createIndexes", "dropIndexes", "create", "aggregate", "collMod"})
# Commands whose retry (same lsid and txnNumber) is answered from the first execution.
RETRYABLE_WRITES = frozenset({"insert", "update", "delete", "findAndModify", "bulkWrite"})
SESSIONS_KEPT = 100
# mongod ends a batch before the document that would take it past 16 MiB (at least one
# document): a getMore without batchSize over a large result is several replies, never one
# over maxMessageSizeBytes.
MAX_BATCH_BYTES = 16 * 1024 * 1024


def batch_length(docs, size=None):
    """How many of ``docs`` the next batch takes: up to ``size``, within MAX_BATCH_BYTES."""
    total = 0
    for count, doc in enumerate(docs if size is None else docs[:size]):
        total += len(bson.encode(doc))
        if total > MAX_BATCH_BYTES and count:
            return count
    return len(docs) if size is None else min(size, len(docs))


def engine_error(exc):
    """The CommandError an engine exception stands for."""
    if isinstance(exc, CommandError):
        return exc
    if isinstance(exc, DuplicateKeyError):
        details = dict(getattr(exc, "details", None) or {})
        if "keyValue" in details:  # a missing field is indexed, and reported, as null
            details["keyValue"] = {k: None if v is NOTHING else v
                                   for k, v in details["keyValue"].items()}
        return WriteFailure(11000, duplicate_message(details), **{
            k: details[k] for k in ("keyPattern", "keyValue") if k in details})
    for kind, pattern, code, text in ERROR_TABLE:
        if isinstance(exc, kind) and re.search(pattern, str(exc)):
            # The query library is the simulator's own business: a client hears of the
            # simulated server, never of mongomock-ng.
            return CommandError(code, text or re.sub(r"(?i)mongomock[-_]ng", "the simulated "
                                                     "server", str(exc)))
    code = getattr(exc, "code", None)
    if isinstance(exc, OperationFailure):
        return CommandError(code or 2, str(exc))
    return CommandError(1, f"the simulated server failed: {type(exc).__name__}: {exc}")


class Cursor:
    """Results not yet returned, kept on the server (and member) that produced them."""

    def __init__(self, ns, docs, server):
        self.ns, self.docs, self.server = ns, docs, server


class Store:
    def __init__(self):
        conformance.apply()
        self.client = mongomock_ng.MongoClient()
        self.lock = threading.RLock()
        self.cursors = {}
        self.time_limited_cursors = set()  # opened with maxTimeMS
        self.sessions = {}  # lsid id -> lsid, of the commands run ($listLocalSessions)
        self.executed = {}  # (lsid, txnNumber) -> reply, for retryable writes
        self.executions = 0  # write commands executed (not answered from the cache)
        self._cursor_ids = itertools.count(1000)
        self.transactions = Transactions(self)
        self.txn = None  # the transaction of the command being run (commit and abort)
        self.profiling = {}  # database -> its profiler settings (the profile command)
        self.changes = changes.ChangeLog(self)  # the change-stream event log

    def install(self, deployment):
        for name in COMMANDS:
            deployment.commands[name] = self.handler(name)
        return self

    # ----- data access for tests -----------------------------------------------------------

    def collection(self, db, name):
        return self.client[db][name]

    def seed(self, db, name, documents):
        """Replace a collection's documents (test setup, no command involved)."""
        with self.lock:
            uniques.invalidate_unique_tables()
            coll = self.collection(db, name)
            coll.delete_many({})
            if documents:
                coll.insert_many([dict(d) for d in documents])

    def documents(self, db, name):
        with self.lock:
            return list(self.collection(db, name).find({}, sort=[("_id", 1)]))

    def reset(self):
        """Forget every database, cursor and retryable-write record."""
        with self.lock:
            uniques.invalidate_unique_tables()
            for name in self.client.list_database_names():
                self.client.drop_database(name)
            self.cursors.clear()
            self.time_limited_cursors.clear()
            self.sessions.clear()
            self.executed.clear()
            self.transactions.clear()
            self.profiling.clear()
            self.changes = changes.ChangeLog(self)

    # ----- commands ------------------------------------------------------------------------

    def handler(self, name):
        run = COMMANDS[name]

        def handle(server, cmd, state):
            started = time.monotonic()
            reply = answer(server, cmd, state)
            reply = _over_time(name, cmd, reply, time.monotonic() - started + waits.pending())
            with self.lock:
                profiler.record(self, name, cmd, reply, (time.monotonic() - started) * 1000,
                                state)
            return reply

        def answer(server, cmd, state):
            def execute(target, cmd):
                try:
                    views.check_command(target, name, cmd)
                    default = views.default_collation(target, name, cmd)
                    with collation.applied(cmd.get("collation"), default):
                        return self._recorded(target, name, cmd, lambda: run(
                            target, server, reads.evaluate_let(cmd)))
                except Exception as exc:  # the engine never takes the server down
                    return engine_error(exc).reply()

            with self.lock:
                expressions.command_started()
                self._note_session(cmd)
                key = self._retry_key(name, cmd)
                if key is not None and key in self.executed:
                    return self.executed[key]
                try:
                    self.txn = self.transactions.enter(
                        name, cmd, server.address, getattr(server, "role", None) == "mongos")
                    if self.txn is not None and name not in ("commitTransaction",
                                                             "abortTransaction"):
                        uniques.invalidate_unique_tables()
                        return self.transactions.run(self.txn, name, cmd,
                                                     lambda view: execute(view, cmd))
                    if name in INVALIDATING or name == "commitTransaction":
                        uniques.invalidate_unique_tables()
                    reply = self.transactions.snapshot_read(name, cmd, lambda v: execute(v, cmd))
                    if reply is None:
                        reply = self.transactions.outside(name, cmd, lambda s: execute(s, cmd))
                    oplog.note(self, name, cmd, reply)
                except CommandError as exc:
                    return exc.reply()
                finally:
                    self.txn = None
                if key is not None and reply.get("ok"):
                    self.executed[key] = reply
                cursor_id = (reply.get("cursor") or {}).get("id")
                if cmd.get("maxTimeMS") and cursor_id:
                    self.time_limited_cursors.add(cursor_id)
                return reply
        return handle

    def _recorded(self, target, name, cmd, run):
        """Run a command, writing what it changed to the change-stream log (a transaction's
        writes run on a view of the store, and are not recorded)."""
        if target is not self:
            return run()
        return self.changes.capture(name, cmd, run)

    def await_seconds(self, cmd):
        """How long a getMore may wait for data (an awaitData change stream or tailable
        cursor with nothing to return yet), or None: answer now."""
        cursor_id = cmd.get("getMore")
        if not isinstance(cursor_id, int):  # any id at all: the getMore itself says what is wrong
            return None
        with self.lock:
            cursor = self.cursors.get(cursor_id)
            if isinstance(cursor, tailable.TailCursor):
                if not cursor.await_data or tailable.pending(self, cursor):
                    return None
            elif not isinstance(cursor, changes.ChangeCursor) or changes.pending(self, cursor):
                return None
        wait_ms = cmd.get("maxTimeMS", 1000)
        return wait_ms / 1000 if isinstance(wait_ms, int) and wait_ms > 0 else None

    def local_sessions(self, cmd):
        """The logical sessions commands have used ($listLocalSessions), this one's
        included, at most the last SESSIONS_KEPT."""
        with self.lock:
            self._note_session(cmd)
            return list(self.sessions.values())

    def _note_session(self, cmd):
        lsid = cmd.get("lsid")
        if isinstance(lsid, dict) and "id" in lsid:
            self.sessions.pop(bytes(lsid["id"]), None)
            self.sessions[bytes(lsid["id"])] = lsid
            while len(self.sessions) > SESSIONS_KEPT:
                self.sessions.pop(next(iter(self.sessions)))

    def time_limited(self, name, cmd):
        """Whether a command runs with a time limit: its own maxTimeMS, or a getMore of a
        cursor opened with one (fail point maxTimeAlwaysTimeOut)."""
        if cmd.get("maxTimeMS"):
            return True
        with self.lock:
            return name == "getMore" and cmd.get("getMore") in self.time_limited_cursors

    def executed_before(self, cmd):
        """Whether this retryable write (lsid, txnNumber) already ran: its retry is answered
        from the first execution."""
        with self.lock:
            return self._retry_key(next(iter(cmd), ""), cmd) in self.executed

    @staticmethod
    def _retry_key(name, cmd):
        if name in RETRYABLE_WRITES and "txnNumber" in cmd and "lsid" in cmd \
                and "autocommit" not in cmd:
            return bytes(cmd["lsid"]["id"]), cmd["txnNumber"]
        return None

    def cursor_reply(self, server, ns, docs, batch_size=None, single_batch=False, key="firstBatch"):
        """A cursor reply; what does not fit the first batch stays for getMore."""
        end = batch_length(docs, batch_size)
        batch, rest = docs[:end], [] if single_batch else docs[end:]
        cursor_id = 0
        if rest:
            cursor_id = next(self._cursor_ids)
            self.cursors[cursor_id] = Cursor(ns, rest, server.address)
        return {"ok": 1, "cursor": {"id": cursor_id, "ns": f"{ns[0]}.{ns[1]}", key: batch}}

    def get_more(self, server, cmd):
        cursor_id = _long(cmd.get("getMore"), "getMore.getMore")
        cursor = self.cursors.get(cursor_id)
        if cursor is None or cursor.server != server.address:
            raise CommandError(43, f"cursor id {cursor_id} not found")
        if isinstance(cursor, changes.ChangeCursor):
            return changes.get_more(self, cursor_id, cursor, cmd, reads.pipeline_runner(
                self, cmd["$db"]))
        if cmd.get("collection") != cursor.ns[1]:
            raise CommandError(13, f"Requested getMore on namespace '{cmd['$db']}."
                                   f"{cmd.get('collection')}', but cursor belongs to a "
                                   f"different namespace {cursor.ns[0]}.{cursor.ns[1]}")
        if isinstance(cursor, tailable.TailCursor):
            return tailable.get_more(self, cursor_id, cursor, cmd)
        size = cmd.get("batchSize") or len(cursor.docs)
        end = batch_length(cursor.docs, size)
        batch, cursor.docs = cursor.docs[:end], cursor.docs[end:]
        # A batch filled to its batchSize leaves the cursor open even when nothing is left:
        # the server finds the end on the next getMore, as a query plan finds it by asking.
        if not cursor.docs and not (cmd.get("batchSize") and len(batch) == size):
            del self.cursors[cursor_id]
            cursor_id = 0
        ns = cursor.ns
        return {"ok": 1, "cursor": {"id": cursor_id, "ns": f"{ns[0]}.{ns[1]}",
                                    "nextBatch": batch}}

    def kill_cursors(self, server, cmd):
        killed, missing = [], []
        for i, cursor_id in enumerate(cmd.get("cursors", [])):
            _long(cursor_id, f"killCursors.cursors.{i}")
            (killed if self.cursors.pop(cursor_id, None) is not None else missing).append(cursor_id)
        return {"ok": 1, "cursorsKilled": killed, "cursorsNotFound": missing,
                "cursorsAlive": [], "cursorsUnknown": []}


def _long(value, field):
    """A cursor id: getMore's and killCursors' are longs, and the server's IDL refuses any
    other type, an int32 of the same value included (TypeMismatch)."""
    if type(value) is not Int64:
        kind = "int" if isinstance(value, int) and not isinstance(value, bool) else \
            type(value).__name__
        raise CommandError(14, f"BSON field '{field}' is the wrong type '{kind}', expected "
                               f"type 'long'")
    return value


TIMED_READS = frozenset({"find", "aggregate", "count", "distinct"})


def _over_time(name, cmd, reply, elapsed):
    """A read that ran longer than its maxTimeMS is MaxTimeMSExpired (50), as the server
    interrupts it (here it runs to its end first: only slow JavaScript takes that long, and
    the script's sleeping, ``waits``, counts)."""
    limit = cmd.get("maxTimeMS")
    if name in TIMED_READS and isinstance(limit, int) and not isinstance(limit, bool) and \
            limit > 0 and elapsed * 1000 > limit and reply.get("ok"):
        waits.replace(limit / 1000)  # the server interrupts the read at its limit
        return CommandError(50, "operation exceeded time limit").reply()
    return reply


def _killed(store, lsids):
    """killSessions (a list of lsids) and killAllSessions: their transactions are aborted."""
    if lsids is not None and not isinstance(lsids, list):
        raise CommandError(14, f"BSON field 'killSessions' is the wrong type "
                               f"'{type(lsids).__name__}', expected type 'array'")
    store.transactions.end(lsids)
    return {"ok": 1}


def reply_for(exc):
    """The reply for an exception raised outside a handler (used by the deployment)."""
    return engine_error(exc).reply() if not isinstance(exc, CommandError) else exc.reply()


__all__ = ["Store", "error_reply"]
