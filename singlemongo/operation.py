"""Run one command on a selected server: selection, the idle-socket check, read preference on
the wire, and error handling through the SDAM decision. The user API sits on ``run_command``.
"""
from .errors import ConnectionFailure, ServerSelectionError
from .handshake import read_preference_for_op_msg
from .sdam.server_description import ServerDescription, format_address
from .topology import raise_for_reply


def _idle_check(topology, conn):
    """'Checking an idle socket after socketCheckIntervalMS': ping; False if it failed."""
    now = topology.clock.monotonic()
    if now - conn.last_used < topology.options.socket_check_interval_ms / 1000.0:
        return True
    try:
        conn.command("admin", {"ping": 1}, topology.options.connect_timeout_ms / 1000.0 or None)
    except ConnectionFailure as exc:
        topology.close_connection(conn.address, bump_generation=True)
        # Not a failed check: a stale idle socket says little about the server, so no
        # cooldown; the reselection's scan reconnects at once.
        topology.apply(ServerDescription(conn.address,
                                         error=f"idle connection check failed: {exc}"))
        return False
    conn.last_used = topology.clock.monotonic()
    return True


def checkout(topology, criteria, deprioritized=()):
    """A selected server and its ready connection; selection runs at most twice."""
    last = None
    for _ in range(2):
        sd = topology.select_server(criteria, deprioritized)
        conn = topology.connection_for(sd)
        if conn is not None and _idle_check(topology, conn):
            return sd, conn
        last = sd
    raise ServerSelectionError(
        f"server {format_address(last.address)} failed its connection check twice for "
        f"{criteria}; the topology is now:\n{topology.summary()}")


def run_command(topology, db, command, criteria, is_read=True, sequences=()):
    sd, conn = checkout(topology, criteria)
    cmd = dict(command)
    rp = read_preference_for_op_msg(topology.description.topology_type, sd.server_type,
                                    criteria.read_preference, is_read)
    if rp is not None:
        cmd["$readPreference"] = rp
    timeout_ms = topology.options.socket_timeout_ms
    try:
        reply = conn.command(db, cmd, timeout_ms / 1000.0 if timeout_ms else None, sequences)
    except ConnectionFailure as exc:
        topology.handle_operation_error(conn, exc=exc)
        raise
    conn.last_used = topology.clock.monotonic()
    if reply.get("ok") in (0, 0.0, False) or "writeConcernError" in reply:
        topology.handle_operation_error(conn, reply=reply)
    raise_for_reply(reply, sd.address)
    return reply
