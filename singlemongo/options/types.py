"""Value types of connection options (uri-options spec, "List of specified options").

A validator takes the text from a connection string or a Python value from a keyword argument
and returns the typed value, or raises ValueError saying what was expected (TypeError for a
keyword value of the wrong Python type, as PyMongo's validators do).
"""
import re

from .redact import SecretText

# Patterns are compiled on first use (re's cache), not at import: a one-off query
# compiles only those it needs.
_INT = r"^[+-]?\d+$"
_INT32_MAX = 2 ** 31 - 1
_INT64_MAX = 2 ** 63 - 1


def boolean(value):
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value in ("true", "false"):
        return value == "true"
    if not isinstance(value, str):
        raise TypeError("expected True or False")
    raise ValueError("expected true or false")


def integer(minimum=None, maximum=_INT32_MAX, allowed=()):
    """An integer in [minimum, maximum], or one of ``allowed``."""
    def check(value):
        if isinstance(value, bool):
            raise ValueError("expected an integer")
        if isinstance(value, str):
            if not re.match(_INT, value):
                raise ValueError("expected an integer")
            value = int(value)
        elif isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int):
            raise TypeError("expected an integer")
        if value in allowed:
            return value
        if minimum is not None and value < minimum:
            extra = f" (or {', '.join(map(str, allowed))})" if allowed else ""
            raise ValueError(f"expected an integer of at least {minimum}{extra}")
        if maximum is not None and value > maximum:
            raise ValueError(f"expected an integer of at most {maximum}")
        return value
    return check


INT64 = integer(0, _INT64_MAX)


def string(value):
    if not isinstance(value, str):
        raise TypeError("expected a string")
    return value


def non_empty_string(value):
    if not string(value):
        raise ValueError("expected a non-empty string")
    return value


def secret(validate):
    """A password-like option: kept as a SecretText, so its repr is redacted everywhere."""
    return lambda value: SecretText(validate(value))


def one_of(*choices):
    def check(value):
        if value not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}")
        return value
    return check


def appname(value):
    string(value)
    if len(value.encode("utf-8")) > 128:
        raise ValueError("an application name is at most 128 bytes of UTF-8 (handshake spec)")
    return value


def write_concern_w(value):
    if isinstance(value, str) and re.match(_INT, value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise ValueError("expected a non-negative integer or a string")
    if isinstance(value, int) and value < 0:
        raise ValueError("expected a non-negative integer or a string")
    return value


def string_list(value):
    if isinstance(value, str):
        return [item for item in value.split(",") if item]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ValueError("expected a comma-separated list")


def key_value_pairs(value):
    """``k1:v1,k2:v2``; the value is everything after the first colon."""
    if isinstance(value, dict):
        return dict(value)
    if not isinstance(value, str):
        raise ValueError("expected key:value pairs separated by commas")
    pairs = {}
    for item in value.split(","):
        if not item:
            continue
        key, colon, val = item.partition(":")
        if not colon or not key:
            raise ValueError(f"expected key:value, found {item!r}")
        pairs[key] = val
    return pairs


def tag_set(value):
    """One readPreferenceTags value; the empty string is the empty tag set."""
    if isinstance(value, dict):
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise ValueError("tag names and values are strings")
        return dict(value)
    if value == "":
        return {}
    return key_value_pairs(value)


def tag_sets(value):
    if isinstance(value, (list, tuple)):
        return [tag_set(v) for v in value]
    return [tag_set(value)]


# ----- keyword-only options of the face (PyMongo's MongoClient keywords) --------------------

def document_class(value):
    """A Mapping subclass (dict, SON, OrderedDict, RawBSONDocument, ...)."""
    from collections.abc import Mapping as _Mapping
    from bson.raw_bson import RawBSONDocument
    if isinstance(value, type) and (issubclass(value, _Mapping) or value is RawBSONDocument):
        return value
    raise TypeError("expected a Mapping subclass such as dict, bson.son.SON or "
                    "bson.raw_bson.RawBSONDocument")


def tzinfo(value):
    import datetime
    if value is None or isinstance(value, datetime.tzinfo):
        return value
    raise TypeError("expected a datetime.tzinfo")


def type_registry(value):
    from bson.codec_options import TypeRegistry
    if value is None or isinstance(value, TypeRegistry):
        return value
    raise TypeError("expected a bson.codec_options.TypeRegistry")


def datetime_conversion(value):
    from bson.codec_options import DatetimeConversion
    if isinstance(value, DatetimeConversion):
        return value
    if isinstance(value, str) and value.upper() in DatetimeConversion.__members__:
        return DatetimeConversion[value.upper()]
    if isinstance(value, int) and not isinstance(value, bool):
        return DatetimeConversion(value)
    raise ValueError(f"expected one of {', '.join(DatetimeConversion.__members__)}")


def server_api(value):
    from ..server_api import ServerApi
    if value is None or isinstance(value, ServerApi):
        return value
    raise TypeError("expected a ServerApi")


def driver_info(value):
    from ..driver_info import DriverInfo
    if value is None or isinstance(value, DriverInfo):
        return value
    raise TypeError("expected a DriverInfo")
