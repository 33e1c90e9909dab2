"""A selected server and its ready connection: selection, the idle-socket check, and
authentication on the connections actually used for operations."""
from ..errors import ConnectionFailure, OperationFailure, ServerSelectionError
from ..sdam.server_description import ServerDescription
from ..sdam.address import format_address


def idle_check(topology, conn):
    """'Checking an idle socket after socketCheckIntervalMS': ping; False if it failed."""
    idle = topology.clock.monotonic() - conn.last_used
    if 0 <= idle < topology.options.socket_check_interval_ms / 1000.0:
        return True  # a clock moved backwards counts as idle long enough: ping
    try:
        conn.command("admin", {"ping": 1}, topology.handshake_deadline())
    except ConnectionFailure as exc:
        topology.close_connection(conn.address, bump_generation=True)
        # Not a failed check: a stale idle socket says little about the server, so no
        # cooldown; the reselection's scan reconnects at once.
        topology.apply(ServerDescription(conn.address,
                                         error=f"idle connection check failed: {exc}"))
        return False
    conn.last_used = topology.clock.monotonic()
    return True


def checkout(topology, criteria, deprioritized=(), operation="command", operation_id=None,
             connect_timeout_s=None):
    """A selected server and its ready, authenticated connection; selection runs at most
    twice. ``connect_timeout_s`` caps connectTimeoutMS for a new connection."""
    last = None
    for _ in range(2):
        sd = topology.select_server(criteria, deprioritized, operation, operation_id)
        conn = topology.connection_for(sd, connect_timeout_s)
        if conn is not None and idle_check(topology, conn):
            if topology.options.credentials is not None and not conn.authenticated:
                authenticate(topology, conn)
            return sd, conn
        last = sd
    raise ServerSelectionError(
        f"server {format_address(last.address)} failed its connection check twice for "
        f"{criteria}; the topology is now:\n{topology.summary()}")


def authenticate(topology, conn):
    from ..auth import authenticate as run  # hashlib and friends load only when needed
    try:  # authentication is part of opening a connection: connectTimeoutMS bounds it
        run(conn, topology.options.credentials, topology.clock, topology.scram_cache,
            topology.handshake_deadline())
    except (ConnectionFailure, OperationFailure) as exc:
        topology.handshake_failed(conn, exc)
        raise
