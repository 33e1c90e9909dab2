"""The handshake (handshake spec): the hello a connection opens with, built by pure functions
from the client's options (client metadata computed once per process, trimmed to the spec's
512-byte limit in the spec's order), and the engine's part that opens a connection and
greets the server with it under one connectTimeoutMS deadline.
"""

import os
import sys

import bson

from singlemongo import __version__
from singlemongo.clock import Deadline
from singlemongo.errors import ConnectionFailure

METADATA_LIMIT = 512
_FAAS_ENV = (
    ("aws.lambda", ("AWS_LAMBDA_RUNTIME_API",), "AWS_EXECUTION_ENV"),
    ("azure.func", ("FUNCTIONS_WORKER_RUNTIME",), None),
    ("gcp.func", ("K_SERVICE", "FUNCTION_NAME"), None),
    ("vercel", ("VERCEL",), None),
)
_metadata_cache: dict = {}

# Handshake spec, "client.env.container" (PyMongo's names, served by pymongo.pool_options).
DOCKER_ENV_PATH = "/.dockerenv"
ENV_VAR_K8S = "KUBERNETES_SERVICE_HOST"
RUNTIME_NAME_DOCKER = "docker"
ORCHESTRATOR_NAME_K8S = "kubernetes"


def _env():
    env = {}
    for name, markers, _ in _FAAS_ENV:
        if any(os.environ.get(m) for m in markers):
            env["name"] = name
            break
    if os.path.exists(DOCKER_ENV_PATH):
        env["container"] = {"runtime": RUNTIME_NAME_DOCKER}
    if os.environ.get(ENV_VAR_K8S):
        env.setdefault("container", {})["orchestrator"] = ORCHESTRATOR_NAME_K8S
    return env


def _env_name_only(doc):
    if "env" in doc:
        doc["env"] = {k: v for k, v in doc["env"].items() if k == "name"}


def _os_type_only(doc):
    doc["os"] = {"type": doc["os"]["type"]}


def _drop_env(doc):
    doc.pop("env", None)


def _overflow(doc):
    return len(bson.encode(doc)) - METADATA_LIMIT


def _shortened(text, by, keep=""):
    """``text`` ``by`` bytes shorter in UTF-8 (never below ``keep``, its prefix), cut on a
    character boundary."""
    data = text.encode("utf-8")
    floor = len(keep.encode("utf-8"))
    return data[:max(floor, len(data) - by)].decode("utf-8", "ignore")


def _truncate_platform(doc):
    doc["platform"] = _shortened(doc.get("platform", ""), _overflow(doc))
    if not doc["platform"]:
        doc.pop("platform")


def _truncate_wrapped(doc):
    """Beyond the spec's list ("truncate or omit driver provided values"): what wrapping
    libraries appended to the driver's version, then to its name; the driver's own stays."""
    for field, own in (("version", __version__), ("name", "singlemongo")):
        over = _overflow(doc)
        if over > 0:
            doc["driver"][field] = _shortened(doc["driver"][field], over, own)


# Handshake spec, "Limitations": applied in this order until the document fits in 512 bytes.
TRIMS = (_env_name_only, _os_type_only, _drop_env, _truncate_platform, _truncate_wrapped)


def _wrapped(doc, drivers):
    """Handshake spec, "Supporting Wrapping Libraries": each library's name, version and
    platform joined to the driver's with ``|`` (an empty name or version keeps its segment)."""
    for info in drivers:
        doc["driver"]["name"] += f"|{info.name or ''}"
        doc["driver"]["version"] += f"|{info.version or ''}"
        if info.platform:
            doc["platform"] += f"|{info.platform}"


def client_metadata(appname=None, drivers=()):
    """The ``client`` document; fields are dropped in the spec's order until it fits.
    ``drivers``: the DriverInfo of libraries wrapping the driver."""
    key = (appname, tuple(drivers))
    if key in _metadata_cache:
        return _metadata_cache[key]
    # os.uname and sys instead of the platform module, which costs milliseconds to import.
    uname = os.uname() if hasattr(os, "uname") else None
    system = uname.sysname if uname else sys.platform
    version = ".".join(map(str, sys.version_info[:3]))
    doc = {"driver": {"name": "singlemongo", "version": __version__},
           "os": {"type": system, "name": system,
                  "architecture": uname.machine if uname else "unknown",
                  "version": uname.release if uname else "unknown"},
           "platform": f"{'CPython' if sys.implementation.name == 'cpython' else sys.implementation.name} {version}"}
    _wrapped(doc, drivers)
    if appname:
        doc["application"] = {"name": appname}
    env = _env()
    if env:
        doc["env"] = env
    for trim in TRIMS:
        if _overflow(doc) <= 0:
            break
        trim(doc)
    _metadata_cache[key] = doc
    return doc


def uses_op_msg_hello(options):
    """Handshake spec: a load balancer, or a client that declared a Stable API version
    (versioned API spec, "Handshake behavior"), is greeted with ``hello``; everything else
    with the legacy hello and ``helloOk``. Both go as OP_MSG (the spec's 2026-06 revision;
    PyMongo 4.20)."""
    return bool(options.load_balanced) or options.server_api is not None


def api_fields(options):
    """The Stable API fields every command carries when a version is declared (versioned API
    spec, "Command Syntax"; getMore and transaction commands included), else nothing."""
    api = options.server_api
    return api.command_fields() if api is not None else {}


def handshake_command(options, initial=True, hello_ok=False, drivers=()):
    """The hello for a new connection (``initial``) or for a check on an open one. Every
    legacy hello carries ``helloOk: true`` (checkServer pseudocode), so a server that
    learns to speak ``hello`` is used with it."""
    if hello_ok or uses_op_msg_hello(options):
        cmd = {"hello": 1}
    else:
        cmd = {"ismaster": 1, "helloOk": True}  # PyMongo's spelling of the legacy hello
    cmd.update(api_fields(options))
    if not initial:
        return cmd
    cmd["helloOk"] = True
    cmd["client"] = client_metadata(options.appname, drivers)
    if options.compressors:
        cmd["compression"] = list(options.compressors)
    if options.load_balanced:
        cmd["loadBalanced"] = True
    cmd["backpressure"] = True  # client backpressure: the server may answer 462 with labels
    return cmd


class Handshake:
    """The Topology's part that opens connections: its hello, the TLS context, the
    connectTimeoutMS deadline of a whole handshake (TCP, TLS, hello). The socket code loads
    with the engine (topology.py), not with the builders above, which the face's
    ``import`` reaches."""

    def append_driver(self, driver_info):
        """A wrapping library's DriverInfo, in the metadata of connections opened from now on
        (handshake spec: a duplicate is not appended; an empty field is an unset one)."""
        def same(info):
            return tuple(field or None for field in info)
        if same(driver_info) not in {same(d) for d in self.drivers}:
            self.drivers += (driver_info,)

    def handshake_document(self):
        """The handshake hello, and the SCRAM conversation it starts speculatively (or None)."""
        command = handshake_command(self.options, drivers=self.drivers)
        if self.options.credentials is None:
            return command, None
        from singlemongo.auth import handshake_fields  # hashlib and friends only for authenticated clients
        auth_fields, conversation = handshake_fields(self.options.credentials, self.clock,
                                                     self.auth_cache)
        command.update(auth_fields)
        return command, conversation

    def new_connection(self, address, sock, conversation=None):
        self.connections_opened += 1
        conn = _connection_class()(address, sock, self.generations[address],
                                   self.clock.monotonic(), self.clock)
        conn.conversation = conversation
        if self.pool is not None:
            self.pool.new_connection(conn)
        return conn

    def handshaken(self, conn, reply, gossip=True):
        """Record the handshake reply: limits, compression, and its $clusterTime (gossiped
        on the next command, driver sessions spec), unless ``gossip`` is false: a wave's
        replies are gossiped where the scanner applies them, each once."""
        conn.set_hello(reply, self.options.compressors)
        conn.zlib_level = self.options.zlib_compression_level
        if gossip:
            self.sessions.advance_cluster_time(reply)
        return conn

    def tls_context(self):
        """This client's SSLContext, made at the first TLS connection."""
        if self._tls_context is None:
            from singlemongo.engine.tls import tls_context
            self._tls_context = tls_context(self.options)
        return self._tls_context

    def handshake_deadline(self, timeout_s=None):
        """connectTimeoutMS for a whole handshake (TCP, TLS, hello), capped by ``timeout_s``
        and by the current operation's timeoutMS."""
        ms = self.options.connect_timeout_ms
        deadline = Deadline(self.clock, ms / 1000.0 if ms else None, f"connectTimeoutMS {ms}")
        if timeout_s is not None:
            deadline = deadline.sooner(timeout_s, f"connectTimeoutMS {ms} (what is left of it)")
        if self.deadline is not None:
            deadline = deadline.sooner(self.deadline.remaining(), self.deadline.what)
        return deadline

    def connect(self, address, timeout_s=None):
        """Open a connection; its handshake reply is returned with the hello's duration. The
        whole handshake shares one deadline (``handshake_deadline``)."""
        from singlemongo.engine.dial import open_socket
        from singlemongo.engine.guard import positive
        from singlemongo.wire import messages as wire  # here: the face imports this module
        now = self.clock.monotonic
        deadline = self.handshake_deadline(timeout_s)
        command, conversation = self.handshake_document()
        context = self.tls_context() if self.options.tls else None
        sock = open_socket(address, self.options, positive(deadline.remaining()), context,
                           self.clock)
        conn = self.new_connection(address, sock, conversation)
        start = now()
        try:
            # OP_MSG for every handshake
            reply = conn.command("admin", command, deadline, codec=wire.DEFAULT_CODEC_OPTIONS)
            conn = self.handshaken(conn, reply)
        except BaseException as exc:  # a signal included: the half-open connection goes
            conn.close()
            if isinstance(exc, ConnectionFailure):
                exc.in_handshake = True  # connected, then lost during the hello
            raise
        return conn, reply, now() - start


_CONNECTION_MODULE = f"{__package__}.connection"


def _connection_class():
    """engine/connection.py's Connection, imported at the first connection (this module loads
    with the face, before any socket is needed) and then read from the module itself: an
    import statement per connection asks connection.py's ``__getattr__`` for ``__path__``."""
    module = sys.modules.get(_CONNECTION_MODULE)
    if module is None:
        from singlemongo.engine import connection as module
    return module.Connection
