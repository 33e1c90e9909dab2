"""Database's commands and catalog (as ``pymongo.database``): the generic command, cursor
commands, aggregations and the collections' list, creation, drop and validation. A mixin of
``Database`` that loads at the first use of one of its methods: a one-off read never runs
them (database.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union

from bson.codec_options import DEFAULT_CODEC_OPTIONS, CodecOptions

from singlemongo.arguments import validate_collation, validate_is_mapping
from singlemongo.base_object import Generic, _DocumentType, core_read_preference
from singlemongo.collection import Collection
from singlemongo.collection_queries import _aggregate
from singlemongo.command_cursor import CommandCursor
from singlemongo.server_cursor import BATCH_FIELDS
from singlemongo.engine.operation import execute
from singlemongo.engine.request import Outcome, Request
from singlemongo import errors
from singlemongo.errors import InvalidOperation, OperationFailure
from singlemongo.selection import READ, Criteria, ReadPreference as _Core

if TYPE_CHECKING:
    from bson.dbref import DBRef

    from singlemongo.client import MongoClient
    from singlemongo.database import Database
    from singlemongo.read_concern import ReadConcern
    from singlemongo.typings import _Pipeline
    from singlemongo.write_concern import WriteConcern

_PRIMARY = _Core()
NAMESPACE_NOT_FOUND = 26


class DatabaseCommands(Generic[_DocumentType]):
    """What a Database runs beyond handing out collections."""

    def _as_database(self) -> Database[_DocumentType]:
        # DatabaseCommands only ever lives in a Database (no cast(): a call)
        return self  # type: ignore[return-value]

    if TYPE_CHECKING:  # what Database gives the methods below
        _client: MongoClient[_DocumentType]
        _name: str
        _codec_options: CodecOptions[Any]

        def __getitem__(self, name: str) -> Collection[_DocumentType]: ...

    # ----- commands --------------------------------------------------------------------------

    def command(self, command: Union[str, Mapping[str, Any]], value: Any = 1,
                check: bool = True, allowable_errors: Optional[Sequence[Union[str, int]]] = None,
                read_preference: Any = None,
                codec_options: CodecOptions[Any] = DEFAULT_CODEC_OPTIONS, session: Any = None,
                comment: Any = None, **kwargs: Any) -> dict[str, Any]:
        """Run a command and return its reply. The generic command is a read (server
        selection spec, "Use of read preferences with commands"): the primary unless
        ``read_preference`` says otherwise. ``check=False`` returns a failed reply instead of
        raising OperationFailure."""
        if isinstance(command, str):
            cmd: dict[str, Any] = {command: value}
        elif isinstance(command, Mapping):
            cmd = dict(command)
        else:
            raise TypeError(f"command must be a str or a mapping, not {type(command).__name__}")
        write_concern = kwargs.pop("write_concern", None)
        cmd.update(kwargs)
        if comment is not None:
            cmd["comment"] = comment
        if write_concern is not None:
            # PyMongo takes write_concern= here (its keyword reaches its private _command),
            # and programs pass it: sent as writeConcern unless it is the server's default.
            from singlemongo.write_concern import WriteConcern
            if not isinstance(write_concern, WriteConcern):
                raise TypeError(f"write_concern must be a WriteConcern, not "
                                f"{type(write_concern).__name__}")
            if not write_concern.is_server_default:
                cmd["writeConcern"] = write_concern.document
        core = core_read_preference(read_preference)
        if session is not None and session.in_transaction:
            from singlemongo.transaction import check_read_preference
            check_read_preference(core)  # the user's own read preference counts too
        try:
            return execute(self._client._topology, Request(  # type: ignore[no-any-return]
                self._name, cmd, Criteria(READ, core if core is not None else _PRIMARY),
                is_read=True, codec=codec_options, explicit_session=session,
                parse_write_concern_error=False)).reply
        except OperationFailure as exc:
            allowed = allowable_errors or ()
            if not check or exc.code in allowed or (exc.code is None and any(
                    isinstance(a, str) and a in str(exc) for a in allowed)):
                return exc.details  # type: ignore[return-value]
            raise

    def cursor_command(self, command: Union[str, Mapping[str, Any]], value: Any = 1,
                       read_preference: Any = None,
                       codec_options: Optional[CodecOptions[Any]] = None, session: Any = None,
                       comment: Any = None, max_await_time_ms: Optional[int] = None,
                       **kwargs: Any) -> CommandCursor[Any]:
        """Run a command that returns a cursor and iterate it (its getMores carry
        ``comment`` and ``max_await_time_ms``); InvalidOperation if the reply has no cursor.
        Not retried (as PyMongo)."""
        cmd: dict[str, Any] = {command: value} if isinstance(command, str) else dict(command)
        cmd.update(kwargs)
        core = core_read_preference(read_preference)
        codec = codec_options or DEFAULT_CODEC_OPTIONS
        outcome = execute(self._client._topology, Request(
            self._name, cmd, Criteria(READ, core if core is not None else _PRIMARY), True,
            None, keep_session=True, codec=codec, user_fields=BATCH_FIELDS,
            explicit_session=session))
        catalog: Collection[Any] = Collection(self._as_database(), "$cmd", codec_options=codec)
        if not isinstance(outcome.reply.get("cursor"), Mapping):
            CommandCursor(catalog, Outcome({"cursor": {"id": 0, "firstBatch": []}},
                                           outcome.server, outcome.session))  # frees it
            raise InvalidOperation("Command does not return a cursor.")
        return CommandCursor(catalog, outcome, comment=comment,
                             max_await_time_ms=max_await_time_ms, session=session)

    def dereference(self, dbref: DBRef, session: Any = None, comment: Any = None,
                    **kwargs: Any) -> Optional[_DocumentType]:
        """The document a DBRef points to, or None (a find_one on its collection; ``kwargs``
        go to find_one). ValueError for a DBRef to another database."""
        from bson.dbref import DBRef
        if not isinstance(dbref, DBRef):
            raise TypeError(f"cannot dereference a {type(dbref)}")
        if dbref.database is not None and dbref.database != self._name:
            raise ValueError(f"trying to dereference a DBRef that points to another database "
                             f"({dbref.database!r} not {self._name!r})")
        return self[dbref.collection].find_one({"_id": dbref.id}, session=session,
                                               comment=comment, **kwargs)

    def aggregate(self, pipeline: _Pipeline, session: Any = None, **kwargs: Any
                  ) -> CommandCursor[_DocumentType]:
        """A database-level aggregation (``$currentOp``, ``$documents``, ...)."""
        return _aggregate(self, 1, pipeline, kwargs.pop("let", None),
                          kwargs.pop("comment", None), kwargs, session)

    def _catalog(self) -> Collection[Any]:
        """The pseudo-collection database-level cursors read (``$cmd.aggregate``)."""
        return Collection(self._as_database(), "$cmd.aggregate")

    # ----- collections -----------------------------------------------------------------------

    def list_collections(self, session: Any = None, filter: Optional[Mapping[str, Any]] = None,
                         comment: Any = None, **kwargs: Any) -> CommandCursor[dict[str, Any]]:
        """A cursor over the collections' documents (name, type, options, info)."""
        cmd: dict[str, Any] = {"listCollections": 1, "cursor": {}}
        if filter is not None:
            cmd["filter"] = filter
        cmd.update(kwargs)
        if comment is not None:
            cmd["comment"] = comment
        catalog: Collection[dict[str, Any]] = Collection(
            self, "$cmd.listCollections",  # type: ignore[arg-type]  # any document class
            codec_options=self._codec_options.with_options(document_class=dict))
        outcome = execute(self._client._topology, Request(
            self._name, cmd, Criteria(READ, _PRIMARY), True, "read", keep_session=True,
            codec=catalog.codec_options, explicit_session=session))
        return CommandCursor(catalog, outcome, comment=comment, session=session)

    def list_collection_names(self, session: Any = None,
                              filter: Optional[Mapping[str, Any]] = None, comment: Any = None,
                              **kwargs: Any) -> list[str]:
        """The collections' names."""
        if filter is None:
            kwargs["nameOnly"] = True
        else:
            validate_is_mapping("filter", filter)
            # Enumerating Collections spec: nameOnly MUST NOT be set when the filter names
            # any key other than "name" (the server would filter the name-only documents).
            if not filter or (len(filter) == 1 and "name" in filter):
                kwargs["nameOnly"] = True
        return [doc["name"] for doc in self.list_collections(session, filter=filter,
                                                             comment=comment, **kwargs)]

    def create_collection(self, name: str, codec_options: Optional[CodecOptions[Any]] = None,
                          read_preference: Any = None,
                          write_concern: Optional[WriteConcern] = None,
                          read_concern: Optional[ReadConcern] = None, session: Any = None,
                          check_exists: Optional[bool] = True,
                          **kwargs: Any) -> Collection[_DocumentType]:
        """Create a collection with options (``capped``, ``size``, ``validator``,
        ``collation``, ...); CollectionInvalid if it exists."""
        in_transaction = session is not None and session.in_transaction
        # No listCollections in a transaction (the server refuses it): the server's create
        # then says whether the collection exists.
        if check_exists and not in_transaction and name in self.list_collection_names(
                session, filter={"name": name}):
            raise errors.CollectionInvalid(f"collection {name} already exists")
        if "collation" in kwargs:
            kwargs["collation"] = validate_collation(kwargs["collation"])
        return Collection(self._as_database(), name, True, codec_options, read_preference, write_concern,
                          read_concern, session, **kwargs)

    def drop_collection(self, name_or_collection: Union[str, Collection[Any]],
                        session: Any = None, comment: Any = None,
                        encrypted_fields: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
        """Drop a collection (a missing one is not an error); the server's reply."""
        name = name_or_collection.name if isinstance(name_or_collection, Collection) \
            else name_or_collection
        if not isinstance(name, str):
            raise TypeError(f"name_or_collection must be an instance of str or Collection, "
                            f"not {type(name).__name__}")
        cmd: dict[str, Any] = {"drop": name}
        if comment is not None:
            cmd["comment"] = comment
        try:
            return Collection(self._as_database(), name)._write_command(  # type: ignore[no-any-return]
                cmd, retryable=False, session=session)
        except OperationFailure as exc:
            if exc.code == NAMESPACE_NOT_FOUND:
                return exc.details  # type: ignore[return-value]
            raise

    def validate_collection(self, name_or_collection: Union[str, Collection[Any]],
                            scandata: bool = False, full: bool = False, session: Any = None,
                            background: Optional[bool] = None,
                            comment: Any = None) -> dict[str, Any]:
        """Run ``validate`` on a collection; its reply."""
        name = name_or_collection.name if isinstance(name_or_collection, Collection) \
            else name_or_collection
        if not isinstance(name, str):
            raise TypeError(f"name_or_collection must be an instance of str or Collection, not "
                            f"{type(name)}")
        cmd: dict[str, Any] = {"validate": name, "scandata": scandata, "full": full}
        if background is not None:
            cmd["background"] = background
        return self.command(cmd, session=session, comment=comment)
