"""The engine: owns the topology description and the stale flag, and is made of the parts
that each own one more piece of state: the connection table (one connection per server and
each server's generation, checkout.py), the handshake (handshake.py), and the operation's
admission (guard.py: one at a time, its deadline, the fork check). Every change of the description goes
through ``apply``, which publishes the SDAM events the change implies.

The face (everything outside ``engine/``) calls only the narrow waist: ``current_deadline``,
``timeout_scope``, ``cursor_connection``, ``defer_kill`` and ``flush_deferred_kills``,
``selection_may_wait``,
``select_server`` (with a ``selector`` argument), ``mark_stale``, and the read-only state
(``description``, ``options``, ``clock``, ``events``, ``sessions``); tests/test_layering.py
fails when it touches a private engine name.
"""
import itertools
import os

from singlemongo.engine import moved_names
from singlemongo.clock import DEFAULT_CLOCK
from singlemongo.errors import ConfigurationError
from singlemongo.monitoring import CONNECTION, TOPOLOGY, EventBus, logging_enabled
from singlemongo.engine import scanner
from singlemongo.engine.checkout import ConnectionTable
from singlemongo.engine.guard import Deadlines, OperationGuard
from singlemongo.engine.handshake import Handshake
from singlemongo.engine.scanner import Scanner
from singlemongo.engine.selection_loop import MIN_INTERVAL_S, scan_due, select_server
from singlemongo.engine.sessions import SessionPool
from singlemongo.sdam.server_description import ServerDescription, ServerType, TopologyType
from singlemongo.sdam.topology_description import REMOVES_OTHERS, TopologyDescription
from singlemongo.replies import is_ok

_topology_ids = itertools.count(1)


class Topology(ConnectionTable, Handshake, Deadlines, OperationGuard):
    """One client's view of its deployment, and everything the engine keeps for it."""

    def __init__(self, options, clock=DEFAULT_CLOCK, listeners=(), resolver=None,
                 scan_executor="concurrent", server_selector=None):
        if scan_executor not in ("concurrent", "sequential"):
            raise ConfigurationError(f"scan_executor must be 'concurrent' or 'sequential', "
                                     f"not {scan_executor!r}")
        self.scan_executor = scan_executor
        self.server_selector = server_selector  # server selection spec, "serverSelector"
        self._init_guard()
        self._init_table()
        self.options = options
        self.clock = clock
        self.events = listeners if isinstance(listeners, EventBus) else EventBus(listeners)
        self.resolver = resolver
        self.topology_id = next(_topology_ids)
        self.events.topology_id = self.topology_id
        self._description = None
        self._stale = True
        self.stale_reason = "never scanned"  # why the next selection scans (--explain)
        self.last_scan_end = None
        self.scan_count = 0
        self.verified = set()  # servers this process has checked itself (not from a cache)
        self.scanner = Scanner(self)
        self.sessions = SessionPool(clock)
        # Authentication state kept across connections: SCRAM's salted keys, MONGODB-OIDC's
        # token (the auth spec's per-client caches).
        self.auth_cache = {}
        self._kill_queue = []  # cursors collected by the garbage collector, killed inline later
        self._token_bucket = None  # full until a retry spends a token (client backpressure)
        self._tls_context = None
        self.deadline = None  # the current operation's timeoutMS, while one runs
        # A change stream's resume selects as serverSelectionTryOnce=false would: it may take
        # serverSelectionTimeoutMS (an election), the stream's own budget (change streams).
        self._selection_waits = False
        self.waiting_logged_for = None  # the operation whose selection logged "Waiting..."
        self.unfinished = set()  # servers whose check timeoutMS cut short in this scan
        self.cache_holds = None  # (description, wall time written) of the cache file, if known
        # Libraries wrapping the driver (DriverInfo): the driver= option, then append_metadata.
        self.drivers = (options.driver,) if options.driver is not None else ()
        self.pool = self._pool_monitor()

    def _pool_monitor(self):
        """CMAP's events for the one connection per server (engine/cmap_events.py), for a client
        made with a listener that takes them; None (nothing loaded) otherwise."""
        if not self.events.listeners and not logging_enabled(CONNECTION):
            return None
        from singlemongo.engine.cmap_events import wanted
        return wanted(self.events)

    # ----- the narrow waist (what the face may call besides the read-only state) -----------

    @property
    def stale(self):
        """Whether the next selection scans first (read-only: ``mark_stale`` writes it)."""
        return self._stale

    def mark_stale(self, reason):
        """The description may be out of date: the next selection scans first."""
        self._stale, self.stale_reason = True, reason

    def defer_kill(self, address, db, collection, cursor_id, check_in=None):
        """killCursors for a cursor dropped without close (no I/O in ``__del__``): sent
        inline before the client's next operation; then ``check_in``, the check-in of the
        connection it was pinned to (cursor id 0: only that), so that no listener runs in a
        finalizer."""
        self._kill_queue.append((address, db, collection, cursor_id, check_in))

    def flush_deferred_kills(self):
        """Send the killCursors ``defer_kill`` queued (within the operation in flight)."""
        if self._kill_queue:
            from singlemongo.engine.cursors import flush_kill_queue
            flush_kill_queue(self)

    @property
    def selection_waits(self):
        """Whether selection waits as serverSelectionTryOnce=false would (see below)."""
        return self._selection_waits

    def selection_may_wait(self):
        """Within the block, selection may take serverSelectionTimeoutMS as
        serverSelectionTryOnce=false would: a change stream's resume waits out an election
        within the stream's own budget (change streams). A context manager."""
        return _SelectionMayWait(self)

    # PyMongo's Topology members that PyMongo's test harness reads (drop_in/). Methods, not a
    # __getattr__: a class with one has every attribute read take the slow path (Python
    # does not specialize it), and the engine reads the topology's some 50 times an operation.
    def select_server_by_address(self, address, operation=None, operation_id=None):
        """PyMongo's Topology method (drop_in/topology_members.py)."""
        from singlemongo.drop_in.topology_members import select_server_by_address
        return select_server_by_address(self, address, operation, operation_id)

    def max_cluster_time(self):
        """PyMongo's Topology method (drop_in/topology_members.py)."""
        from singlemongo.drop_in.topology_members import max_cluster_time
        return max_cluster_time(self)

    # ----- state ---------------------------------------------------------------------------

    def publish_sdam(self, name, *args):
        """Publish SDAM monitoring's ``name`` (an event class, or a ``*_events`` function of
        the events a change implies) made from ``args``, if anyone listens: sdam/monitoring.py
        loads only then."""
        # Publishing does something only for a listener or SDAM logging (tested here, not by
        # a property of the bus: a scan publishes three events a member).
        if not self.events.listeners and not logging_enabled(TOPOLOGY):
            return
        from singlemongo.monitoring import sdam_events as m
        made = getattr(m, name)(*args)
        for event in (made if name.endswith("_events") else (made,)):
            self.events.publish(event)

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
            from singlemongo.options.srv import resolve_seedlist
            from singlemongo.engine.dns import DnsPythonResolver
            resolver = self.resolver or DnsPythonResolver(self.handshake_deadline())
            self.options = resolve_seedlist(self.options, resolver, self.clock.shuffle)
        td = TopologyDescription.from_options(self.options)
        self._description = td
        cached = self._load_cache()
        self.publish_sdam("opening_events", self.topology_id, td)
        if self.options.load_balanced:
            if self.pool is not None:  # CMAP: each pool is created, then (behind a load
                for address in td.servers:  # balancer, at once) ready
                    self.pool.created(address, self.options, True)
            for address in td.servers:
                self.apply(ServerDescription(address, ServerType.LOAD_BALANCER))
            self._stale = False
        elif cached is not None:
            self._description, age = cached
            self.cache_holds = (self._description, self.clock.wall() - age)
            self.last_scan_end = self.clock.monotonic() - age
            self._stale = False
        if self.pool is not None and not self.options.load_balanced:
            for address in self._description.servers:
                self.pool.created(address, self.options, False)

    def _load_cache(self):
        if not self.options.topology_cache_file or self.options.load_balanced:
            return None
        from singlemongo.engine.topology_cache import load
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
        # A test first, without building sets: almost every update removes nothing, and a
        # scan of n members applies n of them. Only a primary's can remove another server
        # than its own (REMOVES_OTHERS; the update was made, so its own server was there).
        if (not old.servers.keys() <= new.servers.keys()
                if sd.server_type in REMOVES_OTHERS else sd.address not in new.servers):
            for address in old.servers.keys() - new.servers.keys():
                self.close_connection(address, reason="poolClosed")
                if self.pool is not None:
                    self.pool.closed(address)
        if self.pool is not None:
            for address in new.servers.keys() - old.servers.keys():
                self.pool.created(address, self.options, False)
            self.pool.update(new, sd)
        self.publish_sdam("change_events", self.topology_id, old, new, sd.address)

    # ----- checks --------------------------------------------------------------------------

    def heartbeat_started(self, address):
        self.publish_sdam("ServerHeartbeatStartedEvent", address)

    def check_server(self, address, outcome=None):
        """One check of one server (see scanner.py); returns its new description."""
        return scanner.check_server(self, address, outcome)

    def scan(self):
        if not self.options.load_balanced:  # load balancer spec: never monitor
            self.scanner.scan()
        self.last_scan_end = self.clock.monotonic()
        self._stale = bool(self.unfinished)  # a server not checked to the end: scan again
        if self._stale:
            self.stale_reason = "a check was cut short"
        self.unfinished.clear()
        if self.options.topology_cache_file and not self.options.load_balanced:
            from singlemongo.engine.topology_cache import save
            self.cache_holds = save(self.options.topology_cache_file, self.options,
                                    self._description, self.clock, self.cache_holds)

    # ----- operations ----------------------------------------------------------------------

    def forget_after_fork(self):
        """In a forked child: drop the parent's sockets (closing only the child's file
        descriptors, never shutting the connections down) and start from scratch."""
        self._detach_all()
        self._description = None
        self.last_scan_end = None
        self.mark_stale("forked")
        self.sessions = SessionPool(self.clock)  # the parent's sessions are the parent's
        self._kill_queue = []
        self._token_bucket = None  # full until a retry spends a token (client backpressure)
        self.pool = self._pool_monitor()
        self.pid = os.getpid()

    @property
    def token_bucket(self):
        """The client's retry token bucket (client backpressure), made at the first retry:
        until then it is full and a success has nothing to return to it."""
        if self._token_bucket is None:
            from singlemongo.engine.backpressure import TokenBucket
            self._token_bucket = TokenBucket()
        return self._token_bucket

    def select_server(self, criteria, deprioritized=(), operation="command", operation_id=None,
                      selector=None):
        """One suitable server's description (the selection loop); ``selector`` (a function
        of the suitable servers) replaces the application's server_selector for this one."""
        if self.holds_operation():  # within execute (every operation): admitted already
            self.open()
            return select_server(self, criteria, deprioritized, operation, operation_id,
                                 selector)
        with self.operation():
            self.check_fork()
            self.open()
            return select_server(self, criteria, deprioritized, operation, operation_id,
                                 selector)

    def refresh(self):
        """The description, after a scan if one is due (never checked, stale, or a heartbeat
        old) and may start now (never waiting for the 500 ms interval, nor for another
        thread's operation): what ``primary``, ``secondaries``, ``arbiters`` and ``nodes``
        read, as PyMongo's monitors would have kept it current."""
        if self.another_thread_in_flight():
            return self.description  # another thread's operation scans: read, never wait
        if self._description is None and self.options.connect is False:
            # PyMongo starts no monitor with connect=False: nothing is known before the first
            # operation (Flask-PyMongo tests that a client "doesn't connect by default").
            return self.description
        with self.operation():
            self.check_fork()
            self.open()
            now, last = self.clock.monotonic(), self.last_scan_end
            may_start = last is None or not 0 <= now - last < MIN_INTERVAL_S
            if (self._stale or scan_due(self, now)) and may_start:
                self.scan()
            return self.description

    def handle_operation_error(self, conn, exc=None, reply=None):
        """Apply the SDAM decision for a failed operation on ``conn``."""
        from singlemongo.sdam.error_handling import (ApplicationError, ErrorKind, classify_reply,
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
        if conn.closed:
            self.forget(conn)
        # SDAM "Application errors": the server is marked Unknown, then its pool is cleared
        # (a listener never sees the pool cleared while the server is still selectable).
        if decision.new_description is not None:
            self.apply(decision.new_description)
        if decision.clear_pool:
            self.close_connection(conn.address, bump_generation=True, service_id=conn.service_id)
        if decision.mark_stale:
            self.mark_stale(f"an operation failed on {conn.address}: {message}"[:200])
        return decision

    def release(self):
        """Free the sockets of a client dropped without close() (its finalizer): no events,
        no endSessions, nothing sent; in a forked child only the child's descriptors close."""
        if self.pid != os.getpid():
            self.forget_after_fork()
            return
        self._close_all_quietly()

    def close(self):
        if self._description is None and self.options.load_balanced \
                and not self.options.is_srv and not self.closed:
            self.open()  # load balancer spec: the opening series, then the closing one
        self.closed = True
        while self._kill_queue:  # killed by the client's close if it could; checked in now
            check_in = self._kill_queue.pop(0)[4]
            if check_in is not None:  # CMAP: a connection's check-in before its closing
                check_in()
        for address in list(self._connections):
            self.close_connection(address, reason="poolClosed")
        if self._description is not None:
            if self.pool is not None:
                for address in self._description.servers:
                    self.pool.closed(address)
            self.publish_sdam("closing_events", self.topology_id, self._description)
            self._description = None

    def summary(self):
        td = self.description
        return td.summary()


# Names issue 61 moved to modules of their own (old import paths keep working).
__getattr__ = moved_names(__name__, {'timeout_block': 'guard'})


class _SelectionMayWait:
    """``selection_may_wait``'s block (a class: a one-off does not load contextlib)."""

    __slots__ = ("topology", "waits")

    def __init__(self, topology):
        self.topology, self.waits = topology, None

    def __enter__(self):
        self.waits, self.topology._selection_waits = self.topology._selection_waits, True

    def __exit__(self, *exc):
        self.topology._selection_waits = self.waits
        return False
