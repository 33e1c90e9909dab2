"""The engine: owns the topology description, the stale flag, one connection per server and
each server's generation. Every change of the description goes through ``apply``, which
publishes the SDAM events the change implies.
"""
import _thread
import contextlib
import itertools
import os
import sys
from collections import defaultdict

from . import check
from ..clock import DEFAULT_CLOCK, Deadline
from ..wire.connection import Connection, open_socket
from .. import errors
from ..errors import ConfigurationError, ConnectionFailure, InvalidOperation
from ..monitoring import CONNECTION, EventBus, logging_enabled
from .check import handshake_command
from .scanner import MIN_INTERVAL_S, Scanner, select_server
from .sessions import SessionPool
from ..sdam.server_description import ServerDescription, ServerType, TopologyType
from ..sdam.topology_description import TopologyDescription
from ..replies import is_ok

_topology_ids = itertools.count(1)


def _positive(seconds):
    """A socket timeout from what is left of a deadline (never zero: that means non-blocking)."""
    return None if seconds is None else max(seconds, 0.001)


def timeout_block():
    """The ``singlemongo.timeout()`` block that sets the timeout of an operation starting now
    (``timeout(None)`` outside any block leaves the client's timeoutMS), or None. csot.py is
    only loaded by a program using it."""
    csot = sys.modules.get("singlemongo.csot")
    block = csot.current() if csot is not None else None
    return block if block is not None and not block.transparent else None


class Topology:
    def __init__(self, options, clock=DEFAULT_CLOCK, listeners=(), resolver=None,
                 scan_executor="concurrent", server_selector=None):
        if scan_executor not in ("concurrent", "sequential"):
            raise ConfigurationError(f"scan_executor must be 'concurrent' or 'sequential', "
                                     f"not {scan_executor!r}")
        self.scan_executor = scan_executor
        self.server_selector = server_selector  # server selection spec, "serverSelector"
        self.pid = os.getpid()
        self.options = options
        self.clock = clock
        self.events = listeners if isinstance(listeners, EventBus) else EventBus(listeners)
        self.resolver = resolver
        self.topology_id = next(_topology_ids)
        self.events.topology_id = self.topology_id
        self._description = None
        self.stale = True
        self.last_scan_end = None
        self.scan_count = 0
        self.connections = {}
        self.generations = defaultdict(int)
        self.connections_opened = 0
        self.verified = set()  # servers this process has checked itself (not from a cache)
        self.scanner = Scanner(self)
        self.sessions = SessionPool(clock)
        # Authentication state kept across connections: SCRAM's salted keys, MONGODB-OIDC's
        # token (the auth spec's per-client caches).
        self.auth_cache = {}
        self.kill_queue = []  # cursors collected by the garbage collector, killed inline later
        self._token_bucket = None  # full until a retry spends a token (client backpressure)
        self._tls_context = None
        self.deadline = None  # the current operation's timeoutMS, while one runs
        # A change stream's resume selects as serverSelectionTryOnce=false would: it may take
        # serverSelectionTimeoutMS (an election), the stream's own budget (change streams).
        self.selection_waits = False
        self.waiting_logged_for = None  # the operation whose selection logged "Waiting..."
        # Held by the thread running an operation. Reentrant, so that a signal landing
        # between its acquisition and the ``with`` that releases it (CPython checks signals
        # there) cannot lock that thread out of its own client: it knows its thread.
        self._in_use = _thread.RLock()
        self._owner = None
        self.closed = False
        self.unfinished = set()  # servers whose check timeoutMS cut short in this scan
        self.cache_holds = None  # (description, wall time written) of the cache file, if known
        # Libraries wrapping the driver (DriverInfo): the driver= option, then append_metadata.
        self.drivers = (options.driver,) if options.driver is not None else ()
        self.pool = self._pool_monitor()

    def _pool_monitor(self):
        """CMAP's events for the one connection per server (engine/pool.py), for a client
        made with a listener that takes them; None (nothing loaded) otherwise."""
        if not self.events.listeners and not logging_enabled(CONNECTION):
            return None
        from .pool import wanted
        return wanted(self.events)

    # ----- state ---------------------------------------------------------------------------

    @property
    def description(self):
        """The current description; before the first operation, the initial one (no I/O)."""
        if self._description is not None:
            return self._description
        if self.options.is_srv:
            return TopologyDescription.initial((), self.options.replica_set)
        return TopologyDescription.from_options(self.options)

    def open(self):
        """Resolve mongodb+srv, publish the opening events; done by the first selection."""
        if self._description is not None:
            return
        if self.options.is_srv:
            from ..options.srv import resolve_seedlist
            from .dns import DnsPythonResolver
            resolver = self.resolver or DnsPythonResolver(self.handshake_deadline())
            self.options = resolve_seedlist(self.options, resolver, self.clock.shuffle)
        td = TopologyDescription.from_options(self.options)
        self._description = td
        cached = self._load_cache()
        if self.events.active:
            from ..sdam import monitoring as m  # SDAM events: loaded when anyone listens
            for event in m.opening_events(self.topology_id, td):
                self.events.publish(event)
        if self.options.load_balanced:
            if self.pool is not None:  # CMAP: each pool is created, then (behind a load
                for address in td.servers:  # balancer, at once) ready
                    self.pool.created(address, self.options, True)
            for address in td.servers:
                self.apply(ServerDescription(address, ServerType.LOAD_BALANCER))
            self.stale = False
        elif cached is not None:
            self._description, age = cached
            self.cache_holds = (self._description, self.clock.wall() - age)
            self.last_scan_end = self.clock.monotonic() - age
            self.stale = False
        if self.pool is not None and not self.options.load_balanced:
            for address in self._description.servers:
                self.pool.created(address, self.options, False)

    def _load_cache(self):
        if not self.options.topology_cache_file or self.options.load_balanced:
            return None
        from .topology_cache import load
        return load(self.options.topology_cache_file, self.options, self.clock)

    def apply(self, sd):
        old = self._description
        if old.topology_type is TopologyType.LOAD_BALANCED \
                and sd.server_type is not ServerType.LOAD_BALANCER:
            return  # load balancer spec: LoadBalanced indefinitely, no other events
        new = old.update(sd)
        if new is old:
            return
        self._description = new
        # A containment test first, in C and without building sets: almost every update
        # removes nothing, and a scan of n members applies n of them.
        if not old.servers.keys() <= new.servers.keys():
            for address in old.servers.keys() - new.servers.keys():
                self.close_connection(address, reason="poolClosed")
                if self.pool is not None:
                    self.pool.closed(address)
        if self.pool is not None:
            for address in new.servers.keys() - old.servers.keys():
                self.pool.created(address, self.options, False)
            self.pool.update(new, sd)
        if self.events.active:
            from ..sdam import monitoring as m
            for event in m.change_events(self.topology_id, old, new, sd.address):
                self.events.publish(event)

    def close_connection(self, address, bump_generation=False, service_id=None,
                         reason="error", interrupt=False):
        """Close the server's connection (for CMAP's ConnectionClosedReason ``reason``); with
        ``bump_generation`` its pool is cleared first (connections from before are stale),
        so a listener sees PoolClearedEvent, then the stale connection's ConnectionClosed."""
        conn = self.connections.pop(address, None)
        if conn is not None:
            service_id = service_id or conn.service_id
        if bump_generation:
            self.clear_pool(address, service_id, interrupt)
        if conn is not None:
            if not conn.closed:
                conn.close_reason = "stale" if bump_generation else reason
            conn.close()

    def clear_pool(self, address, service_id=None, interrupt=False):
        """CMAP "clear": the generation bumped, PoolClearedEvent published (its
        interruptInUseConnections says whether a check timed out: server monitoring)."""
        self.generations[address] += 1
        if self.pool is not None:
            self.pool.cleared(address, service_id, self.options.load_balanced, interrupt)

    # ----- checks --------------------------------------------------------------------------

    def handshake_document(self):
        """The handshake hello, and the SCRAM conversation it starts speculatively (or None)."""
        command = handshake_command(self.options, drivers=self.drivers)
        if self.options.credentials is None:
            return command, None
        from ..auth import handshake_fields  # hashlib and friends only for authenticated clients
        auth_fields, conversation = handshake_fields(self.options.credentials, self.clock,
                                                     self.auth_cache)
        command.update(auth_fields)
        return command, conversation

    def new_connection(self, address, sock, conversation=None):
        self.connections_opened += 1
        conn = Connection(address, sock, self.generations[address], self.clock.monotonic(),
                          self.clock)
        conn.conversation = conversation
        if self.pool is not None:
            self.pool.new_connection(conn)
        return conn

    def handshaken(self, conn, reply):
        """Record the handshake reply: limits, compression, and its $clusterTime (gossiped
        on the next command, driver sessions spec)."""
        conn.set_hello(reply, self.options.compressors)
        conn.zlib_level = self.options.zlib_compression_level
        self.sessions.advance_cluster_time(reply)
        return conn

    def tls_context(self):
        """This client's SSLContext, made at the first TLS connection."""
        if self._tls_context is None:
            from ..wire.tls import tls_context
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
        now = self.clock.monotonic
        deadline = self.handshake_deadline(timeout_s)
        command, conversation = self.handshake_document()
        context = self.tls_context() if self.options.tls else None
        sock = open_socket(address, self.options, _positive(deadline.remaining()), context,
                           self.clock)
        conn = self.new_connection(address, sock, conversation)
        start = now()
        try:
            reply = conn.command("admin", command, deadline)  # OP_MSG for every handshake
            conn = self.handshaken(conn, reply)
        except BaseException as exc:  # a signal included: the half-open connection goes
            conn.close()
            if isinstance(exc, ConnectionFailure):
                exc.in_handshake = True  # connected, then lost during the hello
            raise
        return conn, reply, now() - start

    def heartbeat_started(self, address):
        if self.events.active:
            from ..sdam import monitoring as m
            self.events.publish(m.ServerHeartbeatStartedEvent(address))

    def check_server(self, address, outcome=None):
        """One check of one server (see check.py); returns its new description."""
        return check.check_server(self, address, outcome)

    def scan(self):
        if not self.options.load_balanced:  # load balancer spec: never monitor
            self.scanner.scan()
        self.last_scan_end = self.clock.monotonic()
        self.stale = bool(self.unfinished)  # a server not checked to the end: scan again
        self.unfinished.clear()
        if self.options.topology_cache_file and not self.options.load_balanced:
            from .topology_cache import save
            self.cache_holds = save(self.options.topology_cache_file, self.options,
                                    self._description, self.clock, self.cache_holds)

    # ----- operations ----------------------------------------------------------------------

    def forget_after_fork(self):
        """In a forked child: drop the parent's sockets (closing only the child's file
        descriptors, never shutting the connections down) and start from scratch."""
        for conn in self.connections.values():
            conn.detach()
        self.connections = {}
        self.generations = defaultdict(int)
        self._description = None
        self.stale, self.last_scan_end = True, None
        self.sessions = SessionPool(self.clock)  # the parent's sessions are the parent's
        self.kill_queue = []
        self._token_bucket = None  # full until a retry spends a token (client backpressure)
        self.pool = self._pool_monitor()
        self.pid = os.getpid()

    @property
    def token_bucket(self):
        """The client's retry token bucket (client backpressure), made at the first retry:
        until then it is full and a success has nothing to return to it."""
        if self._token_bucket is None:
            from .backpressure import TokenBucket
            self._token_bucket = TokenBucket()
        return self._token_bucket

    def check_fork(self):
        """In a forked child, before anything touches a socket: forget the parent's state."""
        if self.pid != os.getpid():
            self.forget_after_fork()

    @contextlib.contextmanager
    def operation(self):
        """One operation at a time per client: a thread that finds another thread's operation
        in flight waits for it to finish (their replies would interleave on the one socket
        per server), as a pool of one connection would make it wait: at most what is left of
        timeoutMS, else waitQueueTimeoutMS, else serverSelectionTimeoutMS, then
        WaitQueueTimeoutError."""
        self.check_open()
        me = _thread.get_ident()  # identification only: the driver starts no thread
        if self._owner == me:
            yield  # an operation within an operation, on the same thread
            return
        if not self._in_use.acquire(False):
            wait_s = self._wait_queue_timeout_s()
            if not self._in_use.acquire(True, wait_s):
                raise errors.WaitQueueTimeoutError(
                    f"waited {wait_s * 1000:.0f} ms for another thread's operation on this "
                    f"MongoClient to finish: a singlemongo client runs one operation at a "
                    f"time (one socket per server). Give each thread its own client "
                    f"(singlemongo.get_client(uri)), or raise waitQueueTimeoutMS")
            if self.closed:
                self._in_use.release()
                self.check_open()
        self._owner = me
        try:
            yield
        finally:
            self._owner = None
            self._in_use.release()

    def _wait_queue_timeout_s(self):
        """How long a thread waits for the client (see ``operation``): timeoutMS when in
        force, which overrides the deprecated waitQueueTimeoutMS (client-side operations
        timeout, "Validation and Overrides"), else waitQueueTimeoutMS, else
        serverSelectionTimeoutMS: never without a bound."""
        options = self.options
        block = timeout_block()
        if block is not None:
            deadline = block.deadline_for(self.clock)
            if deadline is not None:
                return max(deadline.remaining(), 0.0)
        elif options.timeout_ms:
            return options.timeout_ms / 1000.0
        if options.wait_queue_timeout_ms:
            return options.wait_queue_timeout_ms / 1000.0
        return options.server_selection_timeout_ms / 1000.0

    def new_deadline(self, refreshed_s=None, what=None):
        """The deadline an operation starting now gets (None: none): a
        ``singlemongo.timeout()`` block in force replaces the client's timeoutMS (csot.py;
        that module is only loaded by a program using it). ``refreshed_s``: the timeout a
        cursor was created with, refreshed for its close or each next() of a tailable cursor
        (CSOT, "Cursors"), unless a block overrides it; ``what`` names it in errors."""
        block = timeout_block()
        if block is not None:
            return block.deadline_for(self.clock)
        if refreshed_s is not None:
            return Deadline(self.clock, refreshed_s, what or f"timeoutMS {refreshed_s * 1000:.0f}"
                                                             f" (refreshed for close)")
        if self.options.timeout_ms:
            ms = self.options.timeout_ms
            return Deadline(self.clock, ms / 1000.0, f"timeoutMS {ms}")
        return None

    def timeout_in_force(self):
        """Whether timeoutMS applies to an operation starting now, 0 (no deadline) included:
        a ``timeout()`` block other than ``timeout(None)`` outside any block, or the
        client's timeoutMS."""
        return timeout_block() is not None or self.options.timeout_ms is not None

    @contextlib.contextmanager
    def timeout_scope(self, deadline=None):
        """The operation's timeoutMS deadline (client-side operations timeout): set by the
        outermost public call, shared by everything inside it (each batch of an insert_many,
        each retry). ``deadline``: one made earlier, for what it bounds
        across calls (a GridFS stream's lifetime), else ``new_deadline()``."""
        if self.deadline is not None:
            yield self.deadline
            return
        if deadline is None:
            deadline = self.new_deadline()
        if deadline is None:
            yield None
            return
        self.deadline = deadline
        try:
            yield self.deadline
        finally:
            self.deadline = None

    def check_open(self):
        if self.closed:
            raise InvalidOperation("Cannot use MongoClient after close: a closed client never "
                                   "reconnects; create a new MongoClient (or call "
                                   "singlemongo.get_client again)")

    def select_server(self, criteria, deprioritized=(), operation="command", operation_id=None):
        with self.operation():
            self.check_fork()
            self.open()
            return select_server(self, criteria, deprioritized, operation, operation_id)

    def select_server_by_address(self, address, operation=None, operation_id=None):
        """The server at ``address`` if it is selectable now (PyMongo's Topology method, with
        its result's ``description``); ServerSelectionTimeoutError if not."""
        from ..selection import READ, Criteria
        from ..selection import ReadPreference
        address = tuple(address)
        criteria = Criteria(READ, ReadPreference("nearest"))
        previous = self.server_selector
        self.server_selector = lambda servers: [s for s in servers if s.address == address]
        try:
            sd = self.select_server(criteria, operation=str(operation or "command"),
                                    operation_id=operation_id)
        finally:
            self.server_selector = previous
        return _SelectedServer(sd, self.connections.get(sd.address))

    def max_cluster_time(self):
        """The greatest ``$clusterTime`` any reply has carried (PyMongo's Topology method;
        PyMongo's unified-format runner reads it). A compatibility member: see
        docs/coming-from-pymongo.md, "Compatibility members"."""
        return self.sessions.cluster_time

    def refresh(self):
        """The description, after a scan if one is due (never checked, stale, or a heartbeat
        old) and may start now (never waiting for the 500 ms interval, nor for another
        thread's operation): what ``primary``, ``secondaries``, ``arbiters`` and ``nodes``
        read, as PyMongo's monitors would have kept it current."""
        if self._owner is not None and self._owner != _thread.get_ident():
            return self.description  # another thread's operation scans: read, never wait
        if self._description is None and self.options.connect is False:
            # PyMongo starts no monitor with connect=False: nothing is known before the first
            # operation (Flask-PyMongo tests that a client "doesn't connect by default").
            return self.description
        with self.operation():
            self.check_fork()
            self.open()
            now, last = self.clock.monotonic(), self.last_scan_end
            due = last is None or not 0 <= now - last < self.options.heartbeat_frequency_ms / 1000.0
            may_start = last is None or not 0 <= now - last < MIN_INTERVAL_S
            if (self.stale or due) and may_start:
                self.scan()
            return self.description

    def handle_operation_error(self, conn, exc=None, reply=None):
        """Apply the SDAM decision for a failed operation on ``conn``."""
        from ..sdam.error_handling import (ApplicationError, ErrorKind, classify_reply,
                                           handle_application_error)  # on errors only
        if exc is not None:
            kind = ErrorKind.NETWORK_TIMEOUT if getattr(exc, "timeout", False) else ErrorKind.NETWORK
            message, topology_version, labels = str(exc), None, ()
        else:
            kind = classify_reply(reply) or ErrorKind.OTHER
            source = reply if not is_ok(reply) else reply.get("writeConcernError", {})
            message = source.get("errmsg", "")
            topology_version = reply.get("topologyVersion")
            labels = tuple(reply.get("errorLabels", ()))
        hello = conn.hello or {}
        error = ApplicationError(conn.address, kind, conn.generation, True,
                                 hello.get("maxWireVersion", 0), message, topology_version, labels)
        decision = handle_application_error(self._description, error,
                                            self.generations[conn.address])
        if conn.closed and self.connections.get(conn.address) is conn:
            self.connections.pop(conn.address)
        # SDAM "Application errors": the server is marked Unknown, then its pool is cleared
        # (a listener never sees the pool cleared while the server is still selectable).
        if decision.new_description is not None:
            self.apply(decision.new_description)
        if decision.clear_pool:
            self.close_connection(conn.address, bump_generation=True, service_id=conn.service_id)
        if decision.mark_stale:
            self.stale = True
        return decision

    def release(self):
        """Free the sockets of a client dropped without close() (its finalizer): no events,
        no endSessions, nothing sent; in a forked child only the child's descriptors close."""
        if self.pid != os.getpid():
            self.forget_after_fork()
            return
        for conn in self.connections.values():
            conn.close()
        self.connections = {}

    def close(self):
        if self._description is None and self.options.load_balanced \
                and not self.options.is_srv and not self.closed:
            self.open()  # load balancer spec: the opening series, then the closing one
        self.closed = True
        for address in list(self.connections):
            self.close_connection(address, reason="poolClosed")
        if self._description is not None:
            if self.pool is not None:
                for address in self._description.servers:
                    self.pool.closed(address)
            if self.events.active:
                from ..sdam import monitoring as m
                for event in m.closing_events(self.topology_id, self._description):
                    self.events.publish(event)
            self._description = None

    def summary(self):
        td = self.description
        return td.summary()


class _SelectedServer:
    """What PyMongo's Topology.select_server_by_address returns, as far as code reads it."""

    def __init__(self, description, connection):
        self.description = description
        self.connection = connection
