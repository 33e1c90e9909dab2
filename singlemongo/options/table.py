"""The table of connection options: canonical name, Python name, value type and default.

Names follow the uri-options spec; defaults are the single-threaded ones (DESIGN.md, "Default
timings"). A value type's validator takes the text from a connection string or a Python value
from a keyword argument and returns the typed value, or raises ValueError saying what was
expected (TypeError for a keyword value of the wrong Python type, as PyMongo's validators do).
"""
from __future__ import annotations

from operator import itemgetter
TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Any, Callable

from singlemongo.options.uri import SecretText

# Single-threaded monitoring defaults, all in milliseconds (DESIGN.md, "Default timings").
HEARTBEAT_FREQUENCY_MS = 60_000
MIN_HEARTBEAT_FREQUENCY_MS = 500
COOLDOWN_MS = 5_000
SOCKET_CHECK_INTERVAL_MS = 5_000
LOCAL_THRESHOLD_MS = 15
SERVER_SELECTION_TIMEOUT_MS = 30_000
CONNECT_TIMEOUT_MS = 10_000
MAX_ADAPTIVE_RETRIES = 5  # client backpressure (seed document)

# ----- value types (uri-options spec, "List of specified options") ------------------------
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


def _is_integer_text(value):
    """An optional sign and ASCII digits, nothing else (no spaces, no other scripts' digits).
    String methods, not a regular expression: a one-off would compile it for one option."""
    digits = value[1:] if value.startswith(("+", "-")) else value
    return digits.isascii() and digits.isdigit()


# PyMongo's words ("must be an integer", "must be a positive integer"), which its users and
# its suite look for in the message.
_AT_LEAST = {0: "a non-negative integer", 1: "a positive integer"}


def integer(minimum=None, maximum=_INT32_MAX, allowed=()):
    """An integer in [minimum, maximum], or one of ``allowed``."""
    def check(value):
        if isinstance(value, bool):
            raise ValueError("must be an integer")
        if isinstance(value, str):
            if not _is_integer_text(value):
                raise ValueError("must be an integer")
            value = int(value)
        elif isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int):
            raise TypeError("must be an integer")
        if value in allowed:
            return value
        if minimum is not None and value < minimum:
            extra = f" (or {', '.join(map(str, allowed))})" if allowed else ""
            raise ValueError(f"must be {_AT_LEAST.get(minimum, f'an integer of at least {minimum}')}"
                             f"{extra}")
        if maximum is not None and value > maximum:
            raise ValueError(f"must be an integer of at most {maximum}")
        return value
    return check


INT64 = integer(0, _INT64_MAX)
NON_NEGATIVE = integer(0)  # one closure for the table's many non-negative options


def milliseconds(value):
    """A timeout in milliseconds: an integer, or as PyMongo also takes it, a fraction
    ("0.1", 1.5); finite, at least 0 and under one billion."""
    try:
        return NON_NEGATIVE(value)
    except (TypeError, ValueError):
        if isinstance(value, bool) or not isinstance(value, (str, float)):
            raise
    try:
        number = float(value)
    except ValueError:
        raise ValueError("expected a number of milliseconds") from None
    if isinstance(value, str) and number == 0:  # PyMongo: "0" or a positive number
        raise ValueError("expected 0 or a positive number of milliseconds")
    if not 0 <= number < 1e9:  # inf and nan too
        raise ValueError("expected a number of milliseconds from 0 to under one billion")
    return int(number) if number.is_integer() else number


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
        if not isinstance(value, str):  # PyMongo: a TypeError for another type
            raise TypeError(f"expected one of {', '.join(choices)}")
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
    if isinstance(value, str) and _is_integer_text(value):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError("expected a non-negative integer or a string")  # PyMongo's class
    if isinstance(value, int) and value < 0:
        raise ValueError("expected a non-negative integer or a string")
    return value


def string_list(value):
    if isinstance(value, str):
        return [item for item in value.split(",") if item]
    try:  # as PyMongo: any iterable of names
        items = list(value)
    except TypeError:
        raise TypeError("expected a comma-separated list or a list of strings") from None
    if all(isinstance(v, str) for v in items):
        return items
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


# Mechanism properties that are credentials (auth spec, MONGODB-AWS's session token): kept as
# SecretText, so that no repr, message or frame local shows them.
SECRET_MECHANISM_PROPERTIES = frozenset({"AWS_SESSION_TOKEN"})


def mechanism_properties(value):
    """authMechanismProperties: ``key_value_pairs`` with its secrets kept secret."""
    return {key: SecretText(val) if key in SECRET_MECHANISM_PROPERTIES and
            isinstance(val, str) else val for key, val in key_value_pairs(value).items()}


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

def callable_or_none(value):
    """A function (or None)."""
    if value is not None and not callable(value):
        raise TypeError(f"must be a callable, not {type(value).__name__}")
    return value


def document_class(value):
    """A Mapping subclass (dict, SON, OrderedDict, RawBSONDocument, ...)."""
    from collections.abc import Mapping as _Mapping
    from bson.raw_bson import RawBSONDocument
    origin = getattr(value, "__origin__", None)  # SON[str, Any]: a generic alias, as PyMongo
    if isinstance(origin, type) and (issubclass(origin, _Mapping) or origin is RawBSONDocument):
        return value
    if isinstance(value, type) and (issubclass(value, _Mapping) or value is RawBSONDocument):
        return value
    raise TypeError("expected a Mapping subclass such as dict, bson.son.SON or "
                    "bson.raw_bson.RawBSONDocument")


def none_or_instance(module, name, label):
    """None or an instance of ``module.name`` (imported at the first check: the codec and
    identity keywords are rare in a one-off)."""
    def check(value):
        import importlib
        if value is None or isinstance(value, getattr(importlib.import_module(
                module, __package__), name)):
            return value
        raise TypeError(f"expected a {label}")
    return check


tzinfo = none_or_instance("datetime", "tzinfo", "datetime.tzinfo")
type_registry = none_or_instance("bson.codec_options", "TypeRegistry",
                                 "bson.codec_options.TypeRegistry")
server_api = none_or_instance("..server_api", "ServerApi", "ServerApi")
driver_info = none_or_instance("..driver_info", "DriverInfo", "DriverInfo")


def datetime_conversion(value):
    from bson.codec_options import DatetimeConversion
    if isinstance(value, DatetimeConversion):
        return value
    if isinstance(value, str) and value.upper() in DatetimeConversion.__members__:
        return DatetimeConversion[value.upper()]
    if isinstance(value, str) and _is_integer_text(value):  # a connection string's "2"
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return DatetimeConversion(value)
    raise ValueError(f"expected one of {', '.join(DatetimeConversion.__members__)}")


# ----- the table ----------------------------------------------------------------------------
AUTH_MECHANISMS = ("SCRAM-SHA-1", "SCRAM-SHA-256", "MONGODB-X509", "GSSAPI", "PLAIN",
                   "MONGODB-AWS", "MONGODB-OIDC")
READ_PREFERENCE_MODES = ("primary", "primaryPreferred", "secondary", "secondaryPreferred",
                         "nearest")
COMPRESSORS = ("snappy", "zlib", "zstd")
UUID_REPRESENTATIONS = ("unspecified", "standard", "pythonLegacy", "javaLegacy", "csharpLegacy")
PROXY_OPTIONS = ("proxyHost", "proxyPort", "proxyUsername", "proxyPassword")


class Option(tuple):
    """One row of the table: a frozen record, as a tuple (the import makes sixty of them;
    a tuple is made in a tenth of a record's time)."""

    __slots__ = ()

    def __new__(cls, name: str, attr: str, validate: Callable[[Any], Any], default: Any = None,
                is_list: bool = False, keyword_only: bool = False) -> "Option":
        return tuple.__new__(cls, (name, attr, validate, default, is_list, keyword_only))

    name = property(itemgetter(0))
    attr = property(itemgetter(1))
    validate = property(itemgetter(2))
    default = property(itemgetter(3))
    is_list = property(itemgetter(4))
    # PyMongo's MongoClient keywords: not in a connection string.
    keyword_only = property(itemgetter(5))


_TABLE = (
    Option("appname", "appname", appname),
    Option("authMechanism", "auth_mechanism", string),
    Option("authMechanismProperties", "auth_mechanism_properties", mechanism_properties),
    Option("authSource", "auth_source", string),
    Option("compressors", "compressors", string_list, ()),
    Option("connectTimeoutMS", "connect_timeout_ms", milliseconds, CONNECT_TIMEOUT_MS),
    Option("directConnection", "direct_connection", boolean),
    Option("enableOverloadRetargeting", "enable_overload_retargeting", boolean, True),
    Option("heartbeatFrequencyMS", "heartbeat_frequency_ms", integer(MIN_HEARTBEAT_FREQUENCY_MS),
           HEARTBEAT_FREQUENCY_MS),
    Option("journal", "journal", boolean),
    # PyMongo's own (its "non-spec" options, in a connection string too): fsync is a write
    # concern field (read/write concern spec, "FSync"); waitQueueMultiple is accepted and,
    # as in PyMongo 4, has no effect.
    Option("fsync", "fsync", boolean),
    Option("waitQueueMultiple", "wait_queue_multiple", NON_NEGATIVE),
    Option("loadBalanced", "load_balanced", boolean, False),
    Option("localThresholdMS", "local_threshold_ms", milliseconds, LOCAL_THRESHOLD_MS),
    Option("maxAdaptiveRetries", "max_adaptive_retries", NON_NEGATIVE, MAX_ADAPTIVE_RETRIES),
    Option("maxConnecting", "max_connecting", integer(1)),
    Option("maxIdleTimeMS", "max_idle_time_ms", milliseconds),
    Option("maxPoolSize", "max_pool_size", NON_NEGATIVE, 100),
    Option("maxStalenessSeconds", "max_staleness_seconds", integer(1, allowed=(-1,))),
    Option("minPoolSize", "min_pool_size", NON_NEGATIVE),
    Option("proxyHost", "proxy_host", string),
    Option("proxyPort", "proxy_port", integer(0, 65535)),
    Option("proxyUsername", "proxy_username", non_empty_string),
    Option("proxyPassword", "proxy_password", secret(non_empty_string)),
    Option("readConcernLevel", "read_concern_level", string),
    Option("readPreference", "read_preference", one_of(*READ_PREFERENCE_MODES), "primary"),
    Option("readPreferenceTags", "read_preference_tags", tag_sets, (), is_list=True),
    Option("replicaSet", "replica_set", string),
    Option("retryReads", "retry_reads", boolean, True),
    Option("retryWrites", "retry_writes", boolean, True),
    Option("serverMonitoringMode", "server_monitoring_mode", one_of("stream", "poll", "auto"),
           "auto"),
    Option("serverSelectionTimeoutMS", "server_selection_timeout_ms", milliseconds,
           SERVER_SELECTION_TIMEOUT_MS),
    Option("serverSelectionTryOnce", "server_selection_try_once", boolean, True),
    Option("socketCheckIntervalMS", "socket_check_interval_ms", NON_NEGATIVE,
           SOCKET_CHECK_INTERVAL_MS),
    Option("socketTimeoutMS", "socket_timeout_ms", milliseconds, 0),
    Option("srvMaxHosts", "srv_max_hosts", NON_NEGATIVE, 0),
    Option("srvServiceName", "srv_service_name", non_empty_string, "mongodb"),
    Option("timeoutMS", "timeout_ms", milliseconds),
    # singlemongo's own: a file shared by processes to skip the first scan (topology_cache.py).
    Option("topologyCacheFile", "topology_cache_file", non_empty_string),
    Option("tls", "tls", boolean, False),
    Option("tlsAllowInvalidCertificates", "tls_allow_invalid_certificates", boolean, False),
    Option("tlsAllowInvalidHostnames", "tls_allow_invalid_hostnames", boolean, False),
    Option("tlsCAFile", "tls_ca_file", string),
    Option("tlsCertificateKeyFile", "tls_certificate_key_file", string),
    # PyMongo's: a certificate revocation list the server's certificate is checked against.
    Option("tlsCRLFile", "tls_crl_file", string),
    Option("tlsCertificateKeyFilePassword", "tls_certificate_key_file_password",
           secret(string)),
    Option("tlsDisableCertificateRevocationCheck", "tls_disable_certificate_revocation_check",
           boolean, False),
    Option("tlsDisableOCSPEndpointCheck", "tls_disable_ocsp_endpoint_check", boolean, False),
    Option("tlsInsecure", "tls_insecure", boolean, False),
    Option("w", "w", write_concern_w),
    Option("waitQueueTimeoutMS", "wait_queue_timeout_ms", integer(1)),
    Option("wTimeoutMS", "wtimeout_ms", INT64),
    Option("uuidRepresentation", "uuid_representation",
           one_of(*UUID_REPRESENTATIONS), "unspecified"),
    Option("zlibCompressionLevel", "zlib_compression_level", integer(-1, 9), -1),
    # The face's options (PyMongo's MongoClient): codecs, identity, the Stable API. The
    # keyword-only ones are not read from a connection string; the rest are, as in PyMongo.
    Option("document_class", "document_class", document_class, dict, keyword_only=True),
    Option("tz_aware", "tz_aware", boolean, False),  # in a connection string too, as in PyMongo
    Option("tzinfo", "tzinfo", tzinfo, keyword_only=True),
    Option("type_registry", "type_registry", type_registry, keyword_only=True),
    Option("unicode_decode_error_handler", "unicode_decode_error_handler",
           one_of("strict", "replace", "backslashreplace", "surrogateescape", "ignore"),
           "strict"),
    Option("datetime_conversion", "datetime_conversion", datetime_conversion),
    Option("connect", "connect", boolean),
    Option("username", "username", string, keyword_only=True),
    Option("password", "password", secret(string), keyword_only=True),
    Option("server_api", "server_api", server_api, keyword_only=True),
    # PyMongo 4.20's: a callable deciding which SRV targets to accept (options/srv.py).
    Option("srv_host_validator", "srv_host_validator", callable_or_none, keyword_only=True),
    Option("driver", "driver", driver_info, keyword_only=True),
)

# Built by zip and map, not comprehensions: in C, not sixty Python iterations each.
_NAMES = tuple(map(itemgetter(0), _TABLE))
OPTIONS = dict(zip(_NAMES, _TABLE))
_DEFAULTS = tuple(map(itemgetter(3), _TABLE))
# A keyword given as None where the default is not None: what PyMongo's MongoClient makes of
# it. The two timeouts: "0 or None means no timeout" (0 is no timeout here too); the codec
# keywords: their default (MongoClient's signature); maxPoolSize: no maximum, as 0. Any other
# such None is refused by name.
KEYWORD_NONE = {"connectTimeoutMS": 0, "socketTimeoutMS": 0, "document_class": dict,
                "tz_aware": False, "maxPoolSize": None}


# Options whose keyword PyMongo refuses as None (a TypeError; a ValueError for the second
# group), though their default is none: a program written for PyMongo never passes it.
NONE_REFUSED_TYPE = frozenset({
    "authMechanismProperties", "authSource", "compressors", "directConnection", "journal",
    "fsync", "maxStalenessSeconds", "minPoolSize", "maxConnecting", "srvMaxHosts", "w",
    "wTimeoutMS", "connect"})
NONE_REFUSED_VALUE = frozenset({"authMechanism", "readPreferenceTags"})


def keyword_value(name, value):
    """The value of option ``name`` given as a keyword (or to validate_options): a None that
    means something is that (KEYWORD_NONE; None where the default is none, unless PyMongo
    refuses it); anything else is validated (ValueError or TypeError)."""
    opt = OPTIONS[name]
    if value is None and name in NONE_REFUSED_TYPE:
        raise TypeError("None is not a value for it, as in PyMongo (leave the keyword out)")
    if value is None and name in NONE_REFUSED_VALUE:
        raise ValueError("None is not a value for it, as in PyMongo (leave the keyword out)")
    if value is None and (opt.default is None or name in KEYWORD_NONE):
        return KEYWORD_NONE.get(name)
    return opt.validate(value)


# Old names still accepted (connection-string spec, "Deprecated Key Value Pairs").
ALIASES = {"ssl": "tls", "j": "journal", "wtimeout": "wTimeoutMS"}

_BY_LOWER = dict(zip(map(str.lower, _NAMES), _NAMES))
_BY_LOWER.update(zip(map(itemgetter(1), _TABLE), _NAMES))
_BY_LOWER.update(ALIASES)


def canonical_name(key):
    """The canonical option name for a URI key or keyword (any case), or None."""
    return _BY_LOWER.get(key.lower()) or _BY_LOWER.get(key)


def defaults():
    return dict(zip(_NAMES, _DEFAULTS))
