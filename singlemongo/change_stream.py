"""Change streams (as ``pymongo.change_stream``), on the server's one socket: the stream is an
aggregate with ``$changeStream`` and its getMores, and between two of them the socket serves
any other operation of the program (change streams spec).

The resume token is cached from every document and every batch's ``postBatchResumeToken``;
a resumable error (a network error, or the server's ResumableChangeStreamError label) is
followed by one resume: the old cursor is closed and the aggregate runs again from the cached
token, selecting a server the single-threaded way (a scan inline when the topology is stale).
"""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional, Sequence
from singlemongo.base_object import Generic

from singlemongo.command_cursor import CommandCursor
from singlemongo.errors import ConnectionFailure, InvalidOperation, OperationFailure, PyMongoError
from singlemongo.typings import _DocumentType

if TYPE_CHECKING:
    from types import TracebackType

    from bson.timestamp import Timestamp

# Change Streams, "Resumable Error": codes a pre-4.4 server's getMore fails with that allow a
# resume (4.4+ label them ResumableChangeStreamError instead).
RESUMABLE_CODES = frozenset({6, 7, 43, 63, 89, 91, 133, 150, 189, 234, 262, 9001, 10107,
                             11600, 11602, 13388, 13435, 13436})


class _ChangeStreamCursor(CommandCursor[_DocumentType]):
    """The aggregate's cursor, keeping each batch's postBatchResumeToken and the aggregate's
    operationTime."""

    post_batch_resume_token: Any = None
    operation_time: Any = None
    _iteration = True  # CSOT, "Change Streams": timeoutMode ITERATION

    def _take(self, outcome: Any, key: str) -> None:
        if self.operation_time is None:
            self.operation_time = outcome.reply.get("operationTime")
        super()._take(outcome, key)

    def _take_reply(self, reply: Mapping[str, Any], key: str, command: str = "getMore") -> None:
        super()._take_reply(reply, key, command)  # its shape checked before any field is read
        token = reply["cursor"].get("postBatchResumeToken")
        if token is not None:
            self.post_batch_resume_token = token


def resumable(exc: PyMongoError, max_wire_version: int) -> bool:
    """Change Streams, "Resumable Error": network errors, CursorNotFound, the server's label
    (4.4+, wire version 9), or one of RESUMABLE_CODES from an older server."""
    if isinstance(exc, ConnectionFailure):
        return not exc.timeout
    if isinstance(exc, OperationFailure):
        if exc.code == 43:  # CursorNotFound: the server cannot tell it was a change stream's
            return True
        if exc.has_error_label("ResumableChangeStreamError"):
            return True
        return max_wire_version < 9 and exc.code in RESUMABLE_CODES
    return False


class ChangeStream(Generic[_DocumentType]):
    """A change stream over a collection, a database or a whole deployment (``watch()``):
    iterate it, or call ``try_next()`` to poll; ``resume_token`` continues it later."""

    def __init__(self, target: Any, pipeline: Optional[Sequence[Mapping[str, Any]]],
                 full_document: Optional[str], resume_after: Optional[Mapping[str, Any]],
                 max_await_time_ms: Optional[int], batch_size: Optional[int], collation: Any,
                 start_at_operation_time: Optional[Timestamp], session: Any,
                 start_after: Optional[Mapping[str, Any]], comment: Any = None,
                 full_document_before_change: Optional[str] = None,
                 show_expanded_events: Optional[bool] = None) -> None:
        if pipeline is None:
            pipeline = []
        if not isinstance(pipeline, (list, tuple)):
            raise TypeError(f"pipeline must be a list, not {type(pipeline).__name__}")
        for name, value in (("full_document", full_document),
                            ("full_document_before_change", full_document_before_change)):
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be a string, not {value!r}")
        self._target = target
        self._scope: str = target._watch_scope  # "collection", "database" or "cluster"
        self._pipeline = list(pipeline)
        self._stage_options = {k: v for k, v in (
            ("fullDocument", full_document),
            ("fullDocumentBeforeChange", full_document_before_change),
            ("showExpandedEvents", show_expanded_events)) if v is not None}
        self._max_await_time_ms = max_await_time_ms
        self._batch_size = batch_size
        self._collation = collation
        self._session = session
        self._comment = comment
        self._resume_token = copy.deepcopy(start_after or resume_after)
        self._uses_start_after = start_after is not None
        self._start_at_operation_time = start_at_operation_time
        self._closed = False
        self._resume_pending = False  # a next() timed out: the next one resumes first
        self._cursor = self._create_cursor()
        # The timeoutMS the aggregate ran within (the cursor kept it): each next() gets it.
        self._timeout_s = self._cursor._timeout_s
        self._topology = self._cursor._topology

    # ----- the aggregate -------------------------------------------------------------------

    def _stage(self) -> dict[str, Any]:
        options: dict[str, Any] = dict(self._stage_options)
        if self._scope == "cluster":
            options["allChangesForCluster"] = True
        if self._resume_token is not None:
            options["startAfter" if self._uses_start_after else "resumeAfter"] = \
                self._resume_token
        elif self._start_at_operation_time is not None:
            options["startAtOperationTime"] = self._start_at_operation_time
        return {"$changeStream": options}

    def _create_cursor(self) -> _ChangeStreamCursor[_DocumentType]:
        from singlemongo.collection_queries import _aggregate
        target = self._target.admin if self._scope == "cluster" else self._target
        name = self._target.name if self._scope == "collection" else 1
        kwargs: dict[str, Any] = {}
        if self._batch_size is not None:
            kwargs["batchSize"] = self._batch_size
        if self._max_await_time_ms is not None:
            kwargs["maxAwaitTimeMS"] = self._max_await_time_ms
        if self._collation is not None:
            kwargs["collation"] = self._collation
        cursor: _ChangeStreamCursor[_DocumentType] = _aggregate(  # type: ignore[assignment]
            target, name, [self._stage(), *self._pipeline], None, self._comment, kwargs,
            self._session, _ChangeStreamCursor)
        if not cursor._buffer and cursor.post_batch_resume_token is not None:
            # An empty first batch: its postBatchResumeToken is where a resume starts.
            self._resume_token = copy.deepcopy(cursor.post_batch_resume_token)
            self._start_at_operation_time = None
        elif self._resume_token is None and self._start_at_operation_time is None:
            self._start_at_operation_time = cursor.operation_time  # "startAtOperationTime"
        return cursor

    def _max_wire_version(self, exc: PyMongoError) -> int:
        known = getattr(exc, "max_wire_version", None)
        if known is not None:  # the connection's hello: a load balancer's description has none
            return known
        found = self._topology.description.server_descriptions().get(self._cursor.address)
        return (found.max_wire_version if found is not None else None) or 0

    def _resume(self) -> None:
        """Change Streams, "Resume Process": close the cursor, run the aggregate again."""
        try:
            self._cursor.close()
        except PyMongoError:
            pass
        self._resume_pending = True  # until the aggregate succeeds
        # "Resume Process": the resume's selection may wait serverSelectionTimeoutMS for a
        # primary (an election), as PyMongo's does; trying once would end the stream.
        with self._topology.selection_may_wait():
            self._cursor = self._create_cursor()
        self._resume_pending = False

    # ----- PyMongo's API -------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        """Whether the stream may return more changes (False once closed or invalidated)."""
        return not self._closed

    @property
    def resume_token(self) -> Optional[Mapping[str, Any]]:
        """The token to resume after the last change returned (or the last batch seen)."""
        return copy.deepcopy(self._resume_token)

    def close(self) -> None:
        """Close the stream and kill its server cursor."""
        self._closed = True
        self._cursor.close()

    def _call_deadline(self) -> Any:
        """CSOT, "Change Streams": the timeoutMS the stream was made with bounds each
        next()/try_next() call, its getMores and any resume together (a ``timeout()`` block
        around the call overrides it)."""
        what = f"timeoutMS {(self._timeout_s or 0) * 1000:.0f} (each next() of the stream)"
        return self._topology.new_deadline(self._timeout_s, what)

    def try_next(self) -> Optional[_DocumentType]:
        """The next change, or None if there is none yet (at most one getMore, which waits
        up to ``max_await_time_ms`` on the server, and at most one resume). After a timeout
        the stream stays open, and the next call resumes it first."""
        if self._closed:
            raise StopIteration
        with self._topology.timeout_scope(self._call_deadline()):
            return self._try_next()

    def _try_next(self) -> Optional[_DocumentType]:
        try:
            if self._resume_pending:
                self._resume()
            try:
                change = self._cursor.try_next()
            except PyMongoError as exc:
                if not resumable(exc, self._max_wire_version(exc)):
                    raise
                self._resume()  # once: an error of the resumed cursor is the caller's
                change = self._cursor.try_next()
        except PyMongoError as exc:
            if not exc.timeout:
                self.close()
            else:  # CSOT, "Change Streams": not invalidated; the next call resumes
                self._resume_pending = True
            raise
        except BaseException:
            # An interrupt (Ctrl-C, a signal's exception) closes the stream at once: its
            # killCursors waits for the client's next operation, never for a silent server.
            self._closed = True
            self._cursor._defer_kill()
            raise
        if not self._cursor.alive:
            self._closed = True
        return self._cache_token(change)

    def _cache_token(self, change: Optional[_DocumentType]) -> Optional[_DocumentType]:
        batch_token = self._cursor.post_batch_resume_token
        if change is None:
            if batch_token is not None:
                self._resume_token, self._start_at_operation_time = batch_token, None
            return None
        try:
            token = change["_id"]  # type: ignore[index]
        except KeyError:
            self.close()
            raise InvalidOperation("Cannot provide resume functionality when the resume token "
                                   "is missing (the pipeline removed the change's _id).")
        if not self._cursor._buffer and batch_token is not None:
            token = batch_token
        self._uses_start_after = False
        self._resume_token, self._start_at_operation_time = copy.deepcopy(token), None
        return change

    def next(self) -> _DocumentType:
        """The next change, waiting for one (getMore after getMore) while the stream lives,
        within the stream's timeoutMS if it has one (a timeout error leaves the stream open:
        call next() again, or close it and watch again with a longer timeout)."""
        if self._closed:
            raise StopIteration
        with self._topology.timeout_scope(self._call_deadline()):
            while self.alive:
                change = self._try_next()
                if change is not None:
                    return change
        raise StopIteration

    __next__ = next

    def __iter__(self) -> Iterator[_DocumentType]:
        return self

    def __enter__(self) -> ChangeStream[_DocumentType]:
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()


class CollectionChangeStream(ChangeStream[_DocumentType]):
    """A change stream on a collection."""


class DatabaseChangeStream(ChangeStream[_DocumentType]):
    """A change stream on a database."""


class ClusterChangeStream(DatabaseChangeStream[_DocumentType]):
    """A change stream on a whole deployment."""


# Watchable._watch_scope -> the class its watch() returns.
STREAMS: dict[str, type[ChangeStream[Any]]] = {
    "collection": CollectionChangeStream, "database": DatabaseChangeStream,
    "cluster": ClusterChangeStream}
