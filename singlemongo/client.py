"""MongoClient (as ``pymongo.MongoClient``): the face. Constructing one does no I/O; the first
operation scans the deployment inline. Its real properties are never shadowed by databases:
``client.address`` is the server's address, ``client.shop`` the database ``shop``."""
from __future__ import annotations

import sys
import weakref
from types import TracebackType
from typing import TYPE_CHECKING, Any, NoReturn, Optional, Sequence, Union, cast, overload

from bson.codec_options import CodecOptions

from singlemongo import _import_paused
from singlemongo.clock import DEFAULT_CLOCK
from singlemongo.base_object import (Generic, BaseObject, Watchable, _DocumentType, _DocumentTypeArg,
                          deferred_mixin)
from singlemongo.database import Database
from singlemongo.engine.sessions import end_sessions, register_for_exit, unregister
from singlemongo import errors
from singlemongo.errors import ConfigurationError
from singlemongo.options.client_options import ClientOptions, client_options
from singlemongo.options.uri import SecretText, connection_string
from singlemongo.selection import ReadPreference as _Core

if TYPE_CHECKING:
    from singlemongo.client_commands import ClientCommands
    from singlemongo.read_concern import ReadConcern
    from singlemongo.write_concern import WriteConcern
    from bson.codec_options import TypeRegistry

    from singlemongo.options_view import ClientOptions as PyMongoClientOptions
    from singlemongo.driver_info import DriverInfo
else:
    # Loaded at their first use: a one-off read uses none of them.
    ClientCommands = deferred_mixin(".client_commands", "ClientCommands", (
        "_as_client", "start_session", "list_databases", "list_database_names", "drop_database",
        "server_info", "topology_description", "address", "primary", "_addresses",
        "secondaries", "arbiters", "nodes", "is_primary", "is_mongos", "bulk_write"))

_INSECURE = (("tls_insecure", "tlsInsecure"),
             ("tls_allow_invalid_certificates", "tlsAllowInvalidCertificates"),
             ("tls_allow_invalid_hostnames", "tlsAllowInvalidHostnames"),
             ("tls_disable_ocsp_endpoint_check", "tlsDisableOCSPEndpointCheck"),
             ("tls_disable_certificate_revocation_check", "tlsDisableCertificateRevocationCheck"))


def _warn_if_insecure(options: ClientOptions) -> None:
    if not options.tls:
        return
    relaxed = [name for attr, name in _INSECURE if getattr(options, attr)]
    if relaxed:
        import warnings
        from singlemongo.errors import SingleMongoWarning
        warnings.warn(f"TLS is weakened by {', '.join(relaxed)}: certificates or host names are "
                      f"not fully verified, so a man in the middle can read and change traffic",
                      SingleMongoWarning, stacklevel=3)


# Hosts of services that speak MongoDB's protocol but are not MongoDB (PyMongo says so too).
_EXTERNAL_DBS = ((("cosmos.azure.com",), "CosmosDB", "cosmosdb"),
                 (("docdb.amazonaws.com", "docdb-elastic.amazonaws.com"), "DocumentDB",
                  "documentdb"))


def _detect_external_db(options: ClientOptions) -> None:
    """Say once, as PyMongo does, that the deployment looks like CosmosDB or DocumentDB: an
    INFO message under ``singlemongo.client`` if logging is set up for it, else a
    SingleMongoWarning (a UserWarning)."""
    # One string searched in C, not a loop over the hosts: a seed list may hold 50. NUL ends
    # each host (no host name or socket path holds one), so a match is a suffix.
    hosts = "\0".join([h for h, _ in options.seeds] + [options.srv_host or ""]).lower() + "\0"
    for suffixes, name, page in _EXTERNAL_DBS:
        if any(f".{suffix}\0" in hosts for suffix in suffixes):
            message = (f"You appear to be connected to a {name} cluster. For more information "
                       f"regarding feature compatibility and support please visit "
                       f"https://www.mongodb.com/supportability/{page}")
            from singlemongo.monitoring import INFO, logging_enabled
            if logging_enabled("singlemongo.client", INFO):
                import logging
                logging.getLogger("singlemongo.client").info(message)
            else:
                import warnings
                from singlemongo.errors import SingleMongoWarning
                warnings.warn(message, SingleMongoWarning, stacklevel=3)
            return


def _read_preference_keywords(kwargs: dict[str, Any]) -> None:
    """PyMongo's ``read_preference=ReadPreference.SECONDARY`` (an object) as the connection
    string's readPreference, readPreferenceTags and maxStalenessSeconds."""
    if "read_preference" not in kwargs:
        return
    value = kwargs["read_preference"]
    from singlemongo.read_preferences import _ServerMode, to_core
    if not isinstance(value, (_ServerMode, _Core)):  # a mode name too, as in PyMongo
        raise TypeError(f"{value!r} is not a read preference (read_preference= takes "
                        f"ReadPreference.SECONDARY or another read preference object; "
                        f"readPreference= takes a mode name)")
    core = to_core(kwargs.pop("read_preference"))
    assert core is not None
    kwargs["readPreference"] = core.mode
    if any(core.tag_sets):
        kwargs["readPreferenceTags"] = [dict(tags) for tags in core.tag_sets]
    if core.max_staleness_seconds is not None:
        kwargs["maxStalenessSeconds"] = core.max_staleness_seconds


class MongoClient(BaseObject, Watchable, ClientCommands[_DocumentType],
                  Generic[_DocumentType]):
    """A client for one deployment.

    ``MongoClient(host=None, port=None, document_class=dict, tz_aware=False, connect=None,
    **options)`` as in PyMongo: ``host`` is a connection string, a ``host[:port]`` or a list
    of them; every connection-string option is a keyword too (``heartbeatFrequencyMS=...`` or
    ``heartbeat_frequency_ms=...``) and keywords override the URI; ``username=``,
    ``password=``, ``authSource=``, ``server_api=ServerApi("1")``, ``event_listeners=[...]``.
    ``connect`` is accepted and ignored: singlemongo never connects before the first
    operation. For tests and observability: ``clock`` (time, sleep, randomness),
    ``resolver`` (mongodb+srv lookups), ``scan_executor="sequential"`` and
    ``server_selector`` (takes the suitable ServerDescriptions, returns those to keep).
    Raises ConfigurationError (InvalidURI) for a bad connection string or option.
    """

    HOST = "localhost"
    PORT = 27017

    @overload
    def __init__(self: MongoClient[dict[str, Any]], host: Union[str, Sequence[str], None] = None,
                 port: Optional[int] = None, document_class: None = None,
                 tz_aware: Optional[bool] = None, connect: Optional[bool] = None,
                 type_registry: Optional[TypeRegistry] = None, **kwargs: Any) -> None: ...

    @overload
    def __init__(self, host: Union[str, Sequence[str], None] = None, port: Optional[int] = None,
                 document_class: Optional[type[_DocumentType]] = None,
                 tz_aware: Optional[bool] = None, connect: Optional[bool] = None,
                 type_registry: Optional[TypeRegistry] = None, **kwargs: Any) -> None: ...

    def __init__(self, host: Union[str, Sequence[str], None] = None, port: Optional[int] = None,
                 document_class: Optional[type[_DocumentType]] = None,
                 tz_aware: Optional[bool] = None, connect: Optional[bool] = None,
                 type_registry: Optional[TypeRegistry] = None, **kwargs: Any) -> None:
        if isinstance(host, str):  # it may hold a password: frames below can raise
            host = SecretText(host)
        elif isinstance(host, (list, tuple)):
            host = [SecretText(h) if isinstance(h, str) else h for h in host]
        clock = kwargs.pop("clock", None)
        resolver = kwargs.pop("resolver", None)
        listeners = list(kwargs.pop("event_listeners", None) or ())
        monitoring = sys.modules.get(f"{__package__}.monitoring")  # loaded by register()
        if monitoring is not None:
            listeners = [*monitoring.global_listeners(), *listeners]
        scan_executor = kwargs.pop("scan_executor", "concurrent")
        server_selector = kwargs.pop("server_selector", None)
        if server_selector is not None and not callable(server_selector):
            raise TypeError(f"server_selector must be a callable, not {type(server_selector)}")
        document_class = document_class or None  # as PyMongo: a falsy one is dict
        for name, value in (("document_class", document_class), ("tz_aware", tz_aware),
                            ("connect", connect), ("type_registry", type_registry)):
            if value is not None:
                kwargs[name] = value
        _read_preference_keywords(kwargs)
        if kwargs.get("auto_encryption_opts") is not None:
            from singlemongo.drop_in.unsupported import not_offered
            not_offered("AutoEncryptionOpts")
        kwargs.pop("auto_encryption_opts", None)
        if host is None:  # PyMongo's class attributes, which a subclass or a test may set
            host = self.HOST
        if port is None:
            port = self.PORT
        uri = SecretText(connection_string(host, port))
        self._settings = client_options(uri, port, **kwargs)
        if self._settings.credentials is not None:
            from singlemongo.options.credentials import check_authenticates
            check_authenticates(self._settings.credentials)
        _warn_if_insecure(self._settings)
        _detect_external_db(self._settings)
        # The engine loads with the first client.
        engine = _import_paused("engine.topology")
        self._topology = engine.Topology(self._settings, clock or DEFAULT_CLOCK, listeners,
                                         resolver, scan_executor, server_selector)
        self._init_settings()

    def _init_settings(self) -> None:
        o = self._settings
        write_concern = read_concern = None
        if (o.w, o.wtimeout_ms, o.journal, o.fsync) != (None, None, None, None):
            from singlemongo.write_concern import WriteConcern  # else the default, when read
            write_concern = WriteConcern(o.w, o.wtimeout_ms, o.journal, o.fsync)
        if o.read_concern_level is not None:
            from singlemongo.read_concern import ReadConcern
            read_concern = ReadConcern(o.read_concern_level)
        BaseObject.__init__(self, o.codec_options(), o.read_preference, write_concern,
                            read_concern)
        self._closed = False
        register_for_exit(self)
        # A client dropped without close() frees its sockets as soon as it is unreachable
        # (reference counting; nothing here is in a cycle), not at the next cyclic collection.
        weakref.finalize(self, self._topology.release).atexit = False

    @classmethod
    def from_options(cls, options: ClientOptions, *, clock: Any = None, resolver: Any = None,
                     event_listeners: Sequence[Any] = ()) -> MongoClient[dict[str, Any]]:
        """A client from already validated ClientOptions (no parsing, no I/O)."""
        client = cast("MongoClient[dict[str, Any]]", object.__new__(cls))
        client._settings = options
        engine = _import_paused("engine.topology")
        client._topology = engine.Topology(options, clock or DEFAULT_CLOCK, event_listeners,
                                           resolver)
        client._init_settings()
        return client

    # ----- identity --------------------------------------------------------------------------

    @property
    def options(self) -> PyMongoClientOptions:
        """The client's options, as PyMongo's ``ClientOptions`` (``codec_options``,
        ``pool_options``, ``read_preference``, ``server_selection_timeout``, ...; read only,
        passwords redacted in its repr)."""
        from singlemongo.options_view import ClientOptions as PyMongoClientOptions
        return PyMongoClientOptions(self._settings, self._topology)

    _options = options  # where PyMongo keeps them (libraries read ``client._options``)

    def append_metadata(self, driver_info: DriverInfo) -> None:
        """Add a wrapping library's name, version and platform to the client metadata of the
        connections opened from now on (handshake spec, "Supporting Wrapping Libraries")."""
        from singlemongo.driver_info import DriverInfo
        if not isinstance(driver_info, DriverInfo):
            raise TypeError(f"driver_info must be an instance of DriverInfo, not "
                            f"{type(driver_info)}")
        self._topology.append_driver(driver_info)

    def __repr__(self) -> str:
        settings = self.__dict__.get("_settings")
        if settings is None:  # a constructor that raised
            return f"{type(self).__name__}()"
        from singlemongo.options_view import constructor_repr
        return f"{type(self).__name__}({constructor_repr(settings)})"

    def _eq_props(self) -> tuple[Any, ...]:
        o = self._settings
        return (tuple(sorted(o.seeds, key=repr)), o.srv_host, o.replica_set)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, MongoClient):
            return self._eq_props() == other._eq_props()
        return NotImplemented

    def __ne__(self, other: Any) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(self._eq_props())

    def __enter__(self) -> MongoClient[_DocumentType]:
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()

    def __getitem__(self, name: str) -> Database[_DocumentType]:
        return Database(self, name)

    def __getattr__(self, name: str) -> Database[_DocumentType]:
        """The database ``name`` (only for names that are not the client's own)."""
        if name.startswith("_"):
            raise AttributeError(f"MongoClient has no attribute {name!r}. To access the {name} "
                                 f"database, use client[{name!r}].")
        return self[name]

    # None, as PyMongo: iteration is a TypeError and ``isinstance(x, Iterable)`` is False.
    __iter__ = None  # type: ignore[assignment]

    def __next__(self) -> NoReturn:
        """Not an iterator: raises TypeError (as PyMongo's MongoClient)."""
        raise TypeError("'MongoClient' object is not iterable")

    next = __next__

    # ----- databases -------------------------------------------------------------------------

    @overload
    def get_database(self, name: Optional[str] = None, codec_options: None = None,
                     read_preference: Any = None, write_concern: Optional[WriteConcern] = None,
                     read_concern: Optional[ReadConcern] = None) -> Database[_DocumentType]:
        ...

    @overload
    def get_database(self, name: Optional[str], codec_options: CodecOptions[_DocumentTypeArg],
                     read_preference: Any = None, write_concern: Optional[WriteConcern] = None,
                     read_concern: Optional[ReadConcern] = None) -> Database[_DocumentTypeArg]:
        ...

    def get_database(self, name: Optional[str] = None,
                     codec_options: Optional[CodecOptions[Any]] = None,
                     read_preference: Any = None, write_concern: Optional[WriteConcern] = None,
                     read_concern: Optional[ReadConcern] = None) -> Database[Any]:
        """A database (the connection string's default if ``name`` is None); its document
        type follows ``codec_options.document_class``. Raises ConfigurationError without a
        name or default, InvalidName for a bad one."""
        if name is None:
            name = self._settings.database
            if name is None:
                raise ConfigurationError("No default database name defined or provided.")
        return Database(self, name, codec_options, read_preference, write_concern,
                        read_concern)

    def get_default_database(self, default: Optional[str] = None,
                             codec_options: Optional[CodecOptions[Any]] = None,
                             read_preference: Any = None,
                             write_concern: Optional[WriteConcern] = None,
                             read_concern: Optional[ReadConcern] = None
                             ) -> Database[_DocumentType]:
        """The connection string's database, else ``default``; ConfigurationError if
        neither is given."""
        name = self._settings.database or default
        if name is None:
            raise ConfigurationError("No default database name defined or provided.")
        return Database(self, name, codec_options, read_preference, write_concern,
                        read_concern)

    # ----- closing ---------------------------------------------------------------------------

    def _end_sessions(self) -> None:
        """Send endSessions on a connection already open (never scan or connect to do it)."""
        end_sessions(self._topology)

    def _connect(self) -> None:
        """Open the topology as PyMongo's ``_connect()`` does (resolving mongodb+srv and
        publishing the opening events; no check runs before an operation asks). A
        compatibility member: PyMongo's unified-format runner calls it (see
        docs/coming-from-pymongo.md, "Compatibility members")."""
        self._topology.check_open()
        with self._topology.operation():
            self._topology.open()

    def _forget_after_fork(self) -> None:
        self._closed = True
        unregister(self)
        self._topology.forget_after_fork()

    def close(self) -> None:
        """End the client's server sessions and close every connection. Idempotent; the
        client cannot be used afterwards (InvalidOperation)."""
        self._topology.check_fork()  # never end the parent's sessions from a child
        if self._closed:
            return
        self._closed = True
        unregister(self)
        try:
            with self._topology.operation():  # after another thread's operation, if any
                self._topology.flush_deferred_kills()  # cursors dropped since the last one
                self._end_sessions()
        except errors.WaitQueueTimeoutError:
            pass  # that thread's operation fails on the closed sockets
        finally:
            self._topology.close()


