"""Connections: the one-connection-per-server table (``ConnectionTable``, the Topology's part
that owns each server's connection and generation, CMAP's pool generation bumped when its
"pool" is cleared), and check-out: a selected server and its ready connection, the
idle-socket check, and authentication on the connections actually used for operations."""
from collections import defaultdict

from singlemongo.engine import scanner
from singlemongo.errors import ConfigurationError, ConnectionFailure, OperationFailure, ServerSelectionError
from singlemongo.sdam.server_description import ServerDescription, TopologyType
from singlemongo.sdam.address import format_address

LB_NO_SERVICE_ID = ("Driver attempted to initialize in load balancing mode, but the server "
                    "does not support this mode.")


class ConnectionTable:
    """The Topology's part that owns its connections; only the engine reads ``_connections``
    (the face asks ``cursor_connection``)."""

    def _init_table(self):
        self._connections = {}
        self.generations = defaultdict(int)
        self.connections_opened = 0

    def cursor_connection(self, address):
        """The open connection to ``address`` (where a cursor lives), or None."""
        return self._connections.get(address)

    def hold(self, address, conn):
        """``conn`` becomes the server's connection."""
        self._connections[address] = conn

    def forget(self, conn):
        """``conn`` is no longer its server's connection (if it still was)."""
        if self._connections.get(conn.address) is conn:
            del self._connections[conn.address]

    def close_connection(self, address, bump_generation=False, service_id=None,
                         reason="error", interrupt=False):
        """Close the server's connection (for CMAP's ConnectionClosedReason ``reason``); with
        ``bump_generation`` its pool is cleared first (connections from before are stale),
        so a listener sees PoolClearedEvent, then the stale connection's ConnectionClosed."""
        conn = self._connections.pop(address, None)
        if bump_generation:
            if conn is not None:
                service_id = service_id or conn.service_id
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

    def _detach_all(self):
        """In a forked child: close only the child's file descriptors of the parent's
        connections (never shutting them down), and start a new table."""
        for conn in self._connections.values():
            conn.detach()
        self._connections = {}
        self.generations = defaultdict(int)

    def _close_all_quietly(self):
        """Close every socket: no events, nothing sent (a dropped client's finalizer runs
        this, and no listener runs in a finalizer)."""
        for conn in self._connections.values():
            conn.on_close = None
            conn.close()
        self._connections = {}


def idle_check(topology, conn):
    """'Checking an idle socket after socketCheckIntervalMS': ping; False if it failed."""
    idle = topology.clock.monotonic() - conn.last_used
    if 0 <= idle < topology.options.socket_check_interval_ms / 1000.0:
        return True  # a clock moved backwards counts as idle long enough: ping
    try:
        conn.command("admin", {"ping": 1}, topology.handshake_deadline())
    except ConnectionFailure as exc:
        if topology.description.topology_type is TopologyType.LOAD_BALANCED:
            # Load balancers drop idle connections: close that one only (load balancer
            # spec: the topology stays LoadBalanced, no other events).
            topology.close_connection(conn.address)
            return False
        # Not a failed check: a stale idle socket says little about the server, so no
        # cooldown; the reselection's scan reconnects at once. Unknown, then cleared.
        topology.apply(ServerDescription(conn.address,
                                         error=f"idle connection check failed: {exc}"))
        topology.close_connection(conn.address, bump_generation=True)
        return False
    conn.last_used = topology.clock.monotonic()
    return True


def checkout(topology, criteria, deprioritized=(), operation="command", operation_id=None,
             connect_timeout_s=None):
    """A selected server and its ready, authenticated connection. Server selection,
    "Checking an Idle Socket": when the idle connection's ping fails, the server is Unknown
    and selection runs *once* more; only finding no server then is an error. The server it
    finds is connected to: should its idle connection fail the ping too, a new connection
    (whose handshake checks the server) is used."""
    sd = topology.select_server(criteria, deprioritized, operation, operation_id)
    conn = check_out(topology, sd, connect_timeout_s)
    if conn is not None:
        return sd, conn
    sd = topology.select_server(criteria, deprioritized, operation, operation_id)
    conn = check_out(topology, sd, connect_timeout_s)
    if conn is None:
        conn = check_out(topology, sd, connect_timeout_s, ping_idle=False)
    if conn is None:
        raise ServerSelectionError(
            f"server {format_address(sd.address)} changed on its new connection while "
            f"selected for {criteria}; the topology is now:\n{topology.summary()}")
    return sd, conn


def checkout_pinned(topology, address, connect_timeout_s=None):
    """The server a transaction is pinned to and its connection (Mongos Pinning): never
    another server; a selection error if it is not known to be usable now."""
    topology.check_open()
    topology.check_fork()
    sd = topology.description.servers.get(address)
    if sd is not None and not sd.is_data_bearing:
        sd = topology.check_server(address)  # marked Unknown by an error: check it now
    conn = None
    if sd is not None and sd.is_data_bearing:
        conn = check_out(topology, sd, connect_timeout_s)
    if conn is None:
        raise ServerSelectionError(
            f"the transaction is pinned to {format_address(address)}, which is "
            f"{'not in the topology' if sd is None else sd.server_type.name} now; the "
            f"topology is:\n{topology.summary()}")
    return sd, conn


def check_out(topology, sd, connect_timeout_s=None, ping_idle=True):
    """The selected server's connection, checked if idle (``ping_idle``) and authenticated,
    or None if it failed its check; with CMAP's check-out events when anyone listens
    (engine/cmap_events.py)."""
    pool = topology.pool
    if pool is None:
        return _ready_connection(topology, sd, connect_timeout_s, ping_idle)
    pool.check_out_started(sd.address, topology.clock.monotonic())
    try:
        conn = _ready_connection(topology, sd, connect_timeout_s, ping_idle)
    except BaseException as exc:
        pool.check_out_failed(topology.clock.monotonic(), exc)
        raise
    if conn is None:
        pool.check_out_failed(topology.clock.monotonic())
    else:
        pool.checked_out_ok(conn, topology.clock.monotonic())
    return conn


def _ready_connection(topology, sd, connect_timeout_s, ping_idle=True):
    conn = connection_for(topology, sd, connect_timeout_s)
    if conn is None:
        return None
    if topology.pool is not None:
        topology.pool.taking(conn)
    if ping_idle and not idle_check(topology, conn):
        return None
    if topology.options.credentials is not None and not conn.authenticated:
        authenticate(topology, conn)
    return conn


def authenticate(topology, conn):
    from singlemongo.auth import authenticate as run  # hashlib and friends load only when needed
    try:  # authentication is part of opening a connection: connectTimeoutMS bounds it
        run(conn, topology.options.credentials, topology.clock, topology.auth_cache,
            topology.handshake_deadline())
    except (ConnectionFailure, OperationFailure) as exc:
        exc.in_authentication = True  # retryable reads and writes retry it (the handshake's)
        # Client backpressure rule 6: an overloaded server is deprioritized whatever command
        # said so, a saslStart or saslContinue as much as a find.
        exc.selected_address = conn.address
        handshake_failed(topology, conn, exc)
        raise
    except BaseException:
        # A client-side refusal (ConfigurationError), an interrupt: the server is fine, but a
        # half-authenticated connection is never used again.
        topology.forget(conn)
        conn.close()
        raise


def connection_for(topology, sd, connect_timeout_s=None):
    """The server's connection, opened (and handshaken) if needed; ``connect_timeout_s``
    caps connectTimeoutMS for a new connection."""
    conn = topology._connections.get(sd.address)
    if conn is not None and not conn.closed and (not conn.more_to_come or conn.settle_stream()):
        return conn
    if topology.description.topology_type is TopologyType.LOAD_BALANCED:
        try:
            conn, reply, _ = topology.connect(sd.address, connect_timeout_s)
        except ConnectionFailure as exc:
            _label_overload(exc)
            exc.selected_address = sd.address
            raise  # the server stays a LoadBalancer either way
        if reply.get("serviceId") is None:
            conn.close()
            raise ConfigurationError(LB_NO_SERVICE_ID)
        topology.hold(sd.address, conn)
        return conn
    if sd.address not in topology.verified:
        # Selected from a topology cache: this handshake is the first check of the server.
        checked = topology.check_server(sd.address)
        conn = topology._connections.get(sd.address)
        if conn is None or checked.server_type is not sd.server_type:
            topology.mark_stale("the cached server answered otherwise")
            return None
        return conn
    # A connection lost since the last scan: its handshake is a check of the server
    # (server monitoring: a failed handshake counts as a failed check, Unknown with its
    # cooldown). Only a connection the server closes or resets before the handshake
    # completes is what an overloaded server does (client backpressure): labelled for a
    # backoff retry, and the server stays known.
    topology.heartbeat_started(sd.address)  # SDAM monitoring: every Failed has its Started
    outcome = scanner.hello(topology, sd.address, timeout_s=connect_timeout_s)
    if outcome.error is not None:
        outcome.error.handshake_s = outcome.duration
        if _label_overload(outcome.error):
            scanner.ended_unapplied_failure(topology, sd.address, outcome)
            # Client backpressure rule 6: the retry deprioritizes this server, which the
            # operation learns here, before any connection to it exists.
            outcome.error.selected_address = sd.address
            raise outcome.error
        scanner.failed(topology, sd.address, outcome)
        topology.mark_stale("a lost connection's handshake failed")
        return None
    checked = scanner.check_server(topology, sd.address, outcome)
    if checked is None or checked.server_type is not sd.server_type:
        topology.mark_stale("a reconnected server changed type")
        return None
    return topology._connections.get(sd.address)


def _label_overload(exc):
    """Whether ``exc`` is a connection the server closed or reset during the handshake, which
    is what an overloaded server does (client backpressure, in every topology type); if so it
    is labelled for a backoff retry."""
    if not getattr(exc, "in_handshake", False) or exc.timeout:
        return False
    from singlemongo.engine.backpressure import RETRYABLE_ERROR, SYSTEM_OVERLOADED
    if SYSTEM_OVERLOADED not in exc.error_labels:
        exc.error_labels = tuple(exc.error_labels) + (SYSTEM_OVERLOADED, RETRYABLE_ERROR)
    return True


def handshake_failed(topology, conn, exc):
    """SDAM "MongoDB Handshake errors": an error while making an application connection
    (the handshake or authentication) marks the server Unknown and clears its connection,
    unless the server says it is overloaded (client backpressure)."""
    from singlemongo.engine.backpressure import SYSTEM_OVERLOADED
    if SYSTEM_OVERLOADED in getattr(exc, "error_labels", ()):
        return
    if topology.description.topology_type is not TopologyType.LOAD_BALANCED:
        topology.apply(ServerDescription(conn.address, error=f"authentication failed: {exc}",
                                         last_update_time=topology.clock.monotonic()))
        topology.mark_stale("a handshake or authentication failed")
    # The load balancer and SDAM tests' order: Unknown, pool cleared, the connection
    # closed (reason "error"), then the check-out failed.
    topology.clear_pool(conn.address, conn.service_id)
    topology.forget(conn)
    if not conn.closed:
        conn.close_error = str(exc)
    conn.close()
    if topology.pool is not None:
        topology.pool.check_out_failed(topology.clock.monotonic(), exc)


REAUTHENTICATION_REQUIRED = 391


def reauthentication_required(error, topology):
    """Whether ``error`` is the server's ReauthenticationRequired for a MONGODB-OIDC client."""
    credentials = topology.options.credentials
    return (isinstance(error, OperationFailure) and error.code == REAUTHENTICATION_REQUIRED
            and credentials is not None and credentials.mechanism == "MONGODB-OIDC")


def reauthenticate(topology, conn):
    """Auth spec, "Reauthentication": the SASL conversation again on ``conn`` (no hello);
    a failure is handled as an authentication failure of a new connection."""
    from singlemongo.auth import reauthenticate as run
    try:
        run(conn, topology.options.credentials, topology.clock, topology.auth_cache,
            topology.handshake_deadline())
    except (ConnectionFailure, OperationFailure) as exc:
        handshake_failed(topology, conn, exc)
        raise
