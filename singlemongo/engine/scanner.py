"""The blocking scanner (server monitoring spec, "Single-threaded monitoring"); the
single-threaded server selection loop that runs it is selection_loop.py.

``plan_next_check`` is the pure planner: which server to check next. ``Scanner.scan`` is the
executor: it checks one server at a time in the planner's order until every server, including
those discovered during the scan, has been checked once. A scan ends on its explicit
checked-in-this-scan set, never by waiting for the clock to move.
Every loop here is bounded by a count, so frozen time cannot hang it.
"""
import weakref
from collections import deque

from ..options.table import COOLDOWN_MS
from ..sdam.server_description import ServerType as S
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
