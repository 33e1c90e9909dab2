"""The table of connection options: canonical name, Python name, value type and default.

Names follow the uri-options spec; defaults are the single-threaded ones (DESIGN.md).
"""
from ..records import dataclass
from typing import Any, Callable

from .. import constants as C
from . import types as T

AUTH_MECHANISMS = ("SCRAM-SHA-1", "SCRAM-SHA-256", "MONGODB-X509", "GSSAPI", "PLAIN",
                   "MONGODB-AWS", "MONGODB-OIDC")
READ_PREFERENCE_MODES = ("primary", "primaryPreferred", "secondary", "secondaryPreferred",
                         "nearest")
COMPRESSORS = ("snappy", "zlib", "zstd")
UUID_REPRESENTATIONS = ("unspecified", "standard", "pythonLegacy", "javaLegacy", "csharpLegacy")
PROXY_OPTIONS = ("proxyHost", "proxyPort", "proxyUsername", "proxyPassword")


@dataclass(frozen=True)
class Option:
    name: str
    attr: str
    validate: Callable[[Any], Any]
    default: Any = None
    is_list: bool = False
    keyword_only: bool = False  # PyMongo's MongoClient keywords: not in a connection string


_TABLE = (
    Option("appname", "appname", T.appname),
    Option("authMechanism", "auth_mechanism", T.string),
    Option("authMechanismProperties", "auth_mechanism_properties", T.key_value_pairs),
    Option("authSource", "auth_source", T.string),
    Option("compressors", "compressors", T.string_list, ()),
    Option("connectTimeoutMS", "connect_timeout_ms", T.integer(0), C.CONNECT_TIMEOUT_MS),
    Option("directConnection", "direct_connection", T.boolean),
    Option("enableOverloadRetargeting", "enable_overload_retargeting", T.boolean, True),
    Option("heartbeatFrequencyMS", "heartbeat_frequency_ms", T.integer(C.MIN_HEARTBEAT_FREQUENCY_MS),
           C.HEARTBEAT_FREQUENCY_MS),
    Option("journal", "journal", T.boolean),
    Option("loadBalanced", "load_balanced", T.boolean, False),
    Option("localThresholdMS", "local_threshold_ms", T.integer(0), C.LOCAL_THRESHOLD_MS),
    Option("maxAdaptiveRetries", "max_adaptive_retries", T.integer(0), C.MAX_ADAPTIVE_RETRIES),
    Option("maxConnecting", "max_connecting", T.integer(1)),
    Option("maxIdleTimeMS", "max_idle_time_ms", T.integer(0)),
    Option("maxPoolSize", "max_pool_size", T.integer(0)),
    Option("maxStalenessSeconds", "max_staleness_seconds", T.integer(1, allowed=(-1,))),
    Option("minPoolSize", "min_pool_size", T.integer(0)),
    Option("proxyHost", "proxy_host", T.string),
    Option("proxyPort", "proxy_port", T.integer(0, 65535)),
    Option("proxyUsername", "proxy_username", T.non_empty_string),
    Option("proxyPassword", "proxy_password", T.secret(T.non_empty_string)),
    Option("readConcernLevel", "read_concern_level", T.string),
    Option("readPreference", "read_preference", T.one_of(*READ_PREFERENCE_MODES), "primary"),
    Option("readPreferenceTags", "read_preference_tags", T.tag_sets, (), is_list=True),
    Option("replicaSet", "replica_set", T.string),
    Option("retryReads", "retry_reads", T.boolean, True),
    Option("retryWrites", "retry_writes", T.boolean, True),
    Option("serverMonitoringMode", "server_monitoring_mode", T.one_of("stream", "poll", "auto"),
           "auto"),
    Option("serverSelectionTimeoutMS", "server_selection_timeout_ms", T.integer(0),
           C.SERVER_SELECTION_TIMEOUT_MS),
    Option("serverSelectionTryOnce", "server_selection_try_once", T.boolean, True),
    Option("socketCheckIntervalMS", "socket_check_interval_ms", T.integer(0),
           C.SOCKET_CHECK_INTERVAL_MS),
    Option("socketTimeoutMS", "socket_timeout_ms", T.integer(0), 0),
    Option("srvMaxHosts", "srv_max_hosts", T.integer(0), 0),
    Option("srvServiceName", "srv_service_name", T.non_empty_string, "mongodb"),
    Option("timeoutMS", "timeout_ms", T.integer(0)),
    # singlemongo's own: a file shared by processes to skip the first scan (topology_cache.py).
    Option("topologyCacheFile", "topology_cache_file", T.non_empty_string),
    Option("tls", "tls", T.boolean, False),
    Option("tlsAllowInvalidCertificates", "tls_allow_invalid_certificates", T.boolean, False),
    Option("tlsAllowInvalidHostnames", "tls_allow_invalid_hostnames", T.boolean, False),
    Option("tlsCAFile", "tls_ca_file", T.string),
    Option("tlsCertificateKeyFile", "tls_certificate_key_file", T.string),
    Option("tlsCertificateKeyFilePassword", "tls_certificate_key_file_password",
           T.secret(T.string)),
    Option("tlsDisableCertificateRevocationCheck", "tls_disable_certificate_revocation_check",
           T.boolean, False),
    Option("tlsDisableOCSPEndpointCheck", "tls_disable_ocsp_endpoint_check", T.boolean, False),
    Option("tlsInsecure", "tls_insecure", T.boolean, False),
    Option("w", "w", T.write_concern_w),
    Option("waitQueueTimeoutMS", "wait_queue_timeout_ms", T.integer(1)),
    Option("wTimeoutMS", "wtimeout_ms", T.INT64),
    Option("uuidRepresentation", "uuid_representation",
           T.one_of(*UUID_REPRESENTATIONS), "unspecified"),
    Option("zlibCompressionLevel", "zlib_compression_level", T.integer(-1, 9), -1),
    # The face's keywords (PyMongo's MongoClient): codecs, identity, the Stable API.
    Option("document_class", "document_class", T.document_class, dict, keyword_only=True),
    Option("tz_aware", "tz_aware", T.boolean, False, keyword_only=True),
    Option("tzinfo", "tzinfo", T.tzinfo, keyword_only=True),
    Option("type_registry", "type_registry", T.type_registry, keyword_only=True),
    Option("unicode_decode_error_handler", "unicode_decode_error_handler",
           T.one_of("strict", "replace", "backslashreplace", "surrogateescape", "ignore"),
           "strict"),
    Option("datetime_conversion", "datetime_conversion", T.datetime_conversion),
    Option("connect", "connect", T.boolean, keyword_only=True),
    Option("username", "username", T.non_empty_string, keyword_only=True),
    Option("password", "password", T.secret(T.string), keyword_only=True),
    Option("server_api", "server_api", T.server_api, keyword_only=True),
    Option("driver", "driver", T.driver_info, keyword_only=True),
)

OPTIONS = {opt.name: opt for opt in _TABLE}
# Old names still accepted (connection-string spec, "Deprecated Key Value Pairs").
ALIASES = {"ssl": "tls", "j": "journal", "wtimeout": "wTimeoutMS"}

_BY_LOWER = {opt.name.lower(): opt.name for opt in _TABLE}
_BY_LOWER.update({opt.attr: opt.name for opt in _TABLE})
_BY_LOWER.update(ALIASES)


def canonical_name(key):
    """The canonical option name for a URI key or keyword (any case), or None."""
    return _BY_LOWER.get(key.lower()) or _BY_LOWER.get(key)


def defaults():
    return {opt.name: opt.default for opt in _TABLE}
