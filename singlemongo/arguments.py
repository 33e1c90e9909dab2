"""The checks and normal forms of the arguments the face's methods take, with PyMongo's
exception types (TypeError for a wrong type, ValueError for a wrong value, InvalidName for a bad
name): names, documents, options, collations, index keys and hints."""
from __future__ import annotations

import sys
from collections.abc import ItemsView, Mapping, MutableMapping
TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Any, NoReturn, Optional, Sequence

from singlemongo import errors


def _instance_of(value: Any, module: str, name: str) -> bool:
    """Whether ``value`` is a ``module.name`` (a full module name) without loading that
    module: an object of a class whose module was never imported cannot exist."""
    loaded = sys.modules.get(module)
    return loaded is not None and isinstance(value, getattr(loaded, name))


def is_raw(document: Any) -> bool:
    """Whether ``document`` is a RawBSONDocument, without importing bson.raw_bson for the
    programs that never use one (a user with one has imported the module)."""
    return _instance_of(document, "bson.raw_bson", "RawBSONDocument")


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
    # A dict first: an ABC's isinstance costs a Python call (once or more per operation).
    if type(value) is not dict and not isinstance(value, Mapping):
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
    mapping = type(update) is dict or isinstance(update, Mapping)
    if not (mapping or isinstance(update, list)):
        raise TypeError(f"update must be a mapping of update operators or a pipeline (a "
                        f"list), not {type(update).__name__}")
    if not update:
        raise ValueError("update cannot be empty")
    if mapping and not next(iter(update)).startswith("$"):
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
