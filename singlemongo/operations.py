"""Write models for ``bulk_write`` and ``IndexModel`` (as ``pymongo.operations``). How keys of
sorts, hints and indexes are written is in ``common.py`` (a find needs it; this module is
loaded only by programs that use the models)."""
from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, Optional, Union

from singlemongo.collation import Collation
from singlemongo.errors import InvalidOperation
from singlemongo.arguments import (gen_index_name, index_document, index_list, validate_boolean,
                        validate_collation, validate_is_mapping)
from singlemongo.typings import _DocumentType, _IndexKeyHint, _Pipeline

if TYPE_CHECKING:
    from singlemongo.bulk import _Bulk

_CollationIn = Union[Collation, Mapping[str, Any], None]


class _Model:
    """What every write model shares: equal when of one type with equal arguments, shown
    with its arguments, unhashable (as PyMongo's)."""
    __slots__ = ()

    def _key(self) -> tuple[Any, ...]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(repr(v) for v in self._key())})"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and isinstance(other, _Model) and \
            other._key() == self._key()

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]

    def _add_to_bulk(self, bulk: Any) -> None:
        raise NotImplementedError

    def _add_to_client_bulk(self, bulk: Any) -> None:
        """Add this model to a client bulk write (``MongoClient.bulk_write``), in the
        namespace it was given."""
        namespace = getattr(self, "_namespace", None)
        if not namespace:
            raise InvalidOperation("MongoClient.bulk_write requires a namespace to be provided "
                                   "for each write operation")
        bulk.namespace = namespace
        self._add_to_bulk(bulk)

    def _with_namespace(self, key: tuple[Any, ...], before_sort: bool = False
                        ) -> tuple[Any, ...]:
        """The model's arguments with its namespace, where PyMongo shows it (before
        ``sort``), when it has one."""
        namespace = getattr(self, "_namespace", None)
        if not namespace:
            return key
        return key[:-1] + (namespace, key[-1]) if before_sort else key + (namespace,)


def _checked_namespace(namespace: Optional[str]) -> Optional[str]:
    """A model's namespace, "database.collection" (bulk write spec, "Write Models")."""
    if namespace is None:
        return None
    if not isinstance(namespace, str):
        raise TypeError(f"namespace must be a string 'database.collection', not "
                        f"{namespace!r}")
    database, dot, collection = namespace.partition(".")
    if not database or not dot or not collection:
        raise InvalidOperation(f"namespace must be 'database.collection', not {namespace!r}")
    return namespace


class InsertOne(_Model, Generic[_DocumentType]):
    """Insert ``document`` (its ``_id`` is added if missing)."""

    __slots__ = ("_doc", "_namespace")

    def __init__(self, document: _DocumentType, namespace: Optional[str] = None) -> None:
        self._doc = document  # checked when the bulk takes it, in order, as PyMongo does
        self._namespace = _checked_namespace(namespace)

    def _add_to_bulk(self, bulk: _Bulk) -> None:
        bulk.add_insert(self._doc)

    def _key(self) -> tuple[Any, ...]:
        return self._with_namespace((self._doc,))


class _DeleteOp(_Model):
    __slots__ = ("_filter", "_collation", "_hint", "_namespace")
    _limit = 1

    def __init__(self, filter: Mapping[str, Any], collation: _CollationIn = None,
                 hint: Optional[_IndexKeyHint] = None, namespace: Optional[str] = None) -> None:
        validate_is_mapping("filter", filter)
        self._filter, self._collation, self._hint = filter, collation, hint
        self._namespace = _checked_namespace(namespace)

    def _add_to_bulk(self, bulk: _Bulk) -> None:
        collation = self._collation  # checked before the statement, as PyMongo does
        if collation is not None:
            collation = validate_collation(collation)
        bulk.add_delete(self._filter, self._limit, collation, self._hint)

    def _key(self) -> tuple[Any, ...]:
        return self._with_namespace((self._filter, self._collation, self._hint))

class DeleteOne(_DeleteOp):
    """Delete the first document matching ``filter``."""
    __slots__ = ()
    _limit = 1


class DeleteMany(_DeleteOp):
    """Delete every document matching ``filter``."""
    __slots__ = ()
    _limit = 0


class ReplaceOne(_Model, Generic[_DocumentType]):
    """Replace the first document matching ``filter`` with ``replacement``."""

    __slots__ = ("_filter", "_doc", "_upsert", "_collation", "_hint", "_sort", "_namespace")

    def __init__(self, filter: Mapping[str, Any], replacement: Union[_DocumentType, Any],
                 upsert: Optional[bool] = None, collation: _CollationIn = None,
                 hint: Optional[_IndexKeyHint] = None, namespace: Optional[str] = None,
                 sort: Optional[Mapping[str, Any]] = None) -> None:
        validate_is_mapping("filter", filter)
        if upsert is not None:
            validate_boolean("upsert", upsert)
        self._filter, self._doc, self._upsert = filter, replacement, upsert
        self._collation, self._hint, self._sort = collation, hint, sort
        self._namespace = _checked_namespace(namespace)

    def _add_to_bulk(self, bulk: _Bulk) -> None:
        collation = self._collation  # checked before the statement, as PyMongo does
        if collation is not None:
            collation = validate_collation(collation)
        bulk.add_replace(self._filter, self._doc, self._upsert, collation, self._hint,
                         self._sort)

    def _key(self) -> tuple[Any, ...]:
        return self._with_namespace((self._filter, self._doc, self._upsert, self._collation,
                                     self._hint, self._sort), before_sort=True)

class _UpdateOp(_Model):
    __slots__ = ("_filter", "_doc", "_upsert", "_collation", "_array_filters", "_hint", "_sort",
                 "_namespace")
    _multi = False

    def __init__(self, filter: Mapping[str, Any], update: Union[Mapping[str, Any], _Pipeline],
                 upsert: Optional[bool] = None, collation: _CollationIn = None,
                 array_filters: Optional[list[Mapping[str, Any]]] = None,
                 hint: Optional[_IndexKeyHint] = None, namespace: Optional[str] = None,
                 sort: Optional[Mapping[str, Any]] = None) -> None:
        validate_is_mapping("filter", filter)
        if upsert is not None:
            validate_boolean("upsert", upsert)
        if array_filters is not None and not isinstance(array_filters, list):
            raise TypeError(f"array_filters must be a list, not {array_filters!r}")
        self._filter, self._doc, self._upsert = filter, update, upsert
        self._collation, self._array_filters, self._hint = collation, array_filters, hint
        self._sort = sort
        self._namespace = _checked_namespace(namespace)

    def _add_to_bulk(self, bulk: _Bulk) -> None:
        # PyMongo's wire form: UpdateOne always says upsert, UpdateMany only when given (a
        # client bulk write: each only when given).
        collation = self._collation  # checked before the statement, as PyMongo does
        if collation is not None:
            collation = validate_collation(collation)
        bulk.add_update(self._filter, self._doc, self._multi,
                        self._upsert if self._multi or bulk.upsert_as_given else
                        bool(self._upsert), collation,
                        self._array_filters, self._hint, self._sort)

    def _key(self) -> tuple[Any, ...]:
        return self._with_namespace((self._filter, self._doc, self._upsert, self._collation,
                                     self._array_filters, self._hint, self._sort),
                                    before_sort=True)

class UpdateOne(_UpdateOp):
    """Update the first document matching ``filter`` (``update``: operators or a pipeline)."""
    __slots__ = ()
    _multi = False


class UpdateMany(_UpdateOp):
    """Update every document matching ``filter``."""
    __slots__ = ()
    _multi = True

    def __init__(self, filter: Mapping[str, Any], update: Union[Mapping[str, Any], _Pipeline],
                 upsert: Optional[bool] = None, collation: _CollationIn = None,
                 array_filters: Optional[list[Mapping[str, Any]]] = None,
                 hint: Optional[_IndexKeyHint] = None, namespace: Optional[str] = None) -> None:
        super().__init__(filter, update, upsert, collation, array_filters, hint, namespace)


_WriteOp = Union[InsertOne[Any], DeleteOne, DeleteMany, ReplaceOne[Any], UpdateOne, UpdateMany]


class IndexModel:
    """An index for ``create_indexes``: ``IndexModel(keys, **options)`` with PyMongo's options
    (``name``, ``unique``, ``sparse``, ``expireAfterSeconds``, ``partialFilterExpression``,
    ``collation``, ...). The name defaults to ``a_1_b_-1``."""

    __slots__ = ("_document",)

    def __init__(self, keys: _IndexKeyHint, **kwargs: Any) -> None:
        pairs = index_list(keys)
        if kwargs.get("name") is None:
            kwargs["name"] = gen_index_name(pairs)
        kwargs["key"] = index_document(pairs)
        collation = validate_collation(kwargs.pop("collation", None))
        if collation is not None:
            kwargs["collation"] = collation
        self._document = kwargs

    @property
    def document(self) -> dict[str, Any]:
        """The index document sent in ``createIndexes``."""
        return self._document

    def __repr__(self) -> str:
        doc = dict(self._document)
        key = doc.pop("key")
        options = "".join(f", {k}={v!r}" for k, v in doc.items())
        return f"IndexModel({key!r}{options})"


class SearchIndexModel:
    """An Atlas Search (or vector search) index to create: ``definition``, ``name``, ``type``
    ("search" by default, or "vectorSearch") and any other field."""

    __slots__ = ("_document",)

    def __init__(self, definition: Mapping[str, Any], name: Optional[str] = None,
                 type: Optional[str] = None, **kwargs: Any) -> None:
        self._document: dict[str, Any] = {}
        if name is not None:
            self._document["name"] = name
        self._document["definition"] = definition
        if type is not None:
            self._document["type"] = type
        self._document.update(kwargs)

    @property
    def document(self) -> Mapping[str, Any]:
        """The index document of createSearchIndexes."""
        return self._document

    def __repr__(self) -> str:
        fields = ", ".join(f"{key}={value!r}" for key, value in self._document.items())
        return f"SearchIndexModel({fields})"


class _Op(str, enum.Enum):
    """The operation names PyMongo logs and selects servers for (``pymongo.operations._Op``)."""
    ABORT = "abortTransaction"
    AGGREGATE = "aggregate"
    BULK_WRITE = "bulkWrite"
    COMMIT = "commitTransaction"
    COUNT = "count"
    CREATE = "create"
    CREATE_INDEXES = "createIndexes"
    CREATE_SEARCH_INDEXES = "createSearchIndexes"
    DELETE = "delete"
    DISTINCT = "distinct"
    DROP = "drop"
    DROP_DATABASE = "dropDatabase"
    DROP_INDEXES = "dropIndexes"
    DROP_SEARCH_INDEXES = "dropSearchIndexes"
    END_SESSIONS = "endSessions"
    FIND_AND_MODIFY = "findAndModify"
    FIND = "find"
    INSERT = "insert"
    LIST_COLLECTIONS = "listCollections"
    LIST_INDEXES = "listIndexes"
    LIST_SEARCH_INDEX = "listSearchIndexes"
    LIST_DATABASES = "listDatabases"
    UPDATE = "update"
    UPDATE_INDEX = "updateIndex"
    UPDATE_SEARCH_INDEX = "updateSearchIndex"
    RENAME = "rename"
    GETMORE = "getMore"
    KILL_CURSORS = "killCursors"
    TEST = "testOperation"
