"""A collection's reads beyond find (as ``pymongo.collection``): the counts, distinct,
aggregate and raw batches. A mixin of ``Collection`` loaded at the first use of one of its
methods: a one-off find never runs them. An aggregate ending in ``$out`` or ``$merge`` runs
where the server selection spec says (``AGGREGATE_WRITE``)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional

from singlemongo.command_cursor import CommandCursor
from singlemongo.base_object import Generic, _DocumentType
from singlemongo.arguments import hint_value, validate_collation, validate_is_document_type
from singlemongo.engine.operation import execute
from singlemongo.engine.request import Request
from singlemongo.errors import ConfigurationError, OperationFailure
from singlemongo.selection import AGGREGATE_WRITE, Criteria
from singlemongo.replies import check

if TYPE_CHECKING:
    from bson.codec_options import CodecOptions

    from singlemongo.collection import Collection
    from singlemongo.raw_batches import RawBatchCommandCursor, RawBatchCursor
    from singlemongo.typings import _IndexKeyHint, _Pipeline

NAMESPACE_NOT_FOUND = 26


class QueryMethods(Generic[_DocumentType]):
    """The reads of Collection beyond find (a mixin: Collection is the class users see)."""

    def _as_collection(self) -> Collection[_DocumentType]:
        # QueryMethods only lives in a Collection (no cast(): a call)
        return self  # type: ignore[return-value]

    if TYPE_CHECKING:  # what Collection gives the methods below
        _name: str
        _codec_options: CodecOptions[Any]

        def _read_concern_document(self) -> Optional[dict[str, Any]]: ...

        def _read_command(self, cmd: dict[str, Any], read_preference: Any = None,
                          user_fields: Any = None, codec: Optional[CodecOptions[Any]] = None,
                          retry: Optional[str] = "read", keep_session: bool = False,
                          session: Any = None) -> Any: ...

    def find_raw_batches(self, filter: Optional[Mapping[str, Any]] = None,
                         projection: Any = None, skip: int = 0, limit: int = 0,
                         no_cursor_timeout: bool = False, cursor_type: int = 0,
                         sort: Any = None, allow_partial_results: bool = False,
                         oplog_replay: bool = False, batch_size: int = 0,
                         collation: Any = None, hint: Any = None,
                         max_scan: Optional[int] = None, max_time_ms: Optional[int] = None,
                         max: Any = None, min: Any = None, return_key: Optional[bool] = None,
                         show_record_id: Optional[bool] = None,
                         snapshot: Optional[bool] = None, comment: Any = None,
                         session: Any = None, allow_disk_use: Optional[bool] = None,
                         let: Optional[Mapping[str, Any]] = None, *,
                         read_preference: Any = None) -> RawBatchCursor[_DocumentType]:
        """As ``find``, but each item is a batch of raw BSON (bytes) for a library that
        decodes BSON itself (``bson.decode_all(batch)``)."""
        from singlemongo.raw_batches import RawBatchCursor, raw_codec
        return RawBatchCursor(raw_codec(self._as_collection()), filter, projection, skip, limit,
                              no_cursor_timeout, cursor_type, sort, allow_partial_results,
                              oplog_replay, batch_size, collation, hint, max_scan, max_time_ms,
                              max, min, return_key, show_record_id, snapshot, comment, session,
                              allow_disk_use, let, read_preference=read_preference)

    def count_documents(self, filter: Mapping[str, Any], session: Any = None,
                        comment: Any = None, **kwargs: Any) -> int:
        """How many documents match (an aggregation: exact, and honours ``skip``, ``limit``,
        ``hint``, ``collation`` and ``maxTimeMS``)."""
        pipeline: list[dict[str, Any]] = [{"$match": filter}]
        if "skip" in kwargs:
            pipeline.append({"$skip": kwargs.pop("skip")})
        if "limit" in kwargs:
            pipeline.append({"$limit": kwargs.pop("limit")})
        pipeline.append({"$group": {"_id": 1, "n": {"$sum": 1}}})
        cmd: dict[str, Any] = {"aggregate": self._name, "pipeline": pipeline, "cursor": {}}
        read_preference = kwargs.pop("read_preference", None)
        self._aggregate_options(cmd, kwargs, comment)
        try:
            reply = self._read_command(cmd, read_preference, session=session)
        except OperationFailure as exc:
            if exc.code == NAMESPACE_NOT_FOUND:  # as PyMongo: a missing namespace counts 0
                return 0
            raise
        batch = check("firstBatch", reply, "aggregate")["cursor"]["firstBatch"]
        return int(check("count", batch[0], "aggregate's $group")["n"]) if batch else 0

    def estimated_document_count(self, comment: Any = None, **kwargs: Any) -> int:
        """The collection's document count from its metadata (the ``count`` command)."""
        read_preference = kwargs.pop("read_preference", None)
        if "session" in kwargs:  # as PyMongo: the count command is not causally consistent
            raise ConfigurationError("estimated_document_count does not support sessions")
        session = None
        cmd: dict[str, Any] = {"count": self._name}
        cmd.update(kwargs)
        if comment is not None:
            cmd["comment"] = comment
        try:
            reply = self._read_command(cmd, read_preference, session=session)
        except OperationFailure as exc:
            if exc.code == NAMESPACE_NOT_FOUND:  # a missing collection has no documents
                return 0
            raise
        return int(check("count", reply, "count")["n"])

    def distinct(self, key: str, filter: Optional[Mapping[str, Any]] = None,
                 session: Any = None, comment: Any = None, hint: Optional[_IndexKeyHint] = None,
                 **kwargs: Any) -> list[Any]:
        """The distinct values of ``key`` among the documents matching ``filter``."""
        if not isinstance(key, str):
            raise TypeError(f"key must be an instance of str, not {type(key).__name__}")
        read_preference = kwargs.pop("read_preference", None)
        cmd: dict[str, Any] = {"distinct": self._name, "key": key}
        if filter is not None:
            cmd["query"] = filter
        collation = validate_collation(kwargs.pop("collation", None))
        cmd.update(kwargs)
        if comment is not None:
            cmd["comment"] = comment
        if hint is not None:
            cmd["hint"] = hint_value(hint)
        if collation is not None:
            cmd["collation"] = collation
        read_concern = self._read_concern_document()
        if read_concern is not None:
            cmd["readConcern"] = read_concern
        # The values are the collection's data: decoded with its codec options (its type
        # registry's decoders included), as PyMongo decodes them.
        return list(check("distinct", self._read_command(
            cmd, read_preference, {"values": 1}, self._codec_options, session=session),
            "distinct")["values"])

    def _aggregate_options(self, cmd: dict[str, Any], kwargs: dict[str, Any],
                           comment: Any) -> None:
        collation = validate_collation(kwargs.pop("collation", None))
        if "hint" in kwargs:
            cmd["hint"] = hint_value(kwargs.pop("hint"))
        cmd.update(kwargs)
        if comment is not None:
            cmd["comment"] = comment
        if collation is not None:
            cmd["collation"] = collation
        read_concern = self._read_concern_document()
        if read_concern is not None:
            cmd["readConcern"] = read_concern

    def aggregate(self, pipeline: _Pipeline, session: Any = None,
                  let: Optional[Mapping[str, Any]] = None, comment: Any = None,
                  **kwargs: Any) -> CommandCursor[_DocumentType]:
        """Run an aggregation now; a CommandCursor over its results. ``$out`` and ``$merge``
        run on the primary with the write concern."""
        return _aggregate(self, self._name, pipeline, let, comment, kwargs, session)

    def aggregate_raw_batches(self, pipeline: _Pipeline, session: Any = None,
                              comment: Any = None, **kwargs: Any
                              ) -> RawBatchCommandCursor[_DocumentType]:
        """As ``aggregate``, but each item is a batch of raw BSON (bytes)."""
        from singlemongo.raw_batches import RawBatchCommandCursor, raw_codec
        return _aggregate(raw_codec(self._as_collection()), self._name, pipeline, kwargs.pop("let", None),  # type: ignore[return-value]
                          comment, kwargs, session, RawBatchCommandCursor)


def _aggregate(target: Any, name: Any, pipeline: _Pipeline, let: Any, comment: Any,
               kwargs: dict[str, Any], session: Any = None,
               cursor_class: type[CommandCursor[Any]] = CommandCursor) -> CommandCursor[Any]:
    """aggregate for a collection (``name`` its name) or a database (``name`` 1)."""
    # PyMongo's checks in its order (its aggregation.py): reserved options, then the pipeline.
    if "explain" in kwargs:
        raise ConfigurationError("The explain option is not supported. Use Database.command "
                                 "instead.")
    for reserved in ("aggregate", "pipeline"):
        if reserved in kwargs:
            raise ConfigurationError(f"The {reserved} option cannot be specified as a "
                                     f"keyword argument.")
    if not isinstance(pipeline, list):
        raise TypeError(f"pipeline must be a list, not {type(pipeline).__name__}")
    catalog = getattr(target, "_catalog", None)  # a Database: its $cmd.aggregate
    coll = catalog() if catalog is not None else target
    writes = bool(pipeline) and any(stage in pipeline[-1] for stage in ("$out", "$merge"))
    batch_size = kwargs.pop("batchSize", kwargs.pop("batch_size", None))
    if batch_size is not None:
        from singlemongo.drop_in.common import validate_non_negative_integer
        batch_size = validate_non_negative_integer("batchSize", batch_size)
    user_cursor = kwargs.pop("cursor", None)  # kept as given, as PyMongo keeps it
    max_await = kwargs.pop("maxAwaitTimeMS", None)
    if max_await is not None:
        from singlemongo.csot import check_max_await
        check_max_await(coll._topology, max_await)
    read_preference = kwargs.pop("read_preference", None)
    cmd: dict[str, Any] = {"aggregate": name, "pipeline": pipeline}
    if let is not None:
        validate_is_document_type("let", let)
        cmd["let"] = let
    coll._aggregate_options(cmd, kwargs, comment)
    if not writes and cursor_class.first_batch_size is not None:
        cmd["cursor"] = {"batchSize": cursor_class.first_batch_size}
    else:
        cmd["cursor"] = {"batchSize": batch_size} if batch_size is not None and not writes \
            else {}
    if user_cursor is not None:
        if not isinstance(user_cursor, Mapping) and cmd["cursor"]:
            # PyMongo sets batchSize inside the cursor option given: a TypeError there too.
            raise TypeError(f"the cursor option must be a document, not {user_cursor!r}")
        cmd["cursor"] = {**user_cursor, **cmd["cursor"]} if isinstance(user_cursor, Mapping) \
            else user_cursor
    if writes:
        if not coll._write_concern.is_server_default:
            cmd["writeConcern"] = coll._write_concern.document
        criteria = coll._read_criteria(read_preference)
        outcome = execute(coll._topology, Request(
            coll._database.name, cmd, Criteria(AGGREGATE_WRITE, criteria.read_preference),
            True, None, keep_session=True, codec=coll._codec_options,
            user_fields={"cursor": {"firstBatch": 1}}, explicit_session=session))
    else:
        outcome = coll._read_command(cmd, read_preference,
                                     {"cursor": {"firstBatch": 1, "nextBatch": 1}},
                                     keep_session=True, session=session)
    if "cursor" not in outcome.reply:  # an old-style reply ("result"), as PyMongo reads it
        outcome.reply["cursor"] = {"id": 0, "firstBatch": outcome.reply.get("result", [])}
    return cursor_class(coll, outcome, batch_size or 0, comment, max_await_time_ms=max_await,
                        session=session)
