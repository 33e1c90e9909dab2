"""What MongoClient, Database and Collection share (PyMongo's ``common.BaseObject``): codec
options, read preference, write concern and read concern, each inherited from the level above
unless given; and the checks on names and arguments, with PyMongo's exception types (TypeError
for a wrong type, ValueError for a wrong value, InvalidName for a bad name)."""
from __future__ import annotations

import sys
import types
from collections.abc import ItemsView, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any, NoReturn, Optional, Sequence, TypeVar

from bson.codec_options import CodecOptions

from . import errors
from .selection import ReadPreference as _CoreReadPreference

if TYPE_CHECKING:
    from .read_concern import ReadConcern
    from .read_preferences import _ServerMode
    from .write_concern import WriteConcern

if TYPE_CHECKING:
    from typing import Generic as Generic
else:
    class Generic:
        """What the face's generic classes need of ``typing.Generic`` at run time:
        ``Collection[dict]`` is the class itself (type checkers see ``typing.Generic``).
        Each class with a subscripted ``typing.Generic`` base costs 15 us more to create,
        and a one-off creates a dozen."""

        __slots__ = ()

        def __class_getitem__(cls, item: Any) -> Any:
            return cls


# The document type of a client, database, collection or cursor (``pymongo.typings``; here so
# the face's modules need not load typings.py at run time).
_DocumentType = TypeVar("_DocumentType", bound=Mapping[str, Any])
_DocumentTypeArg = TypeVar("_DocumentTypeArg", bound=Mapping[str, Any])


class _Deferred:
    """A method of a mixin whose module loads at the method's first use; the first lookup
    puts the real function in the descriptor's place, so later calls cost nothing."""

    __slots__ = ("module", "mixin", "name")

    def __init__(self, module: str, mixin: str, name: str) -> None:
        self.module, self.mixin, self.name = module, mixin, name

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        import importlib
        real = getattr(importlib.import_module(self.module, __package__), self.mixin)
        function = real.__dict__[self.name]
        for klass in (owner or type(obj)).__mro__:
            if klass.__dict__.get(self.name) is self:
                setattr(klass, self.name, function)
        return function.__get__(obj, owner) if obj is not None else function


def lazy_attributes(module: str, names: Mapping[str, str]) -> Any:
    """A module ``__getattr__`` serving ``names`` (attribute -> the face module defining it,
    as ``".raw_batches"``), each imported at first use: PyMongo's modules offer classes a
    one-off read must not load (``pymongo.cursor.RawBatchCursor``)."""
    def __getattr__(name: str) -> Any:
        if name in names:
            import importlib
            return getattr(importlib.import_module(names[name], __package__), name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    __getattr__.names = tuple(names)  # type: ignore[attr-defined]  # for tests/test_typing.py
    return __getattr__


def deferred_mixin(module: str, mixin: str, names: Sequence[str]) -> Any:
    """A generic stand-in for the mixin class ``module.mixin`` whose attributes ``names`` load
    that module on first use (type checkers see the real class: import it under
    ``TYPE_CHECKING``). A one-off read does not load the code for writes, indexes or
    findAndModify; tests/test_import_budget.py checks ``names`` against the real class."""
    namespace = {name: _Deferred(module, mixin, name) for name in names}
    return types.new_class(mixin, (Generic,), exec_body=lambda ns: ns.update(namespace))


class Watchable:
    """``watch`` with PyMongo's signature on MongoClient, Database and Collection."""

    _watch_scope = "cluster"  # what a change stream of this object sees (Database: "database")

    def watch(self, pipeline: Optional[Sequence[Mapping[str, Any]]] = None,
              full_document: Optional[str] = None,
              resume_after: Optional[Mapping[str, Any]] = None,
              max_await_time_ms: Optional[int] = None, batch_size: Optional[int] = None,
              collation: Any = None, start_at_operation_time: Any = None, session: Any = None,
              start_after: Optional[Mapping[str, Any]] = None, comment: Any = None,
              full_document_before_change: Optional[str] = None,
              show_expanded_events: Optional[bool] = None) -> Any:
        """A change stream of this collection, database or deployment (a ChangeStream: the
        aggregate runs now; iterate it, or poll with ``try_next()``)."""
        from .change_stream import STREAMS
        return STREAMS[self._watch_scope](self, pipeline, full_document, resume_after, max_await_time_ms,
                    batch_size, collation, start_at_operation_time, session, start_after,
                    comment, full_document_before_change, show_expanded_events)


def _instance_of(value: Any, module: str, name: str) -> bool:
    """Whether ``value`` is a ``module.name`` (a full module name) without loading that
    module: an object of a class whose module was never imported cannot exist."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(value, getattr(loaded, name))


def core_read_preference(value: Any) -> Optional[_CoreReadPreference]:
    """The core read preference for anything a user may pass (None stays None); the face's
    ``read_preferences`` module loads only for a value of its own or a mode name."""
    if value is None or isinstance(value, _CoreReadPreference):
        return value
    from .read_preferences import to_core
    return to_core(value)


class _Inherited:
    """A concern a level inherits from the level above unless it was given one (a non-data
    descriptor: a given value sits in the instance). The client holds one only when its
    options set it; otherwise the face's default object is built when first read, so a
    one-off read that never looks at its write concern does not load that module."""

    def __init__(self, module: str, default: str) -> None:
        self.module, self.default = module, default

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def given(self, obj: Any) -> Any:
        """The value given at ``obj`` or the nearest level above it, or None."""
        while obj is not None:
            value = obj.__dict__.get(self.name)
            if value is not None:
                return value
            obj = obj._settings_parent
        return None

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        value = self.given(obj)
        if value is None:
            import importlib
            value = getattr(importlib.import_module(self.module, __package__), self.default)
        return value


_SETTINGS = ("codec_options", "read_preference", "write_concern", "read_concern")


class BaseObject:
    """The four settings every level has, validated and inherited."""

    _write_concern = _Inherited(".write_concern", "DEFAULT_WRITE_CONCERN")
    _read_concern = _Inherited(".read_concern", "DEFAULT_READ_CONCERN")

    def __init__(self, codec_options: Optional[CodecOptions[Any]], read_preference: Any,
                 write_concern: Optional[WriteConcern], read_concern: Optional[ReadConcern],
                 parent: Optional[BaseObject] = None) -> None:
        if codec_options is not None and not isinstance(codec_options, CodecOptions):
            raise TypeError(f"codec_options must be a bson.codec_options.CodecOptions, not "
                            f"{codec_options!r}")
        face = __package__
        if write_concern is not None and not _instance_of(write_concern,
                                                          f"{face}.write_concern", "WriteConcern"):
            raise TypeError(f"write_concern must be a WriteConcern, not {write_concern!r}")
        if read_concern is not None and not _instance_of(read_concern, f"{face}.read_concern",
                                                         "ReadConcern"):
            raise TypeError(f"read_concern must be a ReadConcern, not {read_concern!r}")
        if parent is not None and not isinstance(parent, BaseObject):
            # A client of another kind (Ming's in-memory double): its public settings, as
            # PyMongo's Database reads them.
            given = (codec_options, read_preference, write_concern, read_concern)
            codec_options, read_preference, write_concern, read_concern = (
                getattr(parent, name, None) if value is None else value
                for name, value in zip(_SETTINGS, given))
            parent = None
        self._settings_parent = parent
        self._codec_options: CodecOptions[Any] = codec_options or parent._codec_options  # type: ignore[union-attr]
        core = core_read_preference(read_preference)
        self._read_preference_core: _CoreReadPreference = (
            core if core is not None else parent._read_preference_core)  # type: ignore[union-attr]
        if write_concern is not None:
            self._write_concern = write_concern
        if read_concern is not None:
            self._read_concern = read_concern

    @property
    def codec_options(self) -> CodecOptions[Any]:
        """The CodecOptions documents are encoded and decoded with."""
        return self._codec_options

    @property
    def read_preference(self) -> _ServerMode:
        """The read preference reads use unless a call gives one."""
        from .read_preferences import from_core
        return from_core(self._read_preference_core)

    @property
    def write_concern(self) -> WriteConcern:
        """The write concern writes are sent with."""
        return self._write_concern  # type: ignore[no-any-return]

    @property
    def read_concern(self) -> ReadConcern:
        """The read concern reads are sent with."""
        return self._read_concern  # type: ignore[no-any-return]

    def _read_concern_document(self) -> Optional[dict[str, Any]]:
        """The ``readConcern`` a read sends, or None for the server's default (without
        building the default ReadConcern)."""
        given = BaseObject._read_concern.given(self)
        return given.document if given is not None and given.level else None


def is_raw(document: Any) -> bool:
    """Whether ``document`` is a RawBSONDocument, without importing bson.raw_bson for the
    programs that never use one (a user with one has imported the module)."""
    return _instance_of(document, "bson.raw_bson", "RawBSONDocument")


def not_offered(feature: str) -> NoReturn:
    """NotImplementedError for what this driver does not offer by design, with the reason
    (docs: coming-from-pymongo, "Differences from PyMongo")."""
    reasons = {
        "client bulk write": "MongoClient.bulk_write needs MongoDB 8.0's bulkWrite command; "
                             "use Collection.bulk_write",
    }
    raise NotImplementedError(f"singlemongo does not offer {feature}: {reasons[feature]}")


def not_callable(kind: str, name: str) -> NoReturn:
    """PyMongo's hint for a mistyped method: ``coll.find_onee()`` calls the sub-collection
    ``c.find_onee``, ``db.list_collection_name()`` the collection of that name."""
    if kind == "Database":
        owner, attribute = "MongoClient", name
    elif "." in name:
        owner, attribute = "Collection", name.rsplit(".", 1)[1]
    else:
        owner, attribute = "Database", name
    raise TypeError(f"'{kind}' object is not callable. If you meant to call the '{attribute}' "
                    f"method on a '{owner}' object it is failing because no such method exists.")


def validate_database_name(name: Any) -> str:
    """A database name, as PyMongo checks it (``$external``, where users of X.509, LDAP and
    AWS authentication live, is the one name with a ``$``)."""
    if not isinstance(name, str):
        raise TypeError(f"name must be an instance of str, not {type(name)}")
    if name == "$external":
        return name
    if not name:
        raise errors.InvalidName("database name cannot be the empty string")
    for char in (" ", ".", "$", "/", "\\", "\x00", '"'):
        if char in name:
            raise errors.InvalidName(f"database names cannot contain the character {char!r} "
                                     f"(got {name!r})")
    return name


def validate_collection_name(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name must be an instance of str, not {type(name).__name__}")
    if not name or ".." in name:
        raise errors.InvalidName(
            f"collection names cannot be empty or contain '..' (got {name!r})")
    if "$" in name and not (name.startswith("oplog.$main") or name.startswith("$cmd")):
        raise errors.InvalidName(f"collection names must not contain '$' (got {name!r})")
    if name[0] == "." or name[-1] == ".":
        raise errors.InvalidName(f"collection names must not start or end with '.' (got {name!r})")
    if "\x00" in name:
        raise errors.InvalidName("collection names must not contain the null character")
    return name


def validate_is_mapping(option: str, value: Any) -> None:
    if not isinstance(value, Mapping):
        raise TypeError(f"{option} must be an instance of dict, bson.son.SON, or any other "
                        f"type that inherits from collections.Mapping, not "
                        f"{type(value).__name__}")


def validate_is_document_type(option: str, value: Any) -> None:
    if not (isinstance(value, MutableMapping) or is_raw(value)):
        raise TypeError(f"{option} must be an instance of dict, bson.son.SON, "
                        f"bson.raw_bson.RawBSONDocument, or a type that inherits from "
                        f"collections.MutableMapping, not {type(value).__name__}")


def validate_ok_for_update(update: Any) -> None:
    """An update is a non-empty document of update operators, or a pipeline (a list)."""
    if not isinstance(update, (Mapping, list)):
        raise TypeError(f"update must be a mapping of update operators or a pipeline (a "
                        f"list), not {type(update).__name__}")
    if not update:
        raise ValueError("update cannot be empty")
    if isinstance(update, Mapping) and not next(iter(update)).startswith("$"):
        raise ValueError(f"update only works with $ operators (got {next(iter(update))!r}); "
                         f"use replace_one to replace a document")


def validate_ok_for_replace(replacement: Any) -> None:
    """A replacement is a document whose first key is not an operator."""
    validate_is_mapping("replacement", replacement)
    if replacement and not is_raw(replacement) and \
            next(iter(replacement)).startswith("$"):
        raise ValueError(f"replacement can not include $ operators (got "
                         f"{next(iter(replacement))!r}); use update_one to apply them")


def validate_boolean(option: str, value: Any) -> bool:
    """True or False, else TypeError (PyMongo's message)."""
    if not isinstance(value, bool):
        raise TypeError(f"{option} must be True or False, was: {option}={value}")
    return value


def validate_non_negative_int(option: str, value: Any) -> int:
    # As PyMongo's skip and batch_size: any int, a bool included.
    if not isinstance(value, int):
        raise TypeError(f"{option} must be an integer, not {value!r}")
    if value < 0:
        raise ValueError(f"{option} must be >= 0, not {value}")
    return value


def validate_collation(value: Any) -> Optional[dict[str, Any]]:
    """The ``collation`` document for a Collation or a mapping; TypeError for anything else.
    (collation.py is not imported for this: a user with a Collation has imported it.)"""
    if value is None:
        return None
    collation = sys.modules.get(f"{__package__}.collation")
    if collation is not None and isinstance(value, collation.Collation):
        return value.document  # type: ignore[no-any-return]
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"collation must be a Collation or a mapping, not {value!r}")


# ----- keys of sorts, hints and indexes: "a", [("a", 1), ("b", -1)] or {"a": 1} -------------

ASCENDING = 1
DESCENDING = -1


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
        if not isinstance(pair, (tuple, list)):  # PyMongo: a TypeError (it cannot unpack)
            raise TypeError(f"each key must be a (key, direction) pair, not {pair!r}")
        if len(pair) != 2:
            raise ValueError(f"each key must be a (key, direction) pair, not {pair!r}")
        key, value = pair
        if not isinstance(key, str):
            raise TypeError(f"first item in each key pair must be an instance of str, not "
                            f"{type(key)}")
        if not isinstance(value, (str, int, Mapping)):
            raise TypeError(f"second item in each key pair must be 1, -1, '2d', or another "
                            f"valid MongoDB index specifier, not {type(value)}")
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
