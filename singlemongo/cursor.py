"""Cursors: getMore and killCursors go to the server (and connection) that opened the cursor.

A cursor is closed when exhausted, on ``close()``, and when garbage collected: the finalizer
does no I/O, it only queues the cursor id; the next operation kills it inline.
"""
import os
from collections import deque

from bson import Int64

from .monitoring import command_monitoring
from .errors import ConnectionFailure, CursorNotFound, InvalidOperation, OperationFailure
from .engine.operation import Request, execute
from .sdam.address import format_address


class Cursor:
    def __init__(self, collection, command, criteria, limit=0, batch_size=0, retry="read",
                 is_read=True):
        self._collection = collection
        self._topology = collection.database.client._topology
        self._command = command
        self._criteria = criteria
        self._limit = abs(limit or 0)
        self._batch_size = batch_size or 0
        self._retry = retry
        self._is_read = is_read
        self._buffer = deque()
        self._id = None  # None: not started; 0: exhausted or closed
        self._address = None
        self._session = None
        self._ns = None
        self._returned = 0
        self._pid = os.getpid()

    def __repr__(self):
        return f"<Cursor on {self._collection.full_name}>"

    def __iter__(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def alive(self):
        return self._id is None or self._id != 0 or bool(self._buffer)

    @property
    def cursor_id(self):
        return self._id

    @property
    def address(self):
        return self._address

    def _take(self, cursor, key):
        self._id = cursor["id"]
        self._buffer.extend(cursor[key])
        db, _, coll = cursor.get("ns", self._collection.full_name).partition(".")
        self._ns = (db, coll)
        if self._id == 0:
            self._release_session()

    def _start(self):
        outcome = execute(self._topology, Request(
            self._collection.database.name, self._command, self._criteria, self._is_read,
            self._retry, keep_session=True))
        self._address = outcome.server.address
        self._session = outcome.session
        self._take(outcome.reply["cursor"], "firstBatch")

    def __next__(self):
        if self._id is None:
            self._start()
        while not self._buffer:
            if self._id == 0:
                raise StopIteration
            self._get_more()
        self._returned += 1
        doc = self._buffer.popleft()
        if self._limit and self._returned >= self._limit:
            self._buffer.clear()
            self.close()
        return doc

    next = __next__

    def to_list(self, length=None):
        out = []
        for doc in self:
            out.append(doc)
            if length is not None and len(out) >= length:
                break
        return out

    def _forked(self):
        """True in a forked child: this cursor's connection belongs to the parent."""
        return self._pid != os.getpid()

    def _connection(self):
        self._topology.check_open()
        conn = self._topology.connections.get(self._address)
        if conn is None or conn.closed:
            self._id = 0
            self._release_session()
            raise CursorNotFound(
                f"the connection to {format_address(self._address)} that opened this cursor "
                f"was closed, and a cursor cannot move to another connection; run the query "
                f"again", 43, {}, self._address)
        return conn

    def _get_more(self):
        if self._forked():
            raise InvalidOperation(
                f"this cursor was opened by process {self._pid} before a fork; a forked process "
                f"cannot continue it (its connection belongs to the parent): run the query again")
        conn = self._connection()
        db, coll = self._ns
        cmd = {"getMore": Int64(self._id), "collection": coll}
        batch = self._batch_size
        if self._limit:
            remaining = self._limit - self._returned
            batch = min(batch, remaining) if batch else remaining
        if batch:
            cmd["batchSize"] = batch
        try:
            # The same attempt loop as every command (overload retries, client backpressure),
            # pinned to the connection that opened the cursor.
            outcome = execute(self._topology, Request(
                db, cmd, self._criteria, is_read=False, session=self._session,
                keep_session=True, pinned=conn))
        except ConnectionFailure:
            self._id = 0
            self._release_session(dirty=True)
            raise
        except OperationFailure:
            self.close()  # after the last failed getMore: killCursors, the session freed
            raise
        self._take(outcome.reply["cursor"], "nextBatch")

    def _socket_timeout(self):
        ms = self._topology.options.socket_timeout_ms
        return ms / 1000.0 if ms else None

    def _release_session(self, dirty=False):
        if self._session is not None:
            self._session.dirty = self._session.dirty or dirty
            self._topology.sessions.release(
                self._session, self._topology.description.logical_session_timeout_minutes)
            self._session = None

    def close(self):
        """Kill the server-side cursor (if any) on its own connection, and free the session.
        In a forked child nothing is sent: the cursor is the parent's."""
        if self._forked():
            self._id, self._session = 0, None
            self._buffer.clear()
            return
        if self._id:
            conn = self._topology.connections.get(self._address)
            if conn is not None and not conn.closed:
                db, coll = self._ns
                try:
                    command_monitoring.run(self._topology.events, self._topology.clock, conn, db,
                                           {"killCursors": coll, "cursors": [Int64(self._id)]},
                                           self._socket_timeout())
                except ConnectionFailure:
                    pass
        self._id = 0
        self._release_session()

    def __del__(self):
        try:
            if self._forked():
                return  # the parent's cursor: not the child's to kill
            if self._id:
                self._topology.kill_queue.append((self._address, *self._ns, self._id))
                self._id = 0
            self._release_session()
        except Exception:
            pass

    def rewind(self):
        raise InvalidOperation("cursors cannot be rewound; run the query again")
