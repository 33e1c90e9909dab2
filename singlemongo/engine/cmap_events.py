"""A pool of one: the connection monitoring and pooling (CMAP) events of the one connection
each server has, for programs that listen for them (a ``ConnectionPoolListener``).

singlemongo has no pool: each server has one socket, shared by its checks and the operations.
CMAP's events describe it as a pool holding at most that connection:
- a server's pool is created when the server enters the topology, and closed when it leaves
  or the client closes; it is ready when the server is selectable, and paused by a clear
  (CMAP, "Pool states"; PyMongo marks a pool ready from the topology's updates too);
- a connection joins the pool at the first check-out that uses it: a check's socket is
  created when an operation first takes it (before authenticating it) and ready when that
  check-out succeeds; a socket no operation took is a monitoring connection and publishes
  nothing, as CMAP's monitors do not;
- each attempt of an operation checks the connection out and back in; behind a load
  balancer a cursor or a transaction keeps it checked out (pinned) until it ends, as
  CMAP's "Connection Pinning" says, and its later commands check nothing out;
- a bump of the server's connection generation clears the pool.

The monitor exists only for a client made with a listener that takes pool events, so a
program without one pays nothing (``wanted``)."""
import functools
import weakref
from collections.abc import Mapping

from singlemongo.monitoring import pool_events as e
from singlemongo.monitoring import CONNECTION, logging_enabled
from singlemongo.monitoring.listeners import wants_pool_events
from singlemongo.sdam.server_description import ServerType, TopologyType

# What PyMongo's PoolOptions.non_default_options reports: (option, CMAP name, its default).
_POOL_OPTIONS = (("max_pool_size", "maxPoolSize", 100), ("min_pool_size", "minPoolSize", 0),
                 ("max_idle_time_ms", "maxIdleTimeMS", 0),
                 ("wait_queue_timeout_ms", "waitQueueTimeoutMS", 0),
                 ("max_connecting", "maxConnecting", 2))


def wanted(bus):
    """A PoolMonitor for ``bus`` if any of its listeners takes pool events, or connection
    log messages would go somewhere, else None."""
    if wants_pool_events(bus.listeners) or logging_enabled(CONNECTION):
        return PoolMonitor(bus)
    return None


def non_default_options(options):
    """The pool options given other than their defaults (PoolCreatedEvent's ``options``)."""
    out = {}
    for attribute, name, default in _POOL_OPTIONS:
        value = getattr(options, attribute, None)
        if value is not None and value != default:
            out[name] = value
    return out


class PoolMonitor:
    """The pool state CMAP's events describe, per server: created, ready, the connection in
    it and how many holders have it checked out."""

    def __init__(self, bus):
        self.bus = bus
        self.ready = set()  # addresses whose pool is ready (CMAP, "Pool states")
        self.holds = {}  # connection -> how many holders have it checked out
        self.readied = weakref.WeakSet()  # connections whose ready event was published
        self.pending = None  # (address, start time) of the check-out under way

    def _emit(self, event, error=None):
        self.bus.publish(event)
        if logging_enabled(CONNECTION):
            from singlemongo.monitoring.pool_logging import log_pool_event
            log_pool_event(event, self.bus.topology_id, error)

    @property
    def total_checked_out(self):
        """Connections checked out, counted per holder (the unified format's count)."""
        return sum(self.holds.values())

    # ----- pools ---------------------------------------------------------------------------

    def created(self, address, options, load_balanced):
        self._emit(e.PoolCreatedEvent(address, non_default_options(options)))
        if load_balanced:  # load balancer spec: the pool is ready at once, never paused
            self.mark_ready(address)

    def mark_ready(self, address):
        if address not in self.ready:
            self.ready.add(address)
            self._emit(e.PoolReadyEvent(address))

    def update(self, new_td, sd):
        """PyMongo's rule: a server that is readable, or known in a Single topology, has a
        ready pool."""
        known = sd.server_type is not ServerType.UNKNOWN
        if sd.address in new_td.servers and (sd.is_readable or known and (
                new_td.topology_type is TopologyType.SINGLE)):
            self.mark_ready(sd.address)

    def cleared(self, address, service_id, load_balanced, interrupt=False):
        """A generation bump: published unless the pool is already paused (CMAP: clearing a
        paused pool publishes nothing); behind a load balancer a pool is never paused."""
        if load_balanced:
            self._emit(e.PoolClearedEvent(address, service_id, interrupt))
        elif address in self.ready:
            self.ready.discard(address)
            self._emit(e.PoolClearedEvent(address, service_id, interrupt))

    def closed(self, address):
        self.ready.discard(address)
        for conn in [c for c in self.holds if c.address == address]:
            del self.holds[conn]
            self._publish_closed(conn)
        self._emit(e.PoolClosedEvent(address))

    # ----- the connection ------------------------------------------------------------------

    def check_out_started(self, address, now):
        self.pending = (address, now)
        self._emit(e.ConnectionCheckOutStartedEvent(address))

    def check_out_existing(self, conn, clock):
        """A check-out of ``conn`` itself (a cursor's getMore on its server, not behind a
        load balancer; endSessions at close)."""
        self.check_out_started(conn.address, clock.monotonic())
        self.checked_out_ok(conn, clock.monotonic())

    def new_connection(self, conn):
        """A connection opened while a check-out of its server is pending is the pool's at
        once: created now, ready when checked out (closed before that if its handshake
        fails)."""
        if self.pending is not None and self.pending[0] == conn.address:
            self._created(conn)

    def taking(self, conn):
        """A check-out is taking ``conn`` (checking it if idle, authenticating it): a check's
        socket no operation took before joins the pool now."""
        if conn.on_close is None:
            self._created(conn)

    def checked_out_ok(self, conn, now):
        """The pending check-out got ``conn``: created and ready first if no operation took
        it before."""
        started = self.pending[1] if self.pending is not None else now
        self.pending = None
        self.taking(conn)
        if conn not in self.readied:
            self.readied.add(conn)
            self._emit(e.ConnectionReadyEvent(conn.address, conn.id, now - started))
        self.holds[conn] = self.holds.get(conn, 0) + 1
        self._emit(e.ConnectionCheckedOutEvent(conn.address, conn.id, now - started))

    def check_out_failed(self, now, error=None,
                         reason=e.ConnectionCheckOutFailedReason.CONN_ERROR):
        """The pending check-out failed (published once, as soon as it is known)."""
        if self.pending is not None:
            (address, started), self.pending = self.pending, None
            self._emit(e.ConnectionCheckOutFailedEvent(address, reason, now - started),
                       None if error is None else str(error))

    def checked_in(self, conn):
        count = self.holds.pop(conn, 0) - 1
        if count > 0:
            self.holds[conn] = count
        self._emit(e.ConnectionCheckedInEvent(conn.address, conn.id))
        if count <= 0 and conn.closed:
            self._publish_closed(conn)

    def _created(self, conn):
        conn.on_close = self._connection_closed
        self._emit(e.ConnectionCreatedEvent(conn.address, conn.id))

    def _connection_closed(self, conn):
        """CMAP: a checked-out connection's closed event comes after its check-in."""
        if conn not in self.holds:
            self._publish_closed(conn)

    def _publish_closed(self, conn):
        if conn.on_close is not None:
            conn.on_close = None  # once
            self._emit(e.ConnectionClosedEvent(conn.address, conn.id, conn.close_reason),
                       conn.close_error)


def attempt_ended(topology, conn, req, step, result):
    """After an attempt that checked ``conn`` out: check it in, or, behind a load balancer,
    give it to what keeps it (load balancer spec, "Connection Pinning"): a transaction keeps
    the connection of its first command until it is unpinned (a commit or abort retried on
    a new connection does not pin it again); a cursor keeps the connection that opened it
    until it ends."""
    pool = topology.pool
    if topology.options.load_balanced:
        check_in = functools.partial(pool.checked_in, conn)
        if step is not None and step.txn.pinned == conn.address and not step.ends_transaction:
            step.txn.hold(conn, check_in)
            return
        outcome = result[0] if result is not None else None
        if step is None and outcome is not None and req.keep_session and req.pinned is None \
                and _opens_cursor(outcome.reply):
            outcome.check_in = check_in
            return
    pool.checked_in(conn)


def _opens_cursor(reply):
    cursor = reply.get("cursor") if isinstance(reply, Mapping) else None
    return isinstance(cursor, Mapping) and bool(cursor.get("id"))
