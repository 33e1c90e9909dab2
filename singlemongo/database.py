"""Database (as ``pymongo.database``): collections, and (database_commands.py, loaded at
first use) the generic command and the catalog."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, NoReturn, Optional, overload

from bson.codec_options import CodecOptions

from singlemongo.collection import Collection
from singlemongo.base_object import (Generic, BaseObject, Watchable, _DocumentType, _DocumentTypeArg,
                          deferred_mixin)
from singlemongo.arguments import not_callable, validate_database_name

if TYPE_CHECKING:
    from singlemongo.client import MongoClient
    from singlemongo.database_commands import DatabaseCommands
    from singlemongo.read_concern import ReadConcern
    from singlemongo.write_concern import WriteConcern
else:
    # Loaded at their first use: a one-off read runs none of them.
    DatabaseCommands = deferred_mixin(".database_commands", "DatabaseCommands", (
        "_as_database", "command", "cursor_command", "dereference", "aggregate", "_catalog",
        "list_collections", "list_collection_names", "create_collection", "drop_collection",
        "validate_collection"))


class Database(BaseObject, Watchable, DatabaseCommands[_DocumentType],
               Generic[_DocumentType]):
    """A database; ``client.name`` or ``client["name"]``. Constructing one does no I/O."""

    _watch_scope = "database"

    def __init__(self, client: MongoClient[_DocumentType], name: str,
                 codec_options: Optional[CodecOptions[Any]] = None, read_preference: Any = None,
                 write_concern: Optional[WriteConcern] = None,
                 read_concern: Optional[ReadConcern] = None) -> None:
        super().__init__(codec_options, read_preference, write_concern, read_concern, client)
        self._client = client
        self._name = validate_database_name(name)

    @property
    def client(self) -> MongoClient[_DocumentType]:
        """The client this database belongs to."""
        return self._client

    @property
    def name(self) -> str:
        """The database's name."""
        return self._name

    def __repr__(self) -> str:
        return f"Database({self._client!r}, {self._name!r})"

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, Database):
            return self._client == other._client and self._name == other._name
        return NotImplemented

    def __ne__(self, other: Any) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((self._client, self._name))

    def __bool__(self) -> NoReturn:
        raise NotImplementedError("Database objects do not implement truth value testing or "
                                  "bool(). Please compare with None instead: database is not "
                                  "None")

    def __getattr__(self, name: str) -> Collection[_DocumentType]:
        """The collection ``name``."""
        if name.startswith("_"):
            raise AttributeError(f"Database has no attribute {name!r}. To access the {name} "
                                 f"collection, use database[{name!r}].")
        return self[name]

    def __getitem__(self, name: str) -> Collection[_DocumentType]:
        return Collection(self, name)

    # None, as PyMongo: iteration is a TypeError and ``isinstance(x, Iterable)`` is False.
    __iter__ = None  # type: ignore[assignment]

    def __next__(self) -> NoReturn:
        """Not an iterator: raises TypeError (as PyMongo's Database)."""
        raise TypeError("'Database' object is not iterable")

    next = __next__

    def __call__(self, *args: Any, **kwargs: Any) -> NoReturn:
        not_callable("Database", self._name)

    @overload
    def get_collection(self, name: str, codec_options: None = None,
                       read_preference: Any = None, write_concern: Optional[WriteConcern] = None,
                       read_concern: Optional[ReadConcern] = None) -> Collection[_DocumentType]:
        ...

    @overload
    def get_collection(self, name: str, codec_options: CodecOptions[_DocumentTypeArg],
                       read_preference: Any = None, write_concern: Optional[WriteConcern] = None,
                       read_concern: Optional[ReadConcern] = None
                       ) -> Collection[_DocumentTypeArg]:
        ...

    def get_collection(self, name: str, codec_options: Optional[CodecOptions[Any]] = None,
                       read_preference: Any = None, write_concern: Optional[WriteConcern] = None,
                       read_concern: Optional[ReadConcern] = None) -> Collection[Any]:
        """The collection ``name`` with some settings changed (its document type follows
        ``codec_options.document_class``). Raises InvalidName for a bad name."""
        return Collection(self, name, False, codec_options, read_preference, write_concern,
                          read_concern)

    @overload
    def with_options(self, codec_options: None = None, read_preference: Any = None,
                     write_concern: Optional[WriteConcern] = None,
                     read_concern: Optional[ReadConcern] = None) -> Database[_DocumentType]:
        ...

    @overload
    def with_options(self, codec_options: CodecOptions[_DocumentTypeArg],
                     read_preference: Any = None, write_concern: Optional[WriteConcern] = None,
                     read_concern: Optional[ReadConcern] = None) -> Database[_DocumentTypeArg]:
        ...

    def with_options(self, codec_options: Optional[CodecOptions[Any]] = None,
                     read_preference: Any = None, write_concern: Optional[WriteConcern] = None,
                     read_concern: Optional[ReadConcern] = None) -> Database[Any]:
        """The same database with some settings changed (its document type follows
        ``codec_options.document_class``)."""
        return Database(self._client, self._name, codec_options or self._codec_options,
                        read_preference if read_preference is not None else
                        self._read_preference_core, write_concern or self._write_concern,
                        read_concern or self._read_concern)
