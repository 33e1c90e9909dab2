"""What every server cursor shares (``_ServerCursor``): find's ``Cursor`` (cursor.py) and
``CommandCursor`` (command_cursor.py: aggregate, list_indexes, list_collections,
list_databases). getMore and killCursors go to the server and connection that opened the
cursor. A cursor is closed when exhausted, on ``close()`` and when garbage collected: the
finalizer does no I/O, it only queues the cursor id, and the next operation kills it inline.
In a forked child a parent's cursor is never continued or killed.
"""
from __future__ import annotations

import os
import weakref
from collections import deque
from types import TracebackType
TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Any, Iterator, Mapping, Optional

from bson import Int64

from singlemongo.clock import Deadline
from singlemongo.base_object import Generic, _DocumentType
from singlemongo.engine.checkout import checkout_pinned
from singlemongo.engine.operation import execute
from singlemongo.engine.request import Outcome, Request
from singlemongo import errors
from singlemongo.errors import ConnectionFailure, InvalidOperation, OperationFailure, PyMongoError
from singlemongo.replies import check
from singlemongo.sdam.address import format_address

if TYPE_CHECKING:
    from singlemongo.collection import Collection
    from singlemongo.typings import _Address

BATCH_FIELDS = {"cursor": {"firstBatch": 1, "nextBatch": 1}}  # where the user's documents are
# Errors after which the server has no cursor any more: no killCursors is sent. On a tailable
# cursor they end it quietly, as in PyMongo (alive becomes False; 136: the capped collection
# rolled over the document the cursor stood on).
CURSOR_CLOSED_ERRORS = frozenset({43, 175, 237, 136})  # CursorNotFound, QueryPlanKilled,
# CursorKilled, CappedPositionLost


class _ServerCursor(Generic[_DocumentType]):
    """The state of a cursor on the server and its getMore/killCursors."""

    _limit = 0
    _batch_size = 0
    _exhaust = False  # find with CursorType.EXHAUST
    _abandoned: Optional[str] = None  # why its exhaust stream was given up (exhaust.py)
    # PyMongo's Cursor.next() refreshes once: an empty getMore batch ends that next(), the
    # cursor staying alive; its CommandCursor.next() refreshes while the cursor is alive.
    _one_refresh_per_next = False
    # CSOT, "Tailable Cursors": timeoutMode ITERATION, the timeoutMS in force when the cursor
    # was made bounds each next() call anew (False: CURSOR_LIFETIME, one deadline for all).
    _iteration = False
    _flags = 0  # find's cursor flags (2: tailable); a command's cursor has none

    def __init__(self, collection: Collection[_DocumentType]) -> None:
        self._collection = collection
        self._topology = collection._topology
        self._buffer: deque[_DocumentType] = deque()
        self._id: Optional[int] = None  # None: not started; 0: exhausted or closed
        self._address: Optional[_Address] = None
        self._session: Any = None
        self._explicit_session: Any = None  # the user's ClientSession: theirs to end
        self._ns: Optional[tuple[str, str]] = None
        self._returned = 0  # documents returned, counted only under a limit (its one reader)
        self._retrieved = 0
        self._comment: Any = None
        self._max_await_time_ms: Optional[int] = None
        self._pid = os.getpid()
        self._check_in: Any = None  # the pinned connection's check-in, if it is kept
        self._live_within(None)

    def _live_within(self, deadline: Any) -> None:
        """CSOT, "Cursors" (timeoutMode CURSOR_LIFETIME): the timeoutMS in force when the
        cursor was made bounds its first command and every getMore together (``deadline``:
        the one its command already ran within); close() refreshes that timeoutMS."""
        topology = self._topology
        if topology is None:  # a collection of a client of another kind: made, never run
            in_force = None
        else:
            in_force = deadline or topology.current_deadline()
        self._timeout_s = in_force.seconds if in_force is not None else None
        self._deadline = deadline

    def _lifetime(self) -> Any:
        """The deadline of a next() call: the cursor's, which starts with its first command,
        or for timeoutMode ITERATION (tailable cursors) a fresh one of the original timeoutMS
        unless a ``timeout()`` block overrides it (None: the timeoutMS in force, if any)."""
        if self._iteration and self._id is not None:
            return self._topology.new_deadline(
                self._timeout_s, f"timeoutMS {(self._timeout_s or 0) * 1000:.0f} (each next())")
        if self._deadline is None and self._timeout_s is not None:
            self._deadline = Deadline(self._topology.clock, self._timeout_s,
                                      f"timeoutMS {self._timeout_s * 1000:.0f} (the cursor's)")
        return self._deadline

    # ----- PyMongo's properties ------------------------------------------------------------

    @property
    def collection(self) -> Collection[_DocumentType]:
        """The collection this cursor reads."""
        return self._collection

    @property
    def alive(self) -> bool:
        """Whether more documents may come: some are buffered, or the server cursor is open
        (or the query has not run yet)."""
        return bool(self._buffer) or self._id != 0

    @property
    def cursor_id(self) -> Optional[int]:
        """The server's cursor id (0 once exhausted or closed; None before the first batch)."""
        return self._id

    @property
    def address(self) -> Optional[_Address]:
        """(host, port) of the server the cursor is on, once it runs."""
        return self._address

    @property
    def retrieved(self) -> int:
        """How many documents the server has returned so far."""
        return self._retrieved

    @property
    def session(self) -> Any:
        """The explicit session, if one was given (implicit sessions are not exposed)."""
        return None

    # ----- iteration -----------------------------------------------------------------------

    def __iter__(self) -> Iterator[_DocumentType]:
        return self

    def __enter__(self) -> _ServerCursor[_DocumentType]:
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()

    def _refresh(self) -> None:
        """Fill the buffer: the first batch, or a getMore."""
        if self._id is None:
            self._start()
        elif self._id:
            self._get_more()

    def _start(self) -> None:
        raise NotImplementedError

    def __next__(self) -> _DocumentType:
        buffer = self._buffer
        if buffer and not self._limit:  # a document waiting, no limit to count it against
            # Not counted in _returned: only a limit reads it (and a limit is set before the
            # first batch, so a limited cursor never takes this path).
            return buffer.popleft()  # type: ignore[no-any-return]
        return self._next_after_checks()

    def _next_after_checks(self) -> _DocumentType:
        refreshed = False
        deadline = None
        while not self._buffer:
            if self._id == 0 or (refreshed and self._one_refresh_per_next):
                raise StopIteration
            # CSOT, "Cursors": one deadline for the whole call, every getMore in it.
            deadline = deadline or self._lifetime()
            with self._topology.timeout_scope(deadline):
                self._refresh()
            refreshed = True
        self._returned += 1
        doc = self._buffer.popleft()
        if self._limit and self._returned >= abs(self._limit):
            self._buffer.clear()
            if self._id:
                self.close()
            self._id = 0
        return doc

    def next(self) -> _DocumentType:
        """The next document; StopIteration when there is none."""
        return self.__next__()

    def try_next(self) -> Optional[_DocumentType]:
        """The next document, or None if there is none yet (at most one getMore is sent,
        as PyMongo's)."""
        one, self._one_refresh_per_next = self._one_refresh_per_next, True
        try:
            return self.__next__()
        except StopIteration:
            return None
        finally:
            self._one_refresh_per_next = one

    def to_list(self, length: Optional[int] = None) -> list[_DocumentType]:
        """The remaining documents (at most ``length``) as a list."""
        if length is not None and (isinstance(length, bool) or not isinstance(length, int)
                                   or length < 1):
            raise ValueError(f"to_list length must be a positive integer, not {length!r}")
        out: list[_DocumentType] = []
        # As PyMongo's: it ends at the first empty batch, so a change stream or tailable
        # cursor (alive for ever) returns what there is instead of waiting for ever.
        one, self._one_refresh_per_next = self._one_refresh_per_next, True
        try:
            while length is None or len(out) < length:
                out.append(self.__next__())
        except StopIteration:
            pass
        finally:
            self._one_refresh_per_next = one
        return out

    # ----- the server cursor ---------------------------------------------------------------

    def _take(self, outcome: Outcome, key: str) -> None:
        if self._address is None:
            self._address = outcome.server.address
            self._session = outcome.session
            self._check_in = outcome.check_in  # behind a load balancer (engine/cmap_events.py)
        self._take_reply(outcome.reply, key, outcome.command_name)

    def _take_reply(self, reply: Mapping[str, Any], key: str, command: str = "getMore") -> None:
        """Take a cursor reply whose shape is checked first (MalformedReply names a field of
        another type: nothing of it is used)."""
        self._take_cursor(check(key, reply, command or "a cursor command",
                                address=self._address)["cursor"], key)

    def _take_cursor(self, cursor: Mapping[str, Any], key: str) -> None:
        self._id = Int64(cursor["id"])  # a long, as PyMongo keeps it: programs send it back
        batch = cursor[key]
        self._retrieved += len(batch)
        self._buffer.extend(batch)
        ns = cursor.get("ns")
        db, _, coll = (ns if isinstance(ns, str) else self._collection.full_name).partition(".")
        self._ns = (db, coll)
        if self._id == 0:
            self._release_session()

    def _forked(self) -> bool:
        """True in a forked child: this cursor's connection belongs to the parent."""
        return self._pid != os.getpid()

    def _connection(self) -> Any:
        self._topology.check_open()
        if self._abandoned is not None:  # its stream's connection was closed for another
            self._id = 0
            self._release_session()
            raise errors.AutoReconnect(
                f"cursor on {format_address(self._address)}: {self._abandoned}; run the "
                f"query again, or read an exhaust cursor to its end before other operations "
                f"on its server", self._address)
        conn = self._topology.cursor_connection(self._address)
        if conn is None or conn.closed:
            self._id = 0
            self._release_session()
            raise errors.CursorNotFound(
                f"the connection to {format_address(self._address)} that opened this cursor "
                f"was closed, and a cursor cannot move to another connection; run the query "
                f"again", 43, {}, address=self._address)
        return conn

    def _get_more_batch(self) -> int:
        batch = self._batch_size
        if self._limit:
            remaining = self._limit - self._returned
            batch = min(batch, remaining) if batch else remaining
        return batch

    def _get_more(self) -> None:
        if self._forked():
            raise InvalidOperation(
                f"this cursor was opened by process {self._pid} before a fork; a forked process "
                f"cannot continue it (its connection belongs to the parent): run the query again")
        conn = self._connection()
        if conn.more_to_come:  # this cursor's exhaust stream: the server sends the batch
            self._receive_batch(conn)
            return
        assert self._ns is not None and self._id is not None
        db, coll = self._ns
        cmd: dict[str, Any] = {"getMore": Int64(self._id), "collection": coll}
        batch = self._get_more_batch()
        if batch:
            cmd["batchSize"] = batch
        if self._max_await_time_ms is not None:
            cmd["maxTimeMS"] = self._max_await_ms()
        if self._comment is not None:
            cmd["comment"] = self._comment
        try:
            # The same attempt loop as every command (overload retries, client backpressure),
            # pinned to the connection that opened the cursor.
            outcome = execute(self._topology, Request(
                db, cmd, None, is_read=False, session=self._session, keep_session=True,
                pinned=conn, codec=self._collection.codec_options, user_fields=BATCH_FIELDS,
                explicit_session=self._explicit_session,
                exhaust="allow" if self._exhaust else None))
        except ConnectionFailure as exc:
            if not exc.timeout:  # a timeout leaves the server cursor: close() kills it
                self._id = 0
            self._release_session(dirty=True)
            raise
        except OperationFailure as exc:
            if exc.code in CURSOR_CLOSED_ERRORS:
                self._id = 0  # the server has closed it already: nothing to kill
            self.close()  # after the last failed getMore: killCursors, the session freed
            if exc.code in CURSOR_CLOSED_ERRORS and self._flags & 2:
                return  # a tailable cursor's end (PyMongo's rule): alive is False
            raise
        self._take(outcome, "nextBatch")
        if conn.more_to_come:  # exhaust: the stream is this cursor's until it ends
            self._stream_command = cmd
            conn.stream_owner = weakref.WeakMethod(self._abandon)

    def _max_await_ms(self) -> int:
        """CSOT, "Tailable awaitData Cursors": a getMore waits on the server for
        min(maxAwaitTimeMS, remaining timeoutMS - minRoundTripTime), so that its empty reply
        arrives before the client gives up."""
        wait = self._max_await_time_ms
        assert wait is not None
        deadline = self._topology.deadline
        left = deadline.remaining() if deadline is not None else None
        if left is None:
            return wait
        sd = self._topology.description.server_descriptions().get(self._address)
        rtt = (sd.round_trip_time or 0.0) if sd is not None else 0.0
        return max(1, min(wait, int((left - rtt) * 1000)))

    # ----- exhaust (OP_MSG moreToCome on the cursor's connection: exhaust.py) ---------------

    def _receive_batch(self, conn: Any) -> None:
        from singlemongo.exhaust import receive_batch  # only exhaust cursors load it
        receive_batch(self, conn)

    def _abandon(self) -> None:
        """Give this cursor's stream up: another operation needs its connection (exhaust.py)."""
        from singlemongo.exhaust import abandon
        abandon(self)

    def _release_session(self, dirty: bool = False) -> None:
        if self._check_in is not None:
            check_in, self._check_in = self._check_in, None
            check_in()
        if self._session is not None and self._explicit_session is not None:
            self._session.dirty = self._session.dirty or dirty
            self._session = None  # the ClientSession returns it at end_session
        elif self._session is not None:
            self._session.dirty = self._session.dirty or dirty
            self._topology.sessions.release(
                self._session, self._topology.description.logical_session_timeout_minutes)
            self._session = None

    def close(self) -> None:
        """Kill the server-side cursor (if any) on its own connection, and free the session.
        Documents already received stay readable, as in PyMongo. In a forked child nothing is
        sent: the cursor is the parent's."""
        if self._forked():
            self._id, self._session = 0, None
            return
        conn = self._topology.cursor_connection(self._address)
        if conn is not None and conn.more_to_come and self._exhaust:
            conn.close()  # a stream cannot be killed (PyMongo's rule): the connection goes
        elif self._id and self._ns is not None and not self._topology.closed and \
                self._abandoned is None:  # an abandoned stream's cursor died with its socket
            with self._topology.operation():  # another thread's operation may hold the socket
                self._kill()
        self._id = 0
        self._release_session()

    def _kill(self) -> None:
        """killCursors as every command (overload retries, client backpressure), within the
        refreshed timeoutMS or one a ``timeout()`` block sets; without timeoutMS within
        socketTimeoutMS, else connectTimeoutMS (``kill_cursor``). The cursor's connection if
        it is open, else a new one to its server (but not behind a load balancer, where the
        cursor lived on that connection)."""
        topology = self._topology
        assert self._ns is not None and self._id is not None
        # The new connection's handshake is within the same deadline (a ``timeout()`` block
        # bounds it: Ctrl-C on a silent server must not wait connectTimeoutMS).
        with topology.timeout_scope(topology.new_deadline(self._timeout_s)):
            conn = topology.cursor_connection(self._address)
            if conn is None or conn.closed:
                if topology.options.load_balanced:
                    return
                try:
                    conn = checkout_pinned(topology, self._address)[1]
                except PyMongoError:
                    return
            from singlemongo.engine.cursors import kill_cursor
            kill_cursor(topology, conn, *self._ns, self._id, self._session,
                        self._explicit_session)

    def _defer_kill(self, finalizing: bool = False) -> None:
        """Closed without a round trip: killCursors waits in the kill queue for the client's
        next operation (the garbage collector's way; an interrupt's too)."""
        if self._forked():
            return  # the parent's cursor: not the child's to kill
        kill = bool(self._id and self._ns is not None and self._abandoned is None)
        check_in = None
        if finalizing:
            # A finalizer runs inside whatever the program is doing, on any thread: a pinned
            # connection's check-in (CMAP's event: a listener's code, a logger's import)
            # waits with the kill for the next operation, as PyMongo's close-soon queue does.
            check_in, self._check_in = self._check_in, None
        if kill or check_in is not None:
            db, collection = self._ns or (None, None)
            self._topology.defer_kill(self._address, db, collection,
                                      self._id if kill else 0, check_in)
        self._id = 0
        self._release_session()

    def __del__(self) -> None:
        try:
            self._defer_kill(finalizing=True)
        except Exception:
            pass
