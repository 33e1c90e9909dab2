"""The single-threaded server selection loop (server selection spec, "Single-threaded server
selection"), which runs the blocking scanner (scanner.py) when the description is stale.

With serverSelectionTryOnce (the default) a failed selection triggers one immediate scan and
then an error: selection takes at most the time of one blocking scan. With tryOnce false it
rescans every minHeartbeatFrequencyMS until serverSelectionTimeoutMS, so it may take the
timeout plus one blocking scan. Every loop here is bounded by a count, so frozen time cannot
hang it.
"""
from singlemongo.clock import Budget
from singlemongo import errors
from singlemongo.errors import ServerSelectionError
from singlemongo.monitoring import DEBUG, INFO, SERVER_SELECTION, logging_enabled
from singlemongo.options.table import COOLDOWN_MS, MIN_HEARTBEAT_FREQUENCY_MS
from singlemongo.sdam.address import format_address
from singlemongo.sdam.server_description import ServerType, TopologyType
from singlemongo.selection import READ, WRITE, SelectionSettings, select
from singlemongo.engine.scanner import in_cooldown

MIN_INTERVAL_S = MIN_HEARTBEAT_FREQUENCY_MS / 1000.0


class _Budget(Budget):
    """The selection budget: waits never longer than the interval they serve."""

    __slots__ = ()

    def sleep_until(self, target):
        # Whatever the clock did (a clock moved backwards would otherwise ask for years).
        self.sleep(min(target - self.now(), MIN_INTERVAL_S))


def scan_due(topo, now):
    """Whether a heartbeat is due: never scanned, the last scan heartbeatFrequencyMS ago, or
    a clock moved backwards ("long enough ago")."""
    last = topo.last_scan_end
    return last is None or not 0 <= now - last < topo.options.heartbeat_frequency_ms / 1000.0


def settings_for(topo, selector=None):
    """The selection settings; ``selector`` (a function of the suitable servers) replaces the
    application's server_selector for one selection."""
    options = topo.options
    return SelectionSettings(options.heartbeat_frequency_ms, options.local_threshold_ms,
                             selector or topo.server_selector)


def _timeout_s(topo):
    """serverSelectionTimeoutMS, or what is left of the operation's timeoutMS if less
    (client-side operations timeout, "Server Selection")."""
    timeout_s = topo.options.server_selection_timeout_ms / 1000.0
    if topo.deadline is not None and topo.deadline.at is not None:
        timeout_s = max(0.0, min(timeout_s, topo.deadline.remaining()))
    return timeout_s


def selector_text(topo, criteria, selector=None):
    """Everything that selects: the criteria, and an application's server_selector."""
    custom = selector or topo.server_selector
    if custom is None:
        return str(criteria)
    return f"{criteria}, then custom server selector {getattr(custom, '__name__', custom)!r}"


def _log(level, text, topo, criteria, operation, operation_id, custom, **fields):
    if logging_enabled(SERVER_SELECTION, level):
        from singlemongo.monitoring import log
        td = topo.description.summary().replace("\n", "; ")
        selector = selector_text(topo, criteria, custom)
        log.emit(SERVER_SELECTION, level, f"{text} Selector: {selector}, topology "
                 f"description: {td}", selector=selector, operation=operation,
                 operationId=operation_id, topologyDescription=td,
                 topology_id=topo.topology_id, **fields)


def select_server(topo, criteria, deprioritized=(), operation="command", operation_id=None,
                  selector=None):
    """Return one suitable ServerDescription, logging as the spec's Logging section says;
    ``selector`` replaces the application's server_selector for this selection."""
    # The messages are built only for a logger that takes them (every operation selects).
    if logging_enabled(SERVER_SELECTION, DEBUG):
        _log(DEBUG, f"Server selection started {_for(operation, operation_id)}.", topo,
             criteria, operation, operation_id, selector, message="Server selection started")
    try:
        sd = _select(topo, criteria, deprioritized, (operation, operation_id), selector)
    except (ServerSelectionError, errors.IncompatibleWireVersionError) as exc:
        # "Logging": the failure is the error (step 5's invalid wire version too); the
        # topology description has its own field.
        failure = getattr(exc, "summary", None) or str(exc).splitlines()[0]
        _log(DEBUG, f"Server selection failed {_for(operation, operation_id)}. Failure: "
             f"{failure}", topo, criteria, operation, operation_id, selector,
             message="Server selection failed", failure=failure)
        raise
    if logging_enabled(SERVER_SELECTION, DEBUG):
        host, port = sd.address
        _log(DEBUG, f"Server selection succeeded {_for(operation, operation_id)}. "
             f"Selected server: {format_address(sd.address)}.", topo, criteria, operation,
             operation_id, selector, message="Server selection succeeded", serverHost=host,
             serverPort=port)
    return sd


def _for(operation, operation_id):
    return f"for operation {operation} with ID {operation_id}"


def _log_waiting(topo, criteria, operation, operation_id, selector, remaining_ms):
    # "Logging": once per operation, "if one has not already been logged for this
    # operation" (a retried write selects twice under one operationId).
    if operation_id is not None and topo.waiting_logged_for == operation_id:
        return
    topo.waiting_logged_for = operation_id
    _log(INFO, f"Waiting for server to become available "
         f"{_for(operation, operation_id)}. Remaining time: {remaining_ms:.0f} ms.", topo,
         criteria, operation, operation_id, selector,
         message="Waiting for suitable server to become available",
         remainingTimeMS=remaining_ms)


def _select(topo, criteria, deprioritized, operation, selector):
    """The single-threaded algorithm; ``operation``: (name, id) for the one log of a wait."""
    options = topo.options
    try_once = options.server_selection_try_once and not topo.selection_waits
    budget = _Budget(topo.clock, _timeout_s(topo))
    settings = settings_for(topo, selector)
    if not options.enable_overload_retargeting:
        deprioritized = ()
    if scan_due(topo, budget.start):
        topo.mark_stale("a heartbeat is due")
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
            topo.mark_stale("a server's wire version is incompatible")
            raise errors.IncompatibleWireVersionError(td.compatibility_error)
        result = select(td, criteria, settings, deprioritized)
        if result.in_window:
            if len(result.in_window) == 1:  # as PyMongo: no draw for one server
                return result.in_window[0]
            return topo.clock.choice(list(result.in_window))
        topo.mark_stale("no suitable server")
        if try_once and scanned:
            break
        if not try_once and budget.now() > budget.deadline:
            break
        if operation is not None:
            _log_waiting(topo, criteria, *operation, selector,
                         (budget.deadline - budget.now()) * 1000)
            operation = None  # once
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
