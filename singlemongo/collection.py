"""Collection (as ``pymongo.collection``): reads, aggregation and the collection's
administration. Reads use the read preference of the call, else of the collection, database
or client; writes go to the primary (server selection spec). Writes are in
``collection_writes.py``, find_one_and_* in ``find_and_modify.py``, indexes in ``indexes.py``,
bulk writes in ``bulk.py``."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NoReturn, Optional, Sequence, overload

from bson.codec_options import CodecOptions

from .collection_writes import WriteMethods, _raise_write_error
from .command_cursor import CommandCursor
from .common import (BaseObject, hint_value, not_callable, not_offered, validate_collation,
                     validate_collection_name, validate_is_document_type)
from .cursor import Cursor
from .engine.operation import Request, execute
from .errors import InvalidName, OperationFailure, WriteConcernError
from .find_and_modify import FindAndModifyMethods, ReturnDocument
from .read_concern import ReadConcern
from .read_preferences import to_core
from .selection.selector import AGGREGATE_WRITE, READ, WRITE, Criteria
from .typings import _DocumentType, _DocumentTypeArg, _IndexKeyHint, _Pipeline
from .write_concern import WriteConcern

if TYPE_CHECKING:
    from .command_cursor import RawBatchCommandCursor
    from .cursor import RawBatchCursor
    from .database import Database
    from .operations import IndexModel
    from .engine.topology import Topology

__all__ = ["Collection", "ReturnDocument"]
NAMESPACE_NOT_FOUND = 26


class Collection(BaseObject, WriteMethods[_DocumentType], FindAndModifyMethods[_DocumentType]):
    """A collection; ``db.name`` or ``db["name"]``. Constructing one does no I/O (unless
    ``create=True``, which sends ``create``)."""

    def __init__(self, database: Database[_DocumentType], name: str, create: bool = False,
                 codec_options: Optional[CodecOptions[Any]] = None,
                 read_preference: Any = None, write_concern: Optional[WriteConcern] = None,
                 read_concern: Optional[ReadConcern] = None, session: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(codec_options, read_preference, write_concern, read_concern, database)
        self._database = database
        self._name = validate_collection_name(name)
        self._full_name = f"{database.name}.{name}"
        if create or kwargs:
            self._create(kwargs, session)

    # ----- identity --------------------------------------------------------------------------

    @property
    def name(self) -> str:
        """The collection's name."""
        return self._name

    @property
    def full_name(self) -> str:
        """``database.collection``."""
        return self._full_name

    @property
    def database(self) -> Database[_DocumentType]:
        """The database this collection is in."""
        return self._database

    def __repr__(self) -> str:
        return f"Collection({self._database!r}, {self._name!r})"

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, Collection):
            return self._database == other._database and self._name == other._name
        return NotImplemented

    def __ne__(self, other: Any) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((self._database, self._name))

    def __bool__(self) -> NoReturn:
        raise NotImplementedError("Collection objects do not implement truth value testing or "
                                  "bool(). Please compare with None instead: collection is not "
                                  "None")

    def __getattr__(self, name: str) -> Collection[_DocumentType]:
        """A sub-collection (``db.logs.errors`` is ``logs.errors``)."""
        if name.startswith("_"):
            raise AttributeError(f"Collection has no attribute {name!r}. To access the "
                                 f"{self._full_name}.{name} collection, use "
                                 f"database['{self._full_name}.{name}'].")
        return self[name]

    def __getitem__(self, name: str) -> Collection[_DocumentType]:
        return Collection(self._database, f"{self._name}.{name}", False, self._codec_options,
                          self._read_preference_core, self._write_concern, self._read_concern)

    def __iter__(self) -> NoReturn:
        raise TypeError("'Collection' object is not iterable")

    def __next__(self) -> NoReturn:
        """Not an iterator: raises TypeError (as PyMongo's Collection)."""
        raise TypeError("'Collection' object is not iterable")

    next = __next__

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        not_callable("Collection", self._name)

    def watch(self, pipeline: Optional[_Pipeline] = None, full_document: Optional[str] = None,
              resume_after: Optional[Mapping[str, Any]] = None,
              max_await_time_ms: Optional[int] = None, batch_size: Optional[int] = None,
              collation: Any = None, start_at_operation_time: Any = None, session: Any = None,
              start_after: Optional[Mapping[str, Any]] = None, comment: Any = None,
              full_document_before_change: Optional[str] = None,
              show_expanded_events: Optional[bool] = None) -> NoReturn:
        """Not offered yet: raises NotImplementedError (README, "Differences from
        PyMongo")."""
        not_offered("change streams")

    @overload
    def with_options(self, codec_options: None = None, read_preference: Any = None,
                     write_concern: Optional[WriteConcern] = None,
                     read_concern: Optional[ReadConcern] = None) -> Collection[_DocumentType]:
        ...

    @overload
    def with_options(self, codec_options: CodecOptions[_DocumentTypeArg],
                     read_preference: Any = None, write_concern: Optional[WriteConcern] = None,
                     read_concern: Optional[ReadConcern] = None
                     ) -> Collection[_DocumentTypeArg]:
        ...

    def with_options(self, codec_options: Optional[CodecOptions[Any]] = None,
                     read_preference: Any = None, write_concern: Optional[WriteConcern] = None,
                     read_concern: Optional[ReadConcern] = None) -> Collection[Any]:
        """The same collection with some settings changed (its document type follows
        ``codec_options.document_class``)."""
        return Collection(self._database, self._name, False,
                          codec_options or self._codec_options,
                          read_preference if read_preference is not None else
                          self._read_preference_core, write_concern or self._write_concern,
                          read_concern or self._read_concern)

    # ----- plumbing --------------------------------------------------------------------------

    @property
    def _topology(self) -> Topology:
        return self._database.client._topology

    def _limits(self) -> tuple[int, int, int]:
        """(maxBsonObjectSize, maxMessageSizeBytes, maxWriteBatchSize) of the server writes go
        to, from its handshake (selecting and connecting first, as the write would)."""
        return self._topology.server_limits(Criteria(WRITE))  # type: ignore[no-any-return]

    def _read_criteria(self, read_preference: Any = None) -> Criteria:
        core = to_core(read_preference)
        return Criteria(READ, core if core is not None else self._read_preference_core)

    def _read_command(self, cmd: dict[str, Any], read_preference: Any = None,
                      user_fields: Any = None, codec: Optional[CodecOptions[Any]] = None,
                      retry: Optional[str] = "read", keep_session: bool = False,
                      session: Any = None) -> Any:
        outcome = execute(self._topology, Request(
            self._database.name, cmd, self._read_criteria(read_preference), True, retry,
            keep_session=keep_session, codec=codec or self._codec_options,
            user_fields=user_fields, explicit_session=session))
        return outcome if keep_session else outcome.reply

    def _acknowledged(self, session: Any) -> bool:
        """Whether a write is acknowledged: in a transaction always (the transaction's write
        concern applies, transactions spec), else as the write concern says."""
        return self._write_concern.acknowledged or bool(
            session is not None and session.in_transaction)

    def _write_command(self, cmd: dict[str, Any], sequences: tuple[Any, ...] = (),
                       retryable: bool = True, session: Any = None, check: bool = True,
                       user_fields: Any = None) -> Any:
        """Run a write with the collection's write concern; w: 0 sends it unacknowledged.
        ``check``: raise the write error; else return the reply whatever it holds."""
        wc = self._write_concern
        if not wc.is_server_default:
            cmd["writeConcern"] = wc.document
        try:
            outcome = execute(self._topology, Request(
                self._database.name, cmd, Criteria(WRITE), False,
                "write" if retryable else None, sequences,
                unacknowledged=not self._acknowledged(session),
                codec=self._codec_options, user_fields=user_fields, explicit_session=session))
        except WriteConcernError as exc:
            reply = exc.reply or {}
            if not check:
                return reply
            _raise_write_error({"writeErrors": reply.get("writeErrors")},
                               exc.address)  # PyMongo: a write error wins over the WCE
            raise
        if check:
            _raise_write_error(outcome.reply, outcome.server.address)
        return outcome.reply

    def _create(self, options: dict[str, Any], session: Any) -> None:
        cmd: dict[str, Any] = {"create": self._name}
        collation = validate_collation(options.pop("collation", None))
        if collation is not None:
            cmd["collation"] = collation
        cmd.update(options)
        self._write_command(cmd, retryable=False, session=session)

    # ----- reads -----------------------------------------------------------------------------

    def find(self, filter: Optional[Mapping[str, Any]] = None, projection: Any = None,
             skip: int = 0, limit: int = 0, no_cursor_timeout: bool = False,
             cursor_type: int = 0, sort: Any = None, allow_partial_results: bool = False,
             oplog_replay: bool = False, batch_size: int = 0, collation: Any = None,
             hint: Any = None, max_scan: Optional[int] = None,
             max_time_ms: Optional[int] = None, max: Any = None, min: Any = None,
             return_key: Optional[bool] = None, show_record_id: Optional[bool] = None,
             snapshot: Optional[bool] = None, comment: Any = None, session: Any = None,
             allow_disk_use: Optional[bool] = None, let: Optional[Mapping[str, Any]] = None,
             *, read_preference: Any = None) -> Cursor[_DocumentType]:
        """A Cursor over the documents matching ``filter`` (PyMongo's arguments, in its
        positional order). Nothing is sent until it is read. ``read_preference`` is
        singlemongo's extension: a read preference for this query only."""
        return Cursor(self, filter, projection, skip, limit, no_cursor_timeout, cursor_type,
                      sort, allow_partial_results, oplog_replay, batch_size, collation, hint,
                      max_scan, max_time_ms, max, min, return_key, show_record_id, snapshot,
                      comment, session, allow_disk_use, let, read_preference=read_preference)

    def find_one(self, filter: Any = None, projection: Any = None, skip: int = 0,
                 limit: int = 0, no_cursor_timeout: bool = False, cursor_type: int = 0,
                 sort: Any = None, allow_partial_results: bool = False,
                 oplog_replay: bool = False, batch_size: int = 0, collation: Any = None,
                 hint: Any = None, max_scan: Optional[int] = None,
                 max_time_ms: Optional[int] = None, max: Any = None, min: Any = None,
                 return_key: Optional[bool] = None, show_record_id: Optional[bool] = None,
                 snapshot: Optional[bool] = None, comment: Any = None, session: Any = None,
                 allow_disk_use: Optional[bool] = None,
                 let: Optional[Mapping[str, Any]] = None, *,
                 read_preference: Any = None) -> Optional[_DocumentType]:
        """The first matching document, or None (find's arguments; ``limit`` is ignored). A
        ``filter`` that is not a mapping is an ``_id``."""
        if filter is not None and not isinstance(filter, Mapping):
            filter = {"_id": filter}
        cursor = self.find(filter, projection, skip, limit, no_cursor_timeout, cursor_type,
                           sort, allow_partial_results, oplog_replay, batch_size, collation,
                           hint, max_scan, max_time_ms, max, min, return_key, show_record_id,
                           snapshot, comment, session, allow_disk_use, let,
                           read_preference=read_preference)
        for doc in cursor.limit(-1):
            return doc
        return None

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
        from .command_cursor import raw_codec
        from .cursor import RawBatchCursor
        return RawBatchCursor(raw_codec(self), filter, projection, skip, limit,
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
        batch = reply["cursor"]["firstBatch"] if "cursor" in reply else None
        return int(batch[0]["n"]) if batch else 0

    def estimated_document_count(self, comment: Any = None, **kwargs: Any) -> int:
        """The collection's document count from its metadata (the ``count`` command)."""
        read_preference = kwargs.pop("read_preference", None)
        session = kwargs.pop("session", None)
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
        return int(reply["n"])

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
        if self._read_concern.level:
            cmd["readConcern"] = self._read_concern.document
        return list(self._read_command(cmd, read_preference, session=session)["values"])

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
        if self._read_concern.level:
            cmd["readConcern"] = self._read_concern.document

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
        from .command_cursor import RawBatchCommandCursor, raw_codec
        return _aggregate(raw_codec(self), self._name, pipeline, kwargs.pop("let", None),  # type: ignore[return-value]
                          comment, kwargs, session, RawBatchCommandCursor)

    # ----- indexes (indexes.py) --------------------------------------------------------------

    @property
    def _indexes(self) -> Any:
        from . import indexes  # loaded by the first index call, not by import
        return indexes

    def create_index(self, keys: _IndexKeyHint, session: Any = None, comment: Any = None,
                     **kwargs: Any) -> str:
        """Create an index (``"a"``, ``[("a", 1), ("b", -1)]``) with PyMongo's options
        (``unique``, ``sparse``, ``name``, ``expireAfterSeconds``, ...); its name."""
        return self._indexes.create_index(self, keys, comment, kwargs, session)

    def create_indexes(self, indexes: Sequence[IndexModel], session: Any = None,
                       comment: Any = None, **kwargs: Any) -> list[str]:
        """Create several indexes (IndexModel) in one command; their names."""
        return self._indexes.create_indexes(self, indexes, comment, kwargs, session)

    def list_indexes(self, session: Any = None,
                     comment: Any = None) -> CommandCursor[dict[str, Any]]:
        """A cursor over the index documents (empty for a missing collection)."""
        return self._indexes.list_indexes(self, comment, session)

    def index_information(self, session: Any = None, comment: Any = None) -> dict[str, Any]:
        """{index name: {"key": [(field, direction), ...], other options}}."""
        return self._indexes.index_information(self, comment, session)

    def drop_index(self, index_or_name: _IndexKeyHint, session: Any = None,
                   comment: Any = None, **kwargs: Any) -> None:
        """Drop an index by name or by its key specification."""
        self._indexes.drop_index(self, index_or_name, comment, kwargs, session)

    def drop_indexes(self, session: Any = None, comment: Any = None, **kwargs: Any) -> None:
        """Drop every index but ``_id_``."""
        self._indexes.drop_index(self, "*", comment, kwargs, session)

    def create_search_index(self, model: Any, session: Any = None, comment: Any = None,
                            **kwargs: Any) -> str:
        """Create an Atlas Search index (a SearchIndexModel or its fields as a mapping); its
        name."""
        from .operations import SearchIndexModel
        if not isinstance(model, SearchIndexModel):
            model = SearchIndexModel(**model)
        return self._indexes.create_search_indexes(  # type: ignore[no-any-return]
            self, [model], comment, kwargs, session)[0]

    def create_search_indexes(self, models: list[Any], session: Any = None,
                              comment: Any = None, **kwargs: Any) -> list[str]:
        """Create several Atlas Search indexes (SearchIndexModel); their names."""
        return self._indexes.create_search_indexes(  # type: ignore[no-any-return]
            self, models, comment, kwargs, session)

    def drop_search_index(self, name: str, session: Any = None, comment: Any = None,
                          **kwargs: Any) -> None:
        """Drop an Atlas Search index by name."""
        self._indexes.search_index_command(self, {"dropSearchIndex": self._name, "name": name},
                                           comment, kwargs, session)

    def update_search_index(self, name: str, definition: Mapping[str, Any],
                            session: Any = None, comment: Any = None, **kwargs: Any) -> None:
        """Replace an Atlas Search index's definition."""
        self._indexes.search_index_command(
            self, {"updateSearchIndex": self._name, "name": name, "definition": definition},
            comment, kwargs, session)

    def list_search_indexes(self, name: Optional[str] = None, session: Any = None,
                            comment: Any = None, **kwargs: Any
                            ) -> CommandCursor[Mapping[str, Any]]:
        """A cursor over the collection's Atlas Search indexes (all, or the one named)."""
        return self._indexes.list_search_indexes(  # type: ignore[no-any-return]
            self, name, session, comment, kwargs)

    # ----- the collection itself -------------------------------------------------------------

    def drop(self, session: Any = None, comment: Any = None,
             encrypted_fields: Optional[Mapping[str, Any]] = None) -> None:
        """Drop the collection (a missing one is not an error)."""
        self._database.drop_collection(self._name, session=session, comment=comment)

    def rename(self, new_name: str, session: Any = None, comment: Any = None,
               **kwargs: Any) -> Mapping[str, Any]:
        """Rename the collection (``dropTarget=True`` replaces an existing one)."""
        if not isinstance(new_name, str):
            raise TypeError(f"new_name must be an instance of str, not {type(new_name).__name__}")
        try:
            validate_collection_name(new_name)
        except InvalidName as exc:
            raise InvalidName(f"invalid collection name {new_name!r}: {exc}") from None
        cmd: dict[str, Any] = {"renameCollection": self._full_name,
                               "to": f"{self._database.name}.{new_name}"}
        cmd.update(kwargs)
        if comment is not None:
            cmd["comment"] = comment
        # A write on the primary with this collection's write concern, whose
        # writeConcernError is raised (as PyMongo's rename).
        admin = self._database.client.admin.get_collection(
            "$cmd", write_concern=self._write_concern)
        return admin._write_command(cmd, retryable=False,  # type: ignore[no-any-return]
                                    session=session)

    def options(self, session: Any = None, comment: Any = None) -> dict[str, Any]:
        """The options the collection was created with ({} for none or a missing one)."""
        for doc in self._database.list_collections(session=session, filter={"name": self._name},
                                                   comment=comment):
            options = dict(doc.get("options", {}))
            options.pop("create", None)
            return options
        return {}


def _aggregate(target: Any, name: Any, pipeline: _Pipeline, let: Any, comment: Any,
               kwargs: dict[str, Any], session: Any = None,
               cursor_class: type[CommandCursor[Any]] = CommandCursor) -> CommandCursor[Any]:
    """aggregate for a collection (``name`` its name) or a database (``name`` 1)."""
    if not isinstance(pipeline, list):
        raise TypeError(f"pipeline must be a list, not {type(pipeline).__name__}")
    coll = target if isinstance(target, Collection) else target._catalog()
    writes = bool(pipeline) and any(stage in pipeline[-1] for stage in ("$out", "$merge"))
    batch_size = kwargs.pop("batchSize", kwargs.pop("batch_size", None))
    max_await = kwargs.pop("maxAwaitTimeMS", None)
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
