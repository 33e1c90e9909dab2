"""One check of one server (server monitoring spec, "Check", as a single-threaded client does
it).

A check is a hello on the server's connection, or the handshake of a new one (handshake.py).
Its outcome updates the description, and every ServerHeartbeatStartedEvent ends with a
Succeeded or Failed event whose duration is the check's own round trip. A known server whose
check fails on the network is checked again at once, on a new connection ("Network or
command error during server check", step 4: the old socket may only have gone stale); a
second failure leaves it Unknown, skipped for cooldownMS.
"""
from __future__ import annotations

from typing import Any, Optional

from ..errors import ConnectionFailure, with_configured_timeouts
from ..records import dataclass
from ..sdam.address import format_address
from ..sdam.server_description import ServerDescription, average_rtt
from ..replies import is_ok
from .handshake import handshake_command


@dataclass
class Outcome:
    """What one hello got: a reply or a network error, and how long it took (seconds)."""
    reply: Optional[dict] = None
    error: Optional[ConnectionFailure] = None
    duration: float = 0.0
    new_connection: Any = None  # a connection the check opened and has not handed over


def hello(topology, address, conn=None, timeout_s=None):
    """A hello on ``conn``, or on a new connection when there is none (``timeout_s`` caps its
    connectTimeoutMS); never raises."""
    clock = topology.clock
    start = clock.monotonic()
    if conn is None or conn.closed:
        try:
            conn, reply, rtt = topology.connect(address, timeout_s)
        except ConnectionFailure as exc:
            return Outcome(error=exc, duration=clock.monotonic() - start)
        topology.hold(address, conn)
        return Outcome(reply, duration=rtt)
    try:
        reply = conn.command("admin", handshake_command(topology.options, initial=False,
                                                        hello_ok=conn.hello_ok),
                             topology.handshake_deadline(timeout_s))
    except ConnectionFailure as exc:
        return Outcome(error=exc, duration=clock.monotonic() - start)
    conn.last_used = clock.monotonic()
    return Outcome(reply, duration=conn.last_used - start)


def check_server(topology, address, outcome=None):
    """Check ``address`` (or apply the ``outcome`` a concurrent wave got); the new description.
    A wave has already published the heartbeat's Started event."""
    prior = topology.description.servers.get(address)
    if outcome is None:
        topology.heartbeat_started(address)
        outcome = hello(topology, address, topology._connections.get(address))
    if outcome.error is None:
        return _succeeded(topology, address, outcome, prior)
    if _cut_short(topology, outcome):
        return _unfinished(topology, address, outcome, prior)
    unknown = failed(topology, address, outcome)
    if prior is None or not prior.is_known or address not in topology.description.servers:
        return topology.description.servers.get(address)
    topology.heartbeat_started(address)
    outcome = hello(topology, address)  # at once, on a new connection
    # SDAM, "roundTripTime": the server became Unknown, its average RTT is cleared; the retry
    # starts a new one (it folded the old average in).
    if outcome.error is None:
        return _succeeded(topology, address, outcome, unknown)
    if _cut_short(topology, outcome):
        return _unfinished(topology, address, outcome, unknown)
    return failed(topology, address, outcome)


def _cut_short(topology, outcome):
    """A check that timed out because the operation's timeoutMS ran out, not connectTimeoutMS:
    it says nothing about the server (CSOT, "Server Monitoring": monitoring is not subject
    to timeoutMS; only a single-threaded client's operation waits for its checks)."""
    deadline = topology.deadline
    return deadline is not None and deadline.expired() and getattr(outcome.error, "timeout",
                                                                   False)


def _unfinished(topology, address, outcome, prior):
    """The heartbeat ends, the half-used connection closes (no pool clear), the server keeps
    its description and the topology stays stale: the next operation checks it again."""
    conn = topology._connections.get(address)
    if conn is not None and conn.closed:
        topology.forget(conn)
    ended_unapplied_failure(topology, address, outcome)
    topology.unfinished.add(address)
    return prior


def ended_unapplied_failure(topology, address, outcome):
    """The Failed event that ends a check's heartbeat (alone: for an overloaded server or a
    check cut short, the description stays)."""
    if topology.events.active:
        from ..sdam import monitoring as m  # SDAM events: loaded when anyone listens
        topology.events.publish(m.ServerHeartbeatFailedEvent(outcome.duration, outcome.error,
                                                             address))


def _succeeded(topology, address, outcome, prior):
    reply, now = outcome.reply, topology.clock.monotonic()
    topology.verified.add(address)
    events = topology.events.active
    if not is_ok(reply):  # a command error: Unknown, then cleared
        if events:
            from ..sdam import monitoring as m
            topology.events.publish(m.ServerHeartbeatFailedEvent(outcome.duration, reply, address))
        sd = ServerDescription.from_hello(address, reply, now=now)
        topology.apply(sd)
        topology.close_connection(address, bump_generation=True)
        return topology.description.servers.get(address, sd)
    else:
        if events:
            shown = {} if "speculativeAuthenticate" in reply else reply  # sensitive
            from ..sdam import monitoring as m
            topology.events.publish(m.ServerHeartbeatSucceededEvent(outcome.duration, shown,
                                                                    address))
        topology.sessions.advance_cluster_time(reply)
        previous_rtt = prior.round_trip_time if prior is not None else None
        sd = ServerDescription.from_hello(address, reply,
                                          average_rtt(previous_rtt, outcome.duration), now)
        if sd.dropped_hosts and (prior is None or prior.dropped_hosts != sd.dropped_hosts):
            _log_dropped(topology, sd)
    topology.apply(sd)
    return topology.description.servers.get(address, sd)


def _log_dropped(topology, sd):
    """Announced hosts left out of a reply are said once (not every heartbeat), as a warning:
    the server is kept, but a member the set announces wrongly is never reached."""
    from ..monitoring import log
    if log.enabled(log.TOPOLOGY, log.WARNING):
        text = (f"{format_address(sd.address)} announced host entries that are not valid "
                f"addresses; they are left out and the server is used: "
                f"{'; '.join(sd.dropped_hosts)}")
        log.emit(log.TOPOLOGY, log.WARNING, text, topology.topology_id,
                 message="Invalid announced hosts dropped",
                 serverHost=sd.address[0], serverPort=sd.address[1],
                 dropped=list(sd.dropped_hosts))


def failed(topology, address, outcome):
    """A failed check: the server Unknown with a network error (its cooldown starts), then
    its pool cleared, interrupting in-use connections if the check timed out (server
    monitoring, "Network or command error during server check")."""
    ended_unapplied_failure(topology, address, outcome)
    options = topology.options
    with_configured_timeouts(outcome.error, None, options.socket_timeout_ms,
                             options.connect_timeout_ms)
    sd = ServerDescription(address, error=str(outcome.error), error_is_network=True,
                           last_update_time=topology.clock.monotonic())
    topology.apply(sd)
    topology.close_connection(address, bump_generation=True,
                              interrupt=bool(getattr(outcome.error, "timeout", False)))
    return topology.description.servers.get(address, sd)


def end_unapplied(topology, address, outcome):
    """A wave's outcome for a server an earlier reply removed: its heartbeat still ends, and a
    connection it opened is closed; nothing else is done for it."""
    if topology.events.active:
        if outcome.error is None and is_ok(outcome.reply):
            shown = {} if "speculativeAuthenticate" in outcome.reply else outcome.reply
            from ..sdam import monitoring as m
            topology.events.publish(m.ServerHeartbeatSucceededEvent(outcome.duration, shown,
                                                                    address))
        else:
            from ..sdam import monitoring as m
            topology.events.publish(m.ServerHeartbeatFailedEvent(
                outcome.duration, outcome.error or outcome.reply, address))
    if address not in topology.description.servers:
        topology.close_connection(address)
