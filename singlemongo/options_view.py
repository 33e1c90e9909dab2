"""``MongoClient.options`` as PyMongo's ``ClientOptions`` and ``PoolOptions`` (served as
``pymongo.client_options`` and ``pymongo.pool_options``): read-only views of the validated
options, with PyMongo's names and units (timeouts in seconds).

singlemongo has no pool: ``pool_options`` reports the options as given (PyMongo's defaults
otherwise); they change nothing (docs: coming-from-pymongo, "Differences from PyMongo"). singlemongo's own
options (``heartbeat_frequency_ms``, ``socket_check_interval_ms``, ...) are readable on the
same object by their names.
"""
from __future__ import annotations

from typing import Any, Optional

from bson.codec_options import CodecOptions

from singlemongo.engine.handshake import (DOCKER_ENV_PATH, ENV_VAR_K8S,  # noqa: F401  # PyMongo's names
                           ORCHESTRATOR_NAME_K8S, RUNTIME_NAME_DOCKER)
from singlemongo.read_concern import ReadConcern
from singlemongo.write_concern import WriteConcern


def _seconds(ms: Optional[float]) -> Optional[float]:
    return None if not ms else ms / 1000.0


class PoolOptions:
    """Connection options of a client (PyMongo's names; no pool exists in singlemongo)."""

    def __init__(self, options: Any, topology: Any = None) -> None:
        self.__options = options
        self.__topology = topology

    @property
    def max_pool_size(self) -> Optional[int]:
        """maxPoolSize as given (100 by default; 0 or None, no maximum, read back as given,
        as in PyMongo); singlemongo keeps one socket per server."""
        return self.__options.max_pool_size

    @property
    def min_pool_size(self) -> int:
        """minPoolSize as given (0 by default)."""
        return self.__options.min_pool_size or 0

    @property
    def max_connecting(self) -> int:
        """maxConnecting as given (2 by default)."""
        return self.__options.max_connecting or 2

    @property
    def max_idle_time_seconds(self) -> Optional[float]:
        """maxIdleTimeMS in seconds, or None."""
        return _seconds(self.__options.max_idle_time_ms)

    @property
    def connect_timeout(self) -> Optional[float]:
        """connectTimeoutMS in seconds (None: no timeout)."""
        return _seconds(self.__options.connect_timeout_ms)

    @property
    def socket_timeout(self) -> Optional[float]:
        """socketTimeoutMS in seconds (None: no timeout)."""
        return _seconds(self.__options.socket_timeout_ms)

    @property
    def wait_queue_timeout(self) -> Optional[float]:
        """waitQueueTimeoutMS in seconds, or None."""
        return _seconds(self.__options.wait_queue_timeout_ms)

    @property
    def tls_allow_invalid_hostnames(self) -> bool:
        """Whether TLS host names are not verified."""
        o = self.__options
        return bool(o.tls_allow_invalid_hostnames or o.tls_insecure)

    @property
    def appname(self) -> Optional[str]:
        """The application name sent in the handshake."""
        return self.__options.appname  # type: ignore[no-any-return]

    @property
    def driver(self) -> Any:
        """The DriverInfo given with ``driver=``, or None."""
        return self.__options.driver

    @property
    def metadata(self) -> dict[str, Any]:
        """The client metadata document of the handshake."""
        from singlemongo.engine.handshake import client_metadata
        drivers = self.__topology.drivers if self.__topology is not None else ()
        return dict(client_metadata(self.__options.appname, drivers))

    @property
    def server_api(self) -> Any:
        """The declared ServerApi, or None."""
        return self.__options.server_api

    @property
    def load_balanced(self) -> Optional[bool]:
        """Whether the client is in load-balanced mode."""
        return self.__options.load_balanced  # type: ignore[no-any-return]

    def non_default_options(self) -> dict[str, Any]:
        """The pool options given explicitly, by their connection-string names."""
        names = ("maxPoolSize", "minPoolSize", "maxIdleTimeMS", "waitQueueTimeoutMS",
                 "maxConnecting")
        given = self.__options.specified_options()
        return {name: given[name] for name in names if name in given}


class ClientOptions:
    """The options of a MongoClient (``client.options``), read only."""

    def __init__(self, options: Any, topology: Any = None) -> None:
        self.__options = options
        self.__topology = topology

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.__options, name)  # singlemongo's own names

    def __repr__(self) -> str:
        return repr(self.__options)

    @property
    def _options(self) -> dict[str, Any]:
        """The options given, by their connection-string names (passwords redacted)."""
        from singlemongo.options.uri import redact_value
        return {k: redact_value(k, v) for k, v in self.__options.specified_options().items()}

    @property
    def connect(self) -> Optional[bool]:
        """The ``connect`` keyword as given (singlemongo never connects before an operation)."""
        return self.__options.connect  # type: ignore[no-any-return]

    @property
    def codec_options(self) -> CodecOptions[Any]:
        """The CodecOptions of the client."""
        return self.__options.codec_options()  # type: ignore[no-any-return]

    @property
    def direct_connection(self) -> Optional[bool]:
        """directConnection as given, or None."""
        return self.__options.direct_connection  # type: ignore[no-any-return]

    @property
    def local_threshold_ms(self) -> int:
        """localThresholdMS."""
        return self.__options.local_threshold_ms  # type: ignore[no-any-return]

    @property
    def server_selection_timeout(self) -> float:
        """serverSelectionTimeoutMS in seconds."""
        return self.__options.server_selection_timeout_ms / 1000.0  # type: ignore[no-any-return]

    @property
    def server_selector(self) -> Any:
        """The application's server selector, or None."""
        return self.__topology.server_selector if self.__topology is not None else None

    @property
    def heartbeat_frequency(self) -> float:
        """heartbeatFrequencyMS in seconds (60 by default: the single-threaded default)."""
        return self.__options.heartbeat_frequency_ms / 1000.0  # type: ignore[no-any-return]

    @property
    def pool_options(self) -> PoolOptions:
        """The connection options (PyMongo's PoolOptions)."""
        return PoolOptions(self.__options, self.__topology)

    @property
    def read_preference(self) -> Any:
        """The client's read preference (``ReadPreference.PRIMARY``, ``Secondary(...)``)."""
        from singlemongo.read_preferences import from_core
        return from_core(self.__options.read_preference)

    @property
    def replica_set_name(self) -> Optional[str]:
        """replicaSet, or None."""
        return self.__options.replica_set  # type: ignore[no-any-return]

    @property
    def write_concern(self) -> WriteConcern:
        """The client's write concern."""
        o = self.__options
        return WriteConcern(o.w, o.wtimeout_ms, o.journal, o.fsync)

    @property
    def read_concern(self) -> ReadConcern:
        """The client's read concern."""
        return ReadConcern(self.__options.read_concern_level)

    @property
    def timeout(self) -> Optional[float]:
        """timeoutMS in seconds, or None."""
        return _seconds(self.__options.timeout_ms)

    @property
    def retry_writes(self) -> bool:
        """retryWrites."""
        return self.__options.retry_writes  # type: ignore[no-any-return]

    @property
    def retry_reads(self) -> bool:
        """retryReads."""
        return self.__options.retry_reads  # type: ignore[no-any-return]

    @property
    def auto_encryption_opts(self) -> None:
        """Always None: client-side field-level encryption is not offered."""
        return None

    @property
    def load_balanced(self) -> Optional[bool]:
        """loadBalanced."""
        return self.__options.load_balanced  # type: ignore[no-any-return]

    @property
    def event_listeners(self) -> list[Any]:
        """The listeners given with ``event_listeners``."""
        return list(self.__topology.events.listeners) if self.__topology is not None else []

    @property
    def server_monitoring_mode(self) -> str:
        """serverMonitoringMode as given (singlemongo checks inline, whatever it says)."""
        return self.__options.server_monitoring_mode  # type: ignore[no-any-return]

    @property
    def max_adaptive_retries(self) -> int:
        """maxAdaptiveRetries (overload retries)."""
        return self.__options.max_adaptive_retries  # type: ignore[no-any-return]

    @property
    def enable_overload_retargeting(self) -> bool:
        """enableOverloadRetargeting."""
        return self.__options.enable_overload_retargeting  # type: ignore[no-any-return]


# PyMongo's MongoClient repr: the constructor's own arguments, then every other option given,
# by its lower-cased name; timeouts as whole milliseconds (PyMongo: its TIMEOUT_OPTIONS).
_CONSTRUCTOR_ARGS = ("document_class", "tz_aware", "connect")
_REPR_TIMEOUTS = frozenset({"connectTimeoutMS", "heartbeatFrequencyMS", "maxIdleTimeMS",
                            "maxStalenessSeconds", "serverSelectionTimeoutMS",
                            "socketTimeoutMS", "waitQueueTimeoutMS"})
_REPR_SECRETS = frozenset({"proxyPassword", "proxyUsername", "tlsCertificateKeyFilePassword"})
# authMechanismProperties keys PyMongo shows in a repr; any other value is redacted.
_SAFE_MECHANISM_PROPERTIES = frozenset({
    "ALLOWED_HOSTS", "CANONICALIZE_HOST_NAME", "ENVIRONMENT", "SERVICE_HOST", "SERVICE_NAME",
    "SERVICE_REALM", "TOKEN_RESOURCE"})
# What tlsInsecure=true sets, which PyMongo lists after the options given.
_IMPLIED_BY_TLS_INSECURE = ("tlsAllowInvalidCertificates", "tlsAllowInvalidHostnames",
                            "tlsDisableOCSPEndpointCheck")


def _option_repr(name: str, value: Any) -> str:
    if name == "document_class":
        return ("document_class=dict" if value is dict
                else f"document_class={value.__module__}.{value.__name__}")
    if name in _REPR_SECRETS:
        return f"{name.lower()}='<redacted>'"
    if name == "authMechanismProperties" and isinstance(value, dict):
        value = {k: v if str(k).upper() in _SAFE_MECHANISM_PROPERTIES else "<redacted>"
                 for k, v in value.items()}
    elif name in _REPR_TIMEOUTS and value is not None:
        value = int(value * 1000) if name == "maxStalenessSeconds" else int(value)
    elif name == "uuidRepresentation":
        from singlemongo.uri_parser import _pymongo_value
        value = _pymongo_value(name, value)
    return f"{name.lower()}={value!r}"


def constructor_repr(options: Any) -> str:
    """``MongoClient(...)``'s repr as PyMongo writes it: ``host=[...]`` (or the
    ``mongodb+srv://`` name), ``document_class``, ``tz_aware`` and ``connect``, then each other
    option given; credentials never shown."""
    if options.is_srv:
        parts = [f"host='mongodb+srv://{options.srv_host}'"]
    else:
        parts = ["host=%r" % [f"{h}:{p}" if p is not None else h for h, p in options.seeds]]
    values = options.values
    parts.extend(_option_repr(name, values[name] if name != "connect"
                              else values[name] is not False) for name in _CONSTRUCTOR_ARGS)
    given = {n: None if as_none else values[n] for n, as_none in options.given
             if n not in _CONSTRUCTOR_ARGS and n not in ("username", "password")}
    if given.get("tlsInsecure"):
        given.update((n, True) for n in _IMPLIED_BY_TLS_INSECURE if n not in given)
    parts.extend(_option_repr(name, value) for name, value in given.items())
    return ", ".join(parts)
