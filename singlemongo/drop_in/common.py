"""``pymongo.common``, ``pymongo.database_shared`` and ``pymongo.helpers_shared`` as libraries
use them: PyMongo's argument validators (with its exception types and messages), its limits
and defaults, ``BaseObject``, and the name and key helpers. The face's own checks live in
``singlemongo/arguments.py``; the ones both need are that module's."""
from __future__ import annotations

from collections import abc
from typing import Any, Mapping, Optional

from bson.binary import UuidRepresentation

from singlemongo.arguments import (validate_collation, validate_is_document_type,  # noqa: F401
                         validate_is_mapping, validate_ok_for_replace, validate_ok_for_update)
from singlemongo.arguments import gen_index_name as _gen_index_name  # noqa: F401
from singlemongo.arguments import index_document as _index_document  # noqa: F401
from singlemongo.arguments import index_list as _index_list  # noqa: F401
from singlemongo.arguments import validate_database_name as _validate_database_name
from singlemongo.base_object import BaseObject  # noqa: F401
from singlemongo.sdam.topology_description import (MAX_SUPPORTED_WIRE_VERSION,  # noqa: F401
                                         MIN_SUPPORTED_SERVER_VERSION, MIN_SUPPORTED_WIRE_VERSION)

# Defaults and limits (PyMongo's names and values).
MAX_BSON_SIZE = 16 * (1024 ** 2)
MAX_MESSAGE_SIZE = 2 * MAX_BSON_SIZE
MIN_WIRE_VERSION = 0
MAX_WIRE_VERSION = 0
MAX_WRITE_BATCH_SIZE = 1000
HEARTBEAT_FREQUENCY = 10
KILL_CURSOR_FREQUENCY = 1
EVENTS_QUEUE_FREQUENCY = 1
SERVER_SELECTION_TIMEOUT = 30
MIN_HEARTBEAT_INTERVAL = 0.5
MIN_SRV_RESCAN_INTERVAL = 60
CONNECT_TIMEOUT = 20.0
MAX_POOL_SIZE = 100
MIN_POOL_SIZE = 0
MAX_CONNECTING = 2
MAX_IDLE_TIME_MS: Optional[int] = None
MAX_IDLE_TIME_SEC: Optional[int] = None
WAIT_QUEUE_TIMEOUT: Optional[int] = None
LOCAL_THRESHOLD_MS = 15
RETRY_WRITES = True
RETRY_READS = True
SRV_SERVICE_NAME = "mongodb"
SERVER_MONITORING_MODE = "auto"
COMMAND_NOT_FOUND_CODES = (59,)
UNAUTHORIZED_CODES = (13, 16547, 16548)
_MAX_END_SESSIONS = 10000
_UUID_REPRESENTATIONS = {
    "unspecified": UuidRepresentation.UNSPECIFIED,
    "standard": UuidRepresentation.STANDARD,
    "pythonLegacy": UuidRepresentation.PYTHON_LEGACY,
    "javaLegacy": UuidRepresentation.JAVA_LEGACY,
    "csharpLegacy": UuidRepresentation.CSHARP_LEGACY,
}
_MONGOS_MODES = ("primary", "primaryPreferred", "secondary", "secondaryPreferred", "nearest")


def has_c() -> bool:
    """False: singlemongo has no C extension of its own."""
    return False


def _check_name(name: str) -> None:
    """pymongo.database_shared._check_name: InvalidName for a bad database name."""
    _validate_database_name(name)


def validate_boolean(option: str, value: Any) -> bool:
    """True or False, else TypeError."""
    if isinstance(value, bool):
        return value
    raise TypeError(f"{option} must be True or False, was: {option}={value}")


def validate_boolean_or_string(option: str, value: Any) -> bool:
    """True, False, 'true' or 'false'."""
    if isinstance(value, str):
        if value not in ("true", "false"):
            raise ValueError(f"The value of {option} must be 'true' or 'false'")
        return value == "true"
    return validate_boolean(option, value)


def validate_integer(option: str, value: Any) -> int:
    """An int, or a string of one."""
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"The value of {option} must be an integer") from None
    raise TypeError(f"Wrong type for {option}, value must be an integer, not {type(value)}")


def validate_positive_integer(option: str, value: Any) -> int:
    """An integer above 0."""
    val = validate_integer(option, value)
    if val <= 0:
        raise ValueError(f"The value of {option} must be a positive integer")
    return val


def validate_non_negative_integer(option: str, value: Any) -> int:
    """An integer of at least 0."""
    val = validate_integer(option, value)
    if val < 0:
        raise ValueError(f"The value of {option} must be a non negative integer")
    return val


def validate_non_negative_integer_or_none(option: str, value: Any) -> Optional[int]:
    """None, or an integer of at least 0."""
    return None if value is None else validate_non_negative_integer(option, value)


def validate_string(option: str, value: Any) -> str:
    """A str, else TypeError."""
    if isinstance(value, str):
        return value
    raise TypeError(f"Wrong type for {option}, value must be an instance of str, not "
                    f"{type(value)}")


def validate_string_or_none(option: str, value: Any) -> Optional[str]:
    """None, or a str."""
    return None if value is None else validate_string(option, value)


def validate_positive_float(option: str, value: Any) -> float:
    """A number above 0 and below one billion."""
    message = f"{option} must be an integer or float"
    try:
        value = float(value)
    except ValueError:
        raise ValueError(message) from None
    except TypeError:
        raise TypeError(message) from None
    if not 0 < value < 1e9:
        raise ValueError(f"{option} must be greater than 0 and less than one billion")
    return value


def validate_timeout_or_none(option: str, value: Any) -> Optional[float]:
    """Milliseconds, returned in seconds; None stays None."""
    return None if value is None else validate_positive_float(option, value) / 1000.0


def validate_read_preference(dummy: Any, value: Any) -> Any:
    """A read preference object (``ReadPreference.PRIMARY``, ``Secondary(...)``)."""
    from singlemongo.read_preferences import _ServerMode
    if not isinstance(value, _ServerMode):
        raise TypeError(f"{value!r} is not a read preference")
    return value


def validate_read_preference_mode(dummy: Any, value: Any) -> str:
    """A read preference mode name."""
    if value not in _MONGOS_MODES:
        raise ValueError(f"{value} is not a valid read preference")
    return value  # type: ignore[no-any-return]


def validate_list(option: str, value: Any) -> list[Any]:
    """A list, else TypeError."""
    if not isinstance(value, list):
        raise TypeError(f"{option} must be a list, not {type(value)}")
    return value


def validate_list_or_none(option: Any, value: Any) -> Optional[list[Any]]:
    """None, or a list."""
    return None if value is None else validate_list(option, value)


def validate_list_or_mapping(option: Any, value: Any) -> None:
    """A list or a mapping, else TypeError."""
    if not isinstance(value, (abc.Mapping, list)):
        raise TypeError(f"{option} must either be a list or an instance of dict, bson.son.SON, "
                        f"or any other type that inherits from collections.Mapping")


def validate_uuid_representation(dummy: Any, value: Any) -> int:
    """A uuidRepresentation name, as its bson code."""
    try:
        return _UUID_REPRESENTATIONS[value]
    except KeyError:
        raise ValueError(f"{value} is an invalid UUID representation. Must be one of "
                         f"{tuple(_UUID_REPRESENTATIONS)}") from None


def _fields_list_to_dict(fields: Any, option_name: str) -> Mapping[str, Any]:
    """A projection document from a mapping or a list of field names."""
    if isinstance(fields, abc.Mapping):
        return fields
    if isinstance(fields, (abc.Sequence, abc.Set)) and not isinstance(fields, str):
        if not all(isinstance(field, str) for field in fields):
            raise TypeError(f"{option_name} must be a list of key names, each an instance of "
                            f"str")
        return dict.fromkeys(fields, 1)
    raise TypeError(f"{option_name} must be a mapping or list of key names")


def validate(option: str, value: Any) -> tuple[str, Any]:
    """A client option and its validated value (singlemongo's option table) in PyMongo's
    units (timeouts in seconds, uuidRepresentation as its code); an unknown option is a
    ConfigurationError with suggestions."""
    from singlemongo.options.client_options import validate_keyword
    from singlemongo.options.table import canonical_name
    from singlemongo.uri_parser import _pymongo_value
    return option, _pymongo_value(canonical_name(option) or option,
                                  validate_keyword(option, value))


def get_validated_options(options: Mapping[str, Any], warn: bool = True) -> dict[str, Any]:
    """The options that validate; invalid ones are dropped with a warning (``warn``) or
    raise."""
    import warnings
    valid = {}
    for option, value in options.items():
        try:
            valid[option] = validate(option, value)[1]
        except (ValueError, TypeError) as exc:
            if not warn:
                raise
            warnings.warn(str(exc), stacklevel=2)
    return valid


def partition_node(node: str) -> tuple[str, int]:
    """``"host:port"`` (or ``"[::1]:port"``) as ``(host, port)``, 27017 when no port is
    given, as PyMongo's ``partition_node``."""
    host, sep, port = node.rpartition(":")
    if not sep:
        host, port = node, "27017"
    return (host[1:-1] if host.startswith("[") else host), int(port)


def clean_node(node: str) -> tuple[str, int]:
    """``partition_node`` with the host lower-cased (DNS names are case-insensitive)."""
    host, port = partition_node(node)
    return host.lower(), port


class Version(tuple):  # type: ignore[type-arg]
    """A server or package version that compares as a tuple, padded to four parts (the
    fourth: -1 for a pre-release, 1 for a "+" build), as PyMongo's ``common.Version``."""

    def __new__(cls, *version: int) -> "Version":
        return super().__new__(cls, (*version, *(0,) * (4 - len(version))))

    @classmethod
    def from_string(cls, text: str) -> "Version":
        """``"7.0.2"``, ``"7.0.0-rc1"``, ``"4.4.0+"``, ``"3.2.0-97-g1ef94fe"`` ..."""
        mod, bump = 0, False
        for suffix, value in (("+", 1), ("-pre-", -1), ("-", -1)):
            if text.endswith(suffix):
                text, mod = text[:-len(suffix)], value
                break
        if ".dev" in text:
            text, mod = text[:text.find(".dev")], -1
        if "-rc" in text:
            text, mod = text[:text.find("-rc")], -1
        elif "-" in text:  # git describe: a build after the release named
            text, mod, bump = text[:text.find("-")], -1, True
        parts = [int(part) for part in text.split(".")]
        parts += [0] * (3 - len(parts))
        if bump:
            parts[-1] += 1
        return cls(*parts, mod)

    @classmethod
    def from_version_array(cls, array: Any) -> "Version":
        """buildInfo's ``versionArray`` (a negative last part is a pre-release)."""
        parts = list(array)
        if parts[-1] < 0:
            parts[-1] = -1
        return cls(*parts, *(0,) * (3 - len(parts)))

    def at_least(self, *other: int) -> bool:
        """Whether this version is ``other`` or later."""
        return self >= Version(*other)

    def __str__(self) -> str:
        return ".".join(map(str, self))


# The connection string names read as another option (PyMongo's map: ssl is tls).
INTERNAL_URI_OPTION_NAME_MAP: dict[str, str] = {"ssl": "tls"}
