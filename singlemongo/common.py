"""What MongoClient, Database and Collection share (PyMongo's ``common.BaseObject``): codec
options, read preference, write concern and read concern, each inherited from the level above
unless given; and the checks on names and arguments, with PyMongo's exception types (TypeError
for a wrong type, ValueError for a wrong value, InvalidName for a bad name)."""
from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any, NoReturn, Optional

from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument

from .errors import InvalidName
from .read_concern import ReadConcern
from .read_preferences import _ServerMode, from_core, to_core
from .selection.read_preference import ReadPreference as _CoreReadPreference
from .write_concern import WriteConcern


class BaseObject:
    """The four settings every level has, validated and inherited."""

    def __init__(self, codec_options: Optional[CodecOptions[Any]], read_preference: Any,
                 write_concern: Optional[WriteConcern], read_concern: Optional[ReadConcern],
                 parent: Optional[BaseObject] = None) -> None:
        if codec_options is not None and not isinstance(codec_options, CodecOptions):
            raise TypeError(f"codec_options must be a bson.codec_options.CodecOptions, not "
                            f"{codec_options!r}")
        if write_concern is not None and not isinstance(write_concern, WriteConcern):
            raise TypeError(f"write_concern must be a WriteConcern, not {write_concern!r}")
        if read_concern is not None and not isinstance(read_concern, ReadConcern):
            raise TypeError(f"read_concern must be a ReadConcern, not {read_concern!r}")
        self._codec_options: CodecOptions[Any] = codec_options or parent._codec_options  # type: ignore[union-attr]
        core = to_core(read_preference)
        self._read_preference_core: _CoreReadPreference = (
            core if core is not None else parent._read_preference_core)  # type: ignore[union-attr]
        self._write_concern: WriteConcern = write_concern or parent._write_concern  # type: ignore[union-attr]
        self._read_concern: ReadConcern = read_concern or parent._read_concern  # type: ignore[union-attr]

    @property
    def codec_options(self) -> CodecOptions[Any]:
        """The CodecOptions documents are encoded and decoded with."""
        return self._codec_options

    @property
    def read_preference(self) -> _ServerMode:
        """The read preference reads use unless a call gives one."""
        return from_core(self._read_preference_core)

    @property
    def write_concern(self) -> WriteConcern:
        """The write concern writes are sent with."""
        return self._write_concern

    @property
    def read_concern(self) -> ReadConcern:
        """The read concern reads are sent with."""
        return self._read_concern


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
    if not isinstance(name, str):
        raise TypeError(f"name must be an instance of str, not {type(name).__name__}")
    if not name:
        raise InvalidName("database name cannot be the empty string")
    for char in (" ", ".", "$", "/", "\\", "\x00", '"'):
        if char in name:
            raise InvalidName(f"database names cannot contain the character {char!r} "
                              f"(got {name!r})")
    return name


def validate_collection_name(name: Any) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name must be an instance of str, not {type(name).__name__}")
    if not name or ".." in name:
        raise InvalidName(f"collection names cannot be empty or contain '..' (got {name!r})")
    if "$" in name and not (name.startswith("oplog.$main") or name.startswith("$cmd")):
        raise InvalidName(f"collection names must not contain '$' (got {name!r})")
    if name[0] == "." or name[-1] == ".":
        raise InvalidName(f"collection names must not start or end with '.' (got {name!r})")
    if "\x00" in name:
        raise InvalidName("collection names must not contain the null character")
    return name


def validate_is_mapping(option: str, value: Any) -> None:
    if not isinstance(value, Mapping):
        raise TypeError(f"{option} must be an instance of dict, bson.son.SON, or any other "
                        f"type that inherits from collections.Mapping, not "
                        f"{type(value).__name__}")


def validate_is_document_type(option: str, value: Any) -> None:
    if not isinstance(value, (MutableMapping, RawBSONDocument)):
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
    if replacement and not isinstance(replacement, RawBSONDocument) and \
            next(iter(replacement)).startswith("$"):
        raise ValueError(f"replacement can not include $ operators (got "
                         f"{next(iter(replacement))!r}); use update_one to apply them")


def validate_boolean(option: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"{option} must be True or False, not {value!r}")
    return value


def validate_non_negative_int(option: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{option} must be an integer, not {value!r}")
    if value < 0:
        raise ValueError(f"{option} must be >= 0, not {value}")
    return value
