"""Write models for ``bulk_write`` and ``IndexModel`` (as ``pymongo.operations``), and how keys
of sorts, hints and indexes are written (``"a"``, ``[("a", 1), ("b", -1)]`` or ``{"a": 1}``)."""
from __future__ import annotations

from collections.abc import ItemsView, Mapping
from typing import TYPE_CHECKING, Any, Generic, Optional, Sequence, Union

from .collation import Collation, validate_collation
from .common import validate_boolean, validate_is_document_type, validate_is_mapping
from .typings import _DocumentType, _IndexKeyHint, _Pipeline

if TYPE_CHECKING:
    from .bulk import _Bulk

ASCENDING = 1
DESCENDING = -1
_CollationIn = Union[Collation, Mapping[str, Any], None]


def index_list(key_or_list: Any, direction: Any = None) -> list[tuple[str, Any]]:
    """``(key, direction)`` pairs from a key and a direction, a key, a list or a mapping."""
    if direction is not None:
        if not isinstance(key_or_list, str):
            raise TypeError(f"expected a key (a string) with a direction, not {key_or_list!r}")
        return [(key_or_list, direction)]
    if isinstance(key_or_list, str):
        return [(key_or_list, ASCENDING)]
    if isinstance(key_or_list, (ItemsView, Mapping)):
        items = key_or_list if isinstance(key_or_list, ItemsView) else key_or_list.items()
        return [tuple(item) for item in items]  # type: ignore[misc]
    if not isinstance(key_or_list, (list, tuple)):
        raise TypeError(f"if no direction is specified, key_or_list must be a key, a list of "
                        f"(key, direction) pairs or a mapping, not {type(key_or_list).__name__}")
    return [(item, ASCENDING) if isinstance(item, str) else tuple(item)  # type: ignore[misc]
            for item in key_or_list]


def index_document(keys: Any) -> dict[str, Any]:
    """The ``{key: direction}`` document of a sort, hint or index; TypeError or ValueError
    naming what is wrong."""
    if not isinstance(keys, (list, tuple, Mapping)):
        raise TypeError(f"must use a dictionary or a list of (key, direction) pairs, not: "
                        f"{keys!r}")
    if not keys:
        raise ValueError("key_or_list must not be empty")
    pairs = keys.items() if isinstance(keys, Mapping) else (
        (item, ASCENDING) if isinstance(item, str) else item for item in keys)
    document = {}
    for pair in pairs:
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"each key must be a (key, direction) pair, not {pair!r}")
        key, value = pair
        if not isinstance(key, str):
            raise TypeError(f"first item in each key pair must be a string, not {key!r}")
        if isinstance(value, bool) or not isinstance(value, (str, int, Mapping)):
            raise TypeError(f"second item in each key pair must be 1, -1, a string such as "
                            f"'text' or a document, not {value!r}")
        document[key] = value
    return document


def gen_index_name(keys: Sequence[tuple[str, Any]]) -> str:
    """The default name of an index: ``a_1_b_-1``."""
    return "_".join(f"{key}_{direction}" for key, direction in keys)


def hint_value(hint: Any) -> Any:
    """A hint is an index name or a key specification."""
    if hint is None or isinstance(hint, str):
        return hint
    return index_document(index_list(hint))


def _repr(obj: Any, *values: Any) -> str:
    return f"{type(obj).__name__}({', '.join(repr(v) for v in values)})"


class InsertOne(Generic[_DocumentType]):
    """Insert ``document`` (its ``_id`` is added if missing)."""

    __slots__ = ("_doc",)

    def __init__(self, document: _DocumentType) -> None:
        validate_is_document_type("document", document)
        self._doc = document

    def _add_to_bulk(self, bulk: _Bulk) -> None:
        bulk.add_insert(self._doc)

    def __repr__(self) -> str:
        return _repr(self, self._doc)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._doc == self._doc  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]


class _DeleteOp:
    __slots__ = ("_filter", "_collation", "_hint")
    _limit = 1

    def __init__(self, filter: Mapping[str, Any], collation: _CollationIn = None,
                 hint: Optional[_IndexKeyHint] = None, namespace: Optional[str] = None) -> None:
        validate_is_mapping("filter", filter)
        self._filter, self._collation, self._hint = filter, collation, hint

    def _add_to_bulk(self, bulk: _Bulk) -> None:
        bulk.add_delete(self._filter, self._limit, validate_collation(self._collation),
                        hint_value(self._hint))

    def _key(self) -> tuple[Any, ...]:
        return (self._filter, self._collation, self._hint)

    def __repr__(self) -> str:
        return _repr(self, *self._key())

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._key() == self._key()  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]


class DeleteOne(_DeleteOp):
    """Delete the first document matching ``filter``."""
    __slots__ = ()
    _limit = 1


class DeleteMany(_DeleteOp):
    """Delete every document matching ``filter``."""
    __slots__ = ()
    _limit = 0


class ReplaceOne(Generic[_DocumentType]):
    """Replace the first document matching ``filter`` with ``replacement``."""

    __slots__ = ("_filter", "_doc", "_upsert", "_collation", "_hint", "_sort")

    def __init__(self, filter: Mapping[str, Any], replacement: Union[_DocumentType, Any],
                 upsert: Optional[bool] = None, collation: _CollationIn = None,
                 hint: Optional[_IndexKeyHint] = None, namespace: Optional[str] = None,
                 sort: Optional[Mapping[str, Any]] = None) -> None:
        validate_is_mapping("filter", filter)
        if upsert is not None:
            validate_boolean("upsert", upsert)
        self._filter, self._doc, self._upsert = filter, replacement, upsert
        self._collation, self._hint, self._sort = collation, hint, sort

    def _add_to_bulk(self, bulk: _Bulk) -> None:
        bulk.add_replace(self._filter, self._doc, self._upsert,
                         validate_collation(self._collation), hint_value(self._hint),
                         self._sort)

    def _key(self) -> tuple[Any, ...]:
        return (self._filter, self._doc, self._upsert, self._collation, self._hint, self._sort)

    def __repr__(self) -> str:
        return _repr(self, *self._key())

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._key() == self._key()  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]


class _UpdateOp:
    __slots__ = ("_filter", "_doc", "_upsert", "_collation", "_array_filters", "_hint", "_sort")
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

    def _add_to_bulk(self, bulk: _Bulk) -> None:
        # PyMongo's wire form: UpdateOne always says upsert, UpdateMany only when given.
        bulk.add_update(self._filter, self._doc, self._multi,
                        self._upsert if self._multi else bool(self._upsert),
                        validate_collation(self._collation), self._array_filters,
                        hint_value(self._hint), self._sort)

    def _key(self) -> tuple[Any, ...]:
        return (self._filter, self._doc, self._upsert, self._collation, self._array_filters,
                self._hint, self._sort)

    def __repr__(self) -> str:
        return _repr(self, *self._key())

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other._key() == self._key()  # type: ignore[attr-defined]

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = None  # type: ignore[assignment]


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


