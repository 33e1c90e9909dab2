"""MongoClient: the face. Constructing one does no I/O; the first operation scans."""
import os
import weakref

from .options.client_options import client_options
from .options.redact import SecretText
from .clock import DEFAULT_CLOCK
from .database import Database
from .errors import ConnectionFailure
from .engine.sessions import END_SESSIONS_BATCH, register_for_exit, unregister
from .engine.topology import Topology


_INSECURE = (("tls_insecure", "tlsInsecure"),
             ("tls_allow_invalid_certificates", "tlsAllowInvalidCertificates"),
             ("tls_allow_invalid_hostnames", "tlsAllowInvalidHostnames"),
             ("tls_disable_ocsp_endpoint_check", "tlsDisableOCSPEndpointCheck"),
             ("tls_disable_certificate_revocation_check", "tlsDisableCertificateRevocationCheck"))


def _warn_if_insecure(options):
    if not options.tls:
        return
    relaxed = [name for attr, name in _INSECURE if getattr(options, attr)]
    if relaxed:
        import warnings
        from .errors import SingleMongoWarning
        warnings.warn(f"TLS is weakened by {', '.join(relaxed)}: certificates or host names are "
                      f"not fully verified, so a man in the middle can read and change traffic",
                      SingleMongoWarning, stacklevel=3)


class MongoClient:
    """A client for one deployment.

    ``MongoClient(uri, **options)`` takes every connection-string option as a keyword too
    (``heartbeatFrequencyMS=...`` or ``heartbeat_frequency_ms=...``); keywords override the
    URI. ``clock`` (time, sleep, randomness), ``resolver`` (mongodb+srv lookups) and
    ``event_listeners`` are for tests and observability; ``scan_executor="sequential"``
    checks servers one at a time instead of in concurrent waves (for debugging);
    ``server_selector`` takes the list of suitable ServerDescriptions and returns those to keep.
    """

    def __init__(self, uri="mongodb://localhost", *, clock=None, resolver=None,
                 event_listeners=(), scan_executor="concurrent", server_selector=None,
                 **options):
        uri = SecretText(uri) if isinstance(uri, str) else uri  # frames below can raise
        self.options = client_options(uri, **options)
        _warn_if_insecure(self.options)
        self._topology = Topology(self.options, clock or DEFAULT_CLOCK, event_listeners, resolver,
                                  scan_executor, server_selector)
        self._closed = False
        self._start()

    def _start(self):
        register_for_exit(self)
        # A client dropped without close() frees its sockets as soon as it is unreachable
        # (reference counting; nothing here is in a cycle), not at the next cyclic collection.
        weakref.finalize(self, self._topology.release).atexit = False

    @classmethod
    def from_options(cls, options, *, clock=None, resolver=None, event_listeners=()):
        """A client from already validated ClientOptions (no parsing, no I/O)."""
        client = cls.__new__(cls)
        client.options = options
        client._topology = Topology(options, clock or DEFAULT_CLOCK, event_listeners, resolver)
        client._closed = False
        client._start()
        return client

    def __repr__(self):
        return f"MongoClient({self.options!r})"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __getitem__(self, name):
        return Database(self, name)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return Database(self, name)

    def get_database(self, name=None, read_preference=None):
        return Database(self, name or self.options.database or "test", read_preference)

    def get_default_database(self):
        return self.get_database()

    @property
    def topology_description(self):
        """The current topology description, read without any I/O."""
        return self._topology.description

    @property
    def read_preference(self):
        return self.options.read_preference

    def list_database_names(self):
        return [d["name"] for d in self.admin.command("listDatabases", nameOnly=True)["databases"]]

    def _end_sessions(self):
        """Send endSessions on a connection already open (never scan or connect to do it)."""
        ids = self._topology.sessions.drain_ids()
        topo = self._topology
        if not ids or topo._description is None:
            return
        conns = [c for a, c in topo.connections.items() if not c.closed and
                 topo.description.servers.get(a) is not None and
                 topo.description.servers[a].is_data_bearing]
        for conn in conns[:1]:
            timeout = topo.options.connect_timeout_ms / 1000.0 or None
            # moreToCome: the server ends the sessions without replying, so closing a
            # one-off client costs no round trip.
            for i in range(0, len(ids), END_SESSIONS_BATCH):
                try:
                    conn.send_only("admin", {"endSessions": ids[i:i + END_SESSIONS_BATCH]},
                                   timeout=timeout)
                except ConnectionFailure:
                    return

    def _forget_after_fork(self):
        self._closed = True
        unregister(self)
        self._topology.forget_after_fork()

    def close(self):
        """End the client's server sessions and close every connection. Idempotent."""
        if self._topology.pid != os.getpid():
            self._topology.forget_after_fork()  # never end the parent's sessions from a child
        if self._closed:
            return
        self._closed = True
        unregister(self)
        try:
            self._end_sessions()
        finally:
            self._topology.close()
