"""Collection (as ``pymongo.collection``): its identity, settings, the commands every part
shares, and the collection's administration. Reads are in ``collection_reads.py``, writes
in ``collection_writes.py``, find_one_and_* in ``find_and_modify.py``, index helpers in
``collection_indexes.py`` (the work in ``indexes.py``), bulk writes in ``bulk.py``."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NoReturn, Optional, overload

from bson.codec_options import CodecOptions

from singlemongo.collection_reads import ReadMethods
from singlemongo.base_object import (BaseObject, Watchable, _DocumentType, _DocumentTypeArg,
                          core_read_preference, deferred_mixin, lazy_attributes)
from singlemongo.arguments import not_callable, validate_collation, validate_collection_name
from singlemongo.engine.operation import execute
from singlemongo.engine.request import Request
from singlemongo import errors
from singlemongo.replies import check
from singlemongo.selection import READ, WRITE, Criteria

if TYPE_CHECKING:
    from singlemongo.collection_indexes import IndexMethods
    from singlemongo.collection_queries import QueryMethods
    from singlemongo.collection_writes import WriteMethods
    from singlemongo.database import Database
    from singlemongo.engine.topology import Topology
    from singlemongo.find_and_modify import FindAndModifyMethods
    from singlemongo.find_and_modify import ReturnDocument as ReturnDocument  # exported, as PyMongo's
    from singlemongo.read_concern import ReadConcern
    from singlemongo.write_concern import WriteConcern
else:
    # Loaded at their first use: a read-only program never loads the code for writes, and a
    # find never loads the counts, distinct or aggregations.
    QueryMethods = deferred_mixin(".collection_queries", "QueryMethods", (
        "_as_collection", "find_raw_batches", "count_documents", "estimated_document_count",
        "distinct", "_aggregate_options", "aggregate", "aggregate_raw_batches"))
    WriteMethods = deferred_mixin(".collection_writes", "WriteMethods", (
        "_as_collection", "_check_unacknowledged", "_size_check", "_statement_check",
        "insert_one", "insert_many",
        "_update", "update_one", "update_many", "replace_one", "_delete", "delete_one",
        "delete_many", "bulk_write"))
    FindAndModifyMethods = deferred_mixin(".find_and_modify", "FindAndModifyMethods", (
        "_find_and_modify", "find_one_and_delete", "find_one_and_replace",
        "find_one_and_update"))
    IndexMethods = deferred_mixin(".collection_indexes", "IndexMethods", (
        "create_index", "create_indexes", "list_indexes", "index_information",
        "drop_index", "drop_indexes", "create_search_index", "create_search_indexes",
        "drop_search_index", "update_search_index", "list_search_indexes"))

__all__ = ["Collection"]  # ReturnDocument is served by __getattr__ below


__getattr__ = lazy_attributes(__name__, {"ReturnDocument": ".find_and_modify"})


WRITE_COMMANDS = frozenset({"insert", "update", "delete"})


def _checked_write(cmd: Mapping[str, Any], reply: Mapping[str, Any],
                   statements: Optional[int], address: Any) -> Mapping[str, Any]:
    """A write's reply, its counts, upserts and write errors checked (replies.py, "write")
    before anything reads them; another command's reply as it is."""
    name = next(iter(cmd))
    if name not in WRITE_COMMANDS or not reply:
        return reply
    return check("write", reply, name, statements, address)


_WRITE_CRITERIA = Criteria(WRITE)  # a frozen record: one for every write


class Collection(BaseObject, Watchable, ReadMethods[_DocumentType],
                 QueryMethods[_DocumentType], WriteMethods[_DocumentType],
                 FindAndModifyMethods[_DocumentType], IndexMethods[_DocumentType]):
    """A collection; ``db.name`` or ``db["name"]``. Constructing one does no I/O (unless
    ``create=True``, which sends ``create``)."""

    _watch_scope = "collection"

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

    # None, as PyMongo: iteration is a TypeError and ``isinstance(x, Iterable)`` is False.
    __iter__ = None  # type: ignore[assignment]

    def __next__(self) -> NoReturn:
        """Not an iterator: raises TypeError (as PyMongo's Collection)."""
        raise TypeError("'Collection' object is not iterable")

    next = __next__

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        not_callable("Collection", self._name)

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
        # From the client's own attributes: a client of another kind (Ming's in-memory double
        # answers every attribute with a database) has no topology, and gets None; only a
        # cursor's constructor and GridFS's deadlines look, as its subclasses run no command.
        return vars(self._database.client).get("_topology")  # type: ignore[return-value]

    def _read_criteria(self, read_preference: Any = None) -> Criteria:
        core = core_read_preference(read_preference)
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
                       user_fields: Any = None, prepare: Any = None,
                       operation_id: Optional[int] = None) -> Any:
        """Run a write with the collection's write concern; w: 0 sends it unacknowledged.
        ``check``: raise the write error; else return the reply whatever it holds.
        ``prepare``: see ``Request.prepare`` (sizes checked on the selected connection)."""
        from singlemongo.collection_writes import _raise_write_error  # loaded with the first write
        wc = self._write_concern
        if not wc.is_server_default:
            cmd["writeConcern"] = wc.document
        try:
            outcome = execute(self._topology, Request(
                self._database.name, cmd, _WRITE_CRITERIA, False,
                "write" if retryable else None, sequences,
                unacknowledged=not self._acknowledged(session),
                codec=self._codec_options, user_fields=user_fields, explicit_session=session,
                prepare=prepare, operation_id=operation_id))
        except errors.WriteConcernError as exc:
            reply = _checked_write(cmd, exc.reply or {}, None, exc.address)
            if not check:
                return reply
            _raise_write_error({"writeErrors": reply.get("writeErrors")},
                               exc.address)  # PyMongo: a write error wins over the WCE
            raise
        reply = _checked_write(cmd, outcome.reply, outcome.statements, outcome.server.address)
        if check:
            _raise_write_error(reply, outcome.server.address)
        return reply

    def _create(self, options: dict[str, Any], session: Any) -> None:
        if "size" in options:  # as PyMongo: a number, sent as a double (TypeError otherwise)
            options["size"] = float(options["size"])
        cmd: dict[str, Any] = {"create": self._name}
        collation = validate_collation(options.pop("collation", None))
        if collation is not None:
            cmd["collation"] = collation
        cmd.update(options)
        self._write_command(cmd, retryable=False, session=session)

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
        except errors.InvalidName as exc:
            raise errors.InvalidName(f"invalid collection name {new_name!r}: {exc}") from None
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
