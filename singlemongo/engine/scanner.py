"""The blocking scanner (server monitoring spec, "Single-threaded monitoring") and the
single-threaded server selection loop that runs it (server selection spec, "Single-threaded
server selection").

``plan_next_check`` is the pure planner: which server to check next. ``Scanner.scan`` is the
executor: it checks one server at a time in the planner's order until every server, including
those discovered during the scan, has been checked once. A scan ends on its explicit
checked-in-this-scan set, never by waiting for the clock to move.

With serverSelectionTryOnce (the default) a failed selection triggers one immediate scan and
then an error: selection takes at most the time of one blocking scan. With tryOnce false it
rescans every minHeartbeatFrequencyMS until serverSelectionTimeoutMS, so it may take the
timeout plus one blocking scan. Every loop here is bounded by a count, so frozen time cannot
hang it.
"""
import weakref
from collections import deque

from ..clock import Budget
from .. import errors
from ..errors import ServerSelectionError
from ..monitoring import DEBUG, INFO, SERVER_SELECTION, logging_enabled
from ..options.table import COOLDOWN_MS, MIN_HEARTBEAT_FREQUENCY_MS
from ..sdam.address import format_address
from ..sdam.server_description import ServerType, TopologyType, ServerType as S
from ..selection import READ, WRITE, SelectionSettings, select
from .check import end_unapplied

# A scan checks each server at most once; this bound only guards against a bug looping.
MAX_CHECKS_PER_SCAN = 100_000
# At most this many sockets are open at once in a wave (the rest wait for the next wave).
WAVE_LIMIT = 64
# Up to this many servers the spec's pseudocode (O(n) a pick) plans a scan: cheaper than a
# heap, and a small replica set's one-off does not load heapq and scan_plan.py (0.4 ms).
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
    candidates = [sd for sd in td.servers.values()
                  if sd.address not in checked and not in_cooldown(sd, scan_start)]
    if not candidates:
        return None
    for wanted in (S.RS_PRIMARY, S.POSSIBLE_PRIMARY):
        for sd in candidates:
            if sd.server_type is wanted:
                return sd.address
    known = [sd for sd in candidates if sd.server_type not in (S.UNKNOWN, S.RS_GHOST)]
    pool = known or candidates
    oldest = min(_age_key(sd) for sd in pool)
    return choose([sd.address for sd in pool if _age_key(sd) == oldest])


def _age_key(sd):
    # Never checked is "infinity ago": before every real time.
    return float("-inf") if sd.last_update_time is None else sd.last_update_time


class Scanner:
    """Runs scans for a topology; records what it did for ``--explain`` and the demo."""

    def __init__(self, topology):
        # A proxy, not a reference: a dropped client's topology is freed by reference counting
        # (its sockets closed at once), not by the cyclic garbage collector some time later.
        self.topology = weakref.proxy(topology)
        # (scan number, address, server type, error) of the latest checks; bounded so a
        # long-lived client does not grow.
        self.history = deque(maxlen=256)

    def scan(self):
        topo = self.topology
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
            td = topo.description
            if plan is None and len(td.servers) > SMALL_SCAN:  # large, or grown in this scan
                from .scan_plan import ScanPlan  # it builds on in_cooldown, defined here
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
                plan.announced(topo.description, sd)
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
        topo = self.topology
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
        from .wave import run_wave, waveable
        topo = self.topology
        wave = [sd.address for sd in topo.description.servers.values()
                if sd.address not in skip and not in_cooldown(sd, scan_start)
                and waveable(topo, sd.address)][:WAVE_LIMIT]
        if len(wave) < 2:
            return {}
        for address in wave:
            topo.heartbeat_started(address)
        return run_wave(topo, wave)


# ----- the selection loop -------------------------------------------------------------------

MIN_INTERVAL_S = MIN_HEARTBEAT_FREQUENCY_MS / 1000.0


class _Budget(Budget):
    """The selection budget: waits never longer than the interval they serve."""

    __slots__ = ()

    def sleep_until(self, target):
        # Whatever the clock did (a clock moved backwards would otherwise ask for years).
        self.sleep(min(target - self.now(), MIN_INTERVAL_S))


def settings_for(topo):
    options = topo.options
    return SelectionSettings(options.heartbeat_frequency_ms, options.local_threshold_ms,
                             topo.server_selector)


def _timeout_s(topo):
    """serverSelectionTimeoutMS, or what is left of the operation's timeoutMS if less
    (client-side operations timeout, "Server Selection")."""
    timeout_s = topo.options.server_selection_timeout_ms / 1000.0
    if topo.deadline is not None and topo.deadline.at is not None:
        timeout_s = max(0.0, min(timeout_s, topo.deadline.remaining()))
    return timeout_s


def selector_text(topo, criteria):
    """Everything that selects: the criteria, and an application's server_selector."""
    custom = topo.server_selector
    if custom is None:
        return str(criteria)
    return f"{criteria}, then custom server selector {getattr(custom, '__name__', custom)!r}"


def _log(level, text, topo, criteria, operation, operation_id, **fields):
    if logging_enabled(SERVER_SELECTION, level):
        from ..monitoring import log
        td = topo.description.summary().replace("\n", "; ")
        selector = selector_text(topo, criteria)
        log.emit(SERVER_SELECTION, level, f"{text} Selector: {selector}, topology "
                 f"description: {td}", selector=selector, operation=operation,
                 operationId=operation_id, topologyDescription=td,
                 topology_id=topo.topology_id, **fields)


def select_server(topo, criteria, deprioritized=(), operation="command", operation_id=None):
    """Return one suitable ServerDescription, logging as the spec's Logging section says."""
    what = f"for operation {operation} with ID {operation_id}."
    _log(DEBUG, f"Server selection started {what}", topo, criteria, operation,
         operation_id, message="Server selection started")
    def log_waiting(remaining_ms):
        # "Logging": once per operation, "if one has not already been logged for this
        # operation" (a retried write selects twice under one operationId).
        if operation_id is not None and topo.waiting_logged_for == operation_id:
            return
        topo.waiting_logged_for = operation_id
        _log(INFO, f"Waiting for server to become available {what[:-1]}. Remaining time: "
             f"{remaining_ms:.0f} ms.", topo, criteria, operation, operation_id,
             message="Waiting for suitable server to become available",
             remainingTimeMS=remaining_ms)
    try:
        sd = _select(topo, criteria, deprioritized, log_waiting)
    except (ServerSelectionError, errors.IncompatibleWireVersionError) as exc:
        # "Logging": the failure is the error (step 5's invalid wire version too); the
        # topology description has its own field.
        failure = getattr(exc, "summary", None) or str(exc).splitlines()[0]
        _log(DEBUG, f"Server selection failed {what[:-1]}. Failure: {failure}", topo,
             criteria, operation, operation_id, message="Server selection failed",
             failure=failure)
        raise
    host, port = sd.address
    _log(DEBUG, f"Server selection succeeded {what[:-1]}. Selected server: "
         f"{format_address(sd.address)}.", topo, criteria, operation, operation_id,
         message="Server selection succeeded", serverHost=host, serverPort=port)
    return sd


def _select(topo, criteria, deprioritized, log_waiting):
    """The single-threaded algorithm; ``log_waiting`` is called at most once."""
    options = topo.options
    try_once = options.server_selection_try_once and not topo.selection_waits
    budget = _Budget(topo.clock, _timeout_s(topo))
    settings = settings_for(topo)
    if not options.enable_overload_retargeting:
        deprioritized = ()
    if topo.last_scan_end is None or not \
            0 <= budget.start - topo.last_scan_end < options.heartbeat_frequency_ms / 1000.0:
        topo.stale = True  # a heartbeat due, or a clock moved backwards: "long enough ago"
    scanned = False  # a scan ran, or there was no time for one
    ran = False  # a scan ran
    max_rounds = 2 if try_once else int(budget.timeout_s / MIN_INTERVAL_S) + 3
    # tryOnce without timeoutMS has no deadline; with it, timeoutMS is one.
    limit = budget.deadline if (not try_once or topo.deadline is not None) else None
    for _ in range(max_rounds):
        if topo.stale:
            # A load balancer is never monitored (load balancer spec): no scan to wait for.
            ready = topo.last_scan_end + MIN_INTERVAL_S if topo.last_scan_end is not None \
                and not options.load_balanced else budget.start
            if limit is not None and ready > limit:
                if not try_once or scanned:
                    break
                # No time to wait for the next scan: select from what is known, once.
                scanned = True
            else:
                budget.sleep_until(ready)
                topo.scan()
                scanned = ran = True
        td = topo.description
        if not td.compatible:
            topo.stale = True
            raise errors.IncompatibleWireVersionError(td.compatibility_error)
        result = select(td, criteria, settings, deprioritized)
        if result.in_window:
            return topo.clock.choice(list(result.in_window))
        topo.stale = True
        if try_once and scanned:
            break
        if not try_once and budget.now() > budget.deadline:
            break
        if log_waiting is not None:
            log_waiting((budget.deadline - budget.now()) * 1000)
            log_waiting = None
    raise selection_error(topo, criteria, budget, try_once, ran)


def _hint(td, criteria, now):
    servers = list(td.servers.values())
    if not servers:
        return "the topology has no servers left; check the seed list and replicaSet name"
    if all(in_cooldown(s, now) for s in servers):
        return (f"every server failed its last check less than cooldownMS ({COOLDOWN_MS} ms) "
                f"ago and is not checked again before that: retry after it, or set "
                f"serverSelectionTryOnce=false to wait")
    if all(s.server_type is ServerType.UNKNOWN for s in servers):
        return ("no server answered: check that mongod is running, and the host names, ports, "
                "TLS settings and firewalls")
    if td.topology_type is TopologyType.REPLICA_SET_NO_PRIMARY and (
            criteria.operation == WRITE or criteria.read_preference.is_primary):
        return ("the replica set has no primary (an election may be in progress); retry, use a "
                "secondary read preference, or set serverSelectionTryOnce=false to wait up to "
                "serverSelectionTimeoutMS")
    if td.topology_type is TopologyType.UNKNOWN:
        return "the servers answered but do not form a deployment these options accept"
    return "no server matches the read preference; check tag sets and maxStalenessSeconds"


def _server_line(sd, now):
    """One server in a selection error; one skipped for its cooldown says until when."""
    line = f"  {format_address(sd.address)}: {sd.server_type}"
    if in_cooldown(sd, now):
        left = COOLDOWN_MS / 1000.0 - (now - sd.last_update_time)
        return f"{line}, in cooldown until {left * 1000:.0f} ms from now (last error: {sd.error})"
    return f"{line}; last error: {sd.error}" if sd.error else line


def selection_error_message(topo, criteria, budget, try_once, ran=True):
    td = topo.description
    op = "write" if criteria.operation == WRITE else "read"
    what = f"{op} with read preference {criteria.read_preference}" if op == READ else "write"
    if try_once and not ran:
        limit = topo.deadline.what if topo.deadline is not None else "the time left"
        spent = (f"no scan ran (serverSelectionTryOnce=true, but {limit} ends before the next "
                 f"scan may start, minHeartbeatFrequencyMS {MIN_HEARTBEAT_FREQUENCY_MS} after "
                 f"the last); selected from what was known, {budget.elapsed * 1000:.0f} ms")
    elif try_once:
        spent = (f"gave up after one scan (serverSelectionTryOnce=true), "
                 f"{budget.elapsed * 1000:.0f} ms")
    else:
        spent = (f"{budget.elapsed * 1000:.0f} ms used of serverSelectionTimeoutMS "
                 f"{budget.timeout_s * 1000:.0f}")
    lines = [f"No suitable server for {what}: {spent}; topology type {td.topology_type}"
             + (f", replica set {td.set_name!r}" if td.set_name else "") + "."]
    now = topo.clock.monotonic()
    lines.extend(_server_line(sd, now) for sd in td.servers.values())
    lines.append(f"Hint: {_hint(td, criteria, now)}.")
    return "\n".join(lines)


def selection_error(topo, criteria, budget, try_once, ran=True):
    """The ServerSelectionError, with ``summary``: its message without the server lines."""
    message = selection_error_message(topo, criteria, budget, try_once, ran)
    if topo.deadline is not None and topo.deadline.expired():
        message = f"{topo.deadline.what} expired during server selection. {message}"
    lines = message.splitlines()
    error = ServerSelectionError(message)
    error.summary = f"{lines[0]} {lines[-1]}"
    error.timeout = topo.deadline is not None and topo.deadline.expired()
    return error
