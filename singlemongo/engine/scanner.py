"""The blocking scanner (server monitoring spec, "Single-threaded monitoring") and its checks
(server monitoring spec, "Check", as a single-threaded client does it); the single-threaded
server selection loop that runs it is selection_loop.py.

``plan_next_check`` is the pure planner: which server to check next. ``Scanner.scan`` is the
executor: it checks one server at a time in the planner's order until every server, including
those discovered during the scan, has been checked once. A scan ends on its explicit
checked-in-this-scan set, never by waiting for the clock to move.

A check is a hello on the server's connection, or the handshake of a new one (handshake.py).
Its outcome updates the description, and every ServerHeartbeatStartedEvent ends with a
Succeeded or Failed event whose duration is the check's own round trip. A known server whose
check fails on the network is checked again at once, on a new connection ("Network or
command error during server check", step 4: the old socket may only have gone stale); a
second failure leaves it Unknown, skipped for cooldownMS.

Every loop here is bounded by a count, so frozen time cannot hang it.
"""
from __future__ import annotations

import weakref
from collections import deque
TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Any, Optional

from singlemongo.engine import moved_names
from singlemongo.errors import ConnectionFailure, with_configured_timeouts
from singlemongo.options.table import COOLDOWN_MS
from singlemongo.replies import is_ok
from singlemongo.sdam.address import format_address
from singlemongo.sdam.server_description import ServerDescription, average_rtt, ServerType as S
from singlemongo.engine.handshake import handshake_command

# A scan checks each server at most once; this bound only guards against a bug looping.
MAX_CHECKS_PER_SCAN = 100_000
# At most this many sockets are open at once in a wave (the rest wait for the next wave).
WAVE_LIMIT = 64
# Up to this many servers the spec's pseudocode (O(n) a pick) plans a scan: cheaper than a
# heap, and a small replica set's one-off does not load scan_plan.py and _heapq (0.4 ms).
SMALL_SCAN = 16


def in_cooldown(sd, scan_start, cooldown_s=COOLDOWN_MS / 1000.0):
    """'cooldownMS': an Unknown whose last check failed on the network is skipped while
    ``scan_start - cooldownMS`` is before that check ("Scanning order": beforeCoolDown)."""
    # A clock moved backwards (negative age) counts as "long enough ago".
    return (sd.server_type is S.UNKNOWN and sd.error_is_network
            and sd.last_update_time is not None
            and 0 <= scan_start - sd.last_update_time < cooldown_s)


def plan_next_check(td, checked, scan_start, choose=lambda items: items[0]):
    """The next server to check in this scan, or None when the scan is complete ("Scanning
    order"); cooldowns are measured from the scan's start, never from the current time."""
    # One pass a pick (the scan makes n picks): only a network failure can be in cooldown.
    candidates = [sd for sd in td.servers.values() if sd.address not in checked
                  and not (sd.error_is_network and in_cooldown(sd, scan_start))]
    if not candidates:
        return None
    for wanted in (S.RS_PRIMARY, S.POSSIBLE_PRIMARY):
        for sd in candidates:
            if sd.server_type is wanted:
                return sd.address
    known = [sd for sd in candidates if sd.server_type not in (S.UNKNOWN, S.RS_GHOST)]
    pool = known or candidates
    # Never checked is "infinity ago": before every real time.
    ages = [_NEVER if sd.last_update_time is None else sd.last_update_time for sd in pool]
    oldest = min(ages)
    return choose([sd.address for sd, age in zip(pool, ages) if age == oldest])


_NEVER = float("-inf")


class Scanner:
    """Runs scans for a topology; records what it did for ``--explain`` and the demo."""

    def __init__(self, topology):
        # A weak reference, not a reference: a dropped client's topology is freed by reference
        # counting (its sockets closed at once), not by the cyclic garbage collector some
        # time later. Taken once a scan, not through a proxy: the scan and its wave read the
        # topology's attributes some twenty times a member.
        self._topology_ref = weakref.ref(topology)
        # (scan number, address, server type, error) of the latest checks; bounded so a
        # long-lived client does not grow.
        self.history = deque(maxlen=256)

    def scan(self):
        topo = self._topology_ref()
        if topo.options.tls:
            topo.tls_context()  # a file that cannot be used fails here, before any socket
        checked, prefetched = set(), {}
        scan_number = topo.scan_count + 1
        scan_start = topo.clock.monotonic()
        if self._lone_seed(checked, scan_number, scan_start):
            topo.scan_count = scan_number
            return checked
        plan = None
        for _ in range(MAX_CHECKS_PER_SCAN):
            td = topo._description  # open: a scan runs after Topology.open
            if plan is None and len(td.servers) > SMALL_SCAN:  # large, or grown in this scan
                from singlemongo.engine.scan_plan import ScanPlan  # it builds on in_cooldown, defined here
                plan = ScanPlan(td, scan_start, topo.clock.random)
            address = (plan_next_check(td, checked, scan_start, topo.clock.choice)
                       if plan is None else plan.next(td, checked))
            if address is None:
                break
            if address not in prefetched and topo.scan_executor == "concurrent":
                prefetched.update(self._wave(checked | set(prefetched), scan_start))
            checked.add(address)
            sd = topo.check_server(address, prefetched.pop(address, None))
            if plan is not None:
                plan.announced(topo._description, sd)
            self._record(scan_number, address, sd)
        for address, outcome in prefetched.items():  # removed by an earlier reply
            end_unapplied(topo, address, outcome)
        topo.scan_count = scan_number
        return checked

    def _lone_seed(self, checked, scan_number, scan_start):
        """A description of one server has no order to plan and nothing to check at once: it
        is checked directly (a standalone's one-off loads neither planner nor wave). True if
        that was the whole scan; False if the reply announced more servers (the planner goes
        on from there) or there was not just one server."""
        topo = self._topology_ref()
        servers = topo.description.servers
        if len(servers) != 1:
            return False
        ((address, sd),) = servers.items()
        if not in_cooldown(sd, scan_start):
            checked.add(address)
            self._record(scan_number, address, topo.check_server(address))
        return set(topo.description.servers) <= checked or len(checked) == 0

    def _record(self, scan_number, address, sd):
        self.history.append((scan_number, address, sd.server_type if sd else None,
                             sd.error if sd else "removed during the scan"))

    def _wave(self, skip, scan_start):
        """Check at once up to WAVE_LIMIT servers the planner may ask for next (see wave.py)."""
        from singlemongo.engine.wave import run_wave, waveable
        topo = self._topology_ref()
        wave = [sd.address for sd in topo.description.servers.values()
                if sd.address not in skip and not in_cooldown(sd, scan_start)
                and waveable(topo, sd.address)][:WAVE_LIMIT]
        if len(wave) < 2:
            return {}
        for address in wave:
            topo.heartbeat_started(address)
        return run_wave(topo, wave)


# ----- a check ------------------------------------------------------------------------------

class Outcome:
    """What one hello got: a reply or a network error, and how long it took (seconds). A plain
    class, not a record: a one-off makes this class (a record class costs 0.1 M instructions
    more to make)."""

    __slots__ = ("reply", "error", "duration", "new_connection")

    def __init__(self, reply: Optional[dict] = None, error: Optional[ConnectionFailure] = None,
                 duration: float = 0.0, new_connection: Any = None) -> None:
        self.reply, self.error, self.duration = reply, error, duration
        self.new_connection = new_connection  # a connection the check opened, not handed over


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
    from singlemongo.wire import messages as wire  # here: the face imports this module
    try:
        reply = conn.command("admin", handshake_command(topology.options, initial=False,
                                                        hello_ok=conn.hello_ok),
                             topology.handshake_deadline(timeout_s),
                             codec=wire.DEFAULT_CODEC_OPTIONS)
    except ConnectionFailure as exc:
        return Outcome(error=exc, duration=clock.monotonic() - start)
    conn.last_used = clock.monotonic()
    return Outcome(reply, duration=conn.last_used - start)


def check_server(topology, address, outcome=None):
    """Check ``address`` (or apply the ``outcome`` a concurrent wave got); the new description.
    A wave has already published the heartbeat's Started event."""
    # The description itself, not the property (four reads a member): a scan runs on an
    # open topology.
    prior = topology._description.servers.get(address)
    if outcome is None:
        topology.heartbeat_started(address)
        outcome = hello(topology, address, topology._connections.get(address))
    ended, sd = _end_attempt(topology, address, outcome, prior)
    if ended or prior is None or not prior.is_known or address not in topology.description.servers:
        return sd if ended else topology.description.servers.get(address)
    topology.heartbeat_started(address)
    outcome = hello(topology, address)  # at once, on a new connection
    # SDAM, "roundTripTime": the server became Unknown, its average RTT is cleared; the retry
    # starts a new one (it folded the old average in).
    return _end_attempt(topology, address, outcome, sd)[1]


def _end_attempt(topology, address, outcome, prior):
    """(whether the check is over, the description after this attempt): a reply, a check
    timeoutMS cut short, or a failure (Unknown; a known server gets one more attempt)."""
    if outcome.error is None:
        return True, _succeeded(topology, address, outcome, prior)
    if _cut_short(topology, outcome):
        return True, _unfinished(topology, address, outcome, prior)
    return False, failed(topology, address, outcome)


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
    topology.publish_sdam("ServerHeartbeatFailedEvent", outcome.duration, outcome.error, address)


def _publish_succeeded(topology, address, outcome):
    # A reply carrying speculativeAuthenticate is sensitive: the event shows none of it.
    reply = outcome.reply
    topology.publish_sdam("ServerHeartbeatSucceededEvent", outcome.duration,
                          {} if "speculativeAuthenticate" in reply else reply, address)


def _succeeded(topology, address, outcome, prior):
    reply, now = outcome.reply, topology.clock.monotonic()
    topology.verified.add(address)
    # Sessions spec, "Gossipping the cluster time": any reply's, an error's too (a wave's
    # replies are gossiped here only, each once).
    topology.sessions.advance_cluster_time(reply)
    if not is_ok(reply):  # a command error: Unknown, then cleared
        topology.publish_sdam("ServerHeartbeatFailedEvent", outcome.duration, reply, address)
        sd = ServerDescription.from_hello(address, reply, now=now)
        topology.apply(sd)
        topology.close_connection(address, bump_generation=True)
        return topology.description.servers.get(address, sd)
    else:
        _publish_succeeded(topology, address, outcome)
        previous_rtt = prior.round_trip_time if prior is not None else None
        sd = ServerDescription.from_hello(address, reply,
                                          average_rtt(previous_rtt, outcome.duration), now)
        if sd.dropped_hosts and (prior is None or prior.dropped_hosts != sd.dropped_hosts):
            _log_dropped(topology, sd)
    topology.apply(sd)
    return topology._description.servers.get(address, sd)


def _log_dropped(topology, sd):
    """Announced hosts left out of a reply are said once (not every heartbeat), as a warning:
    the server is kept, but a member the set announces wrongly is never reached."""
    from singlemongo.monitoring import log
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
    if outcome.error is None:
        topology.sessions.advance_cluster_time(outcome.reply)
    if outcome.error is None and is_ok(outcome.reply):
        _publish_succeeded(topology, address, outcome)
    else:
        topology.publish_sdam("ServerHeartbeatFailedEvent", outcome.duration,
                              outcome.error or outcome.reply, address)
    if address not in topology.description.servers:
        topology.close_connection(address)


# Names issue 61 moved to modules of their own (old import paths keep working).
__getattr__ = moved_names(__name__, {'MIN_INTERVAL_S': 'selection_loop',
                                         'settings_for': 'selection_loop',
                                         'selector_text': 'selection_loop',
                                         'select_server': 'selection_loop',
                                         'selection_error_message': 'selection_loop',
                                         'selection_error': 'selection_loop'})
