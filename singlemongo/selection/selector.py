"""Which servers suit an operation (server selection spec, "Rules for server selection").

Pure: a function of the topology description, the criteria, the settings and the
deprioritized servers. The engine's loop (scan, sleep, retry) lives in ``selection_loop.py``.
"""
from ..records import dataclass
from typing import Callable, Optional

from ..constants import (HEARTBEAT_FREQUENCY_MS, IDLE_WRITE_PERIOD_MS, LOCAL_THRESHOLD_MS,
                         SMALLEST_MAX_STALENESS_SECONDS)
from ..errors import ConfigurationError, IncompatibleWireVersionError
from ..sdam.server_type import ServerType as S, TopologyType as T
from .read_preference import PRIMARY, ReadPreference

READ = "read"
WRITE = "write"
# An aggregate ending in $out or $merge (server selection spec, "Read preference with
# aggregate write stages"): it honours the read preference only if every known server is 5.0+
# (wire version 13); otherwise it is a write, on the primary.
AGGREGATE_WRITE = "aggregate with a write stage"
WRITE_STAGE_WIRE_VERSION = 13


def effective(td, criteria):
    """The criteria selection applies: an aggregate's write stage becomes a read or a write."""
    if criteria.operation != AGGREGATE_WRITE:
        return criteria
    known = [s for s in td.servers.values() if s.server_type is not S.UNKNOWN]
    if known and all((s.max_wire_version or 0) >= WRITE_STAGE_WIRE_VERSION for s in known):
        return Criteria(READ, criteria.read_preference)
    return Criteria(WRITE)


@dataclass(frozen=True)
class Criteria:
    operation: str = READ
    read_preference: ReadPreference = PRIMARY

    def __str__(self):
        if self.operation == WRITE:
            return "write (primary)"
        if self.operation == AGGREGATE_WRITE:
            return f"aggregate with $out or $merge, read preference {self.read_preference}"
        return f"read with read preference {self.read_preference}"


@dataclass(frozen=True)
class SelectionSettings:
    heartbeat_frequency_ms: int = HEARTBEAT_FREQUENCY_MS
    local_threshold_ms: int = LOCAL_THRESHOLD_MS
    server_selector: Optional[Callable] = None


@dataclass(frozen=True)
class Selection:
    suitable: tuple
    in_window: tuple


def check_compatible(td):
    if not td.compatible:
        raise IncompatibleWireVersionError(td.compatibility_error)


def validate_max_staleness(td, read_preference, heartbeat_frequency_ms):
    """maxStalenessSeconds must allow for the heartbeat plus the idle write period."""
    max_staleness = read_preference.max_staleness_seconds
    if max_staleness is None:
        return
    if td.topology_type not in (T.REPLICA_SET_WITH_PRIMARY, T.REPLICA_SET_NO_PRIMARY):
        return
    floor_s = max(SMALLEST_MAX_STALENESS_SECONDS,
                  (heartbeat_frequency_ms + IDLE_WRITE_PERIOD_MS) / 1000.0)
    if max_staleness < floor_s:
        raise ConfigurationError(
            f"maxStalenessSeconds {max_staleness} is too small: it must be at least "
            f"{SMALLEST_MAX_STALENESS_SECONDS} and at least heartbeatFrequencyMS "
            f"({heartbeat_frequency_ms}) + idleWritePeriodMS ({IDLE_WRITE_PERIOD_MS}) "
            f"in seconds, so at least {floor_s:g}")


def _staleness_filter(td, servers, max_staleness, heartbeat_ms):
    # "maxStalenessSeconds": both formulas, in milliseconds.
    if max_staleness is None:
        return servers
    limit_ms = max_staleness * 1000.0
    primary = next((s for s in td.servers.values() if s.server_type is S.RS_PRIMARY), None)
    secondaries = [s for s in td.servers.values() if s.server_type is S.RS_SECONDARY]

    def staleness(s):
        if s.server_type is not S.RS_SECONDARY:
            return 0.0
        if primary is not None:
            return ((s.last_update_time * 1000.0 - s.last_write_date)
                    - (primary.last_update_time * 1000.0 - primary.last_write_date)
                    + heartbeat_ms)
        newest = max(x.last_write_date or 0.0 for x in secondaries)
        return newest - (s.last_write_date or 0.0) + heartbeat_ms

    return [s for s in servers if staleness(s) <= limit_ms]


def _tag_filter(servers, tag_sets):
    if not tag_sets:
        return servers
    for tag_set in tag_sets:
        wanted = tag_set.items()  # a read preference tag set matches a superset of it
        matched = [s for s in servers if wanted <= s.tags.items()]
        if matched:
            return matched
    return []


def _rs_secondaries(td, servers, read_preference, heartbeat_ms, with_primary=False):
    # Identity tests: Enum.__hash__ runs in Python and dominates a 50-member selection.
    candidates = [s for s in servers if s.server_type is S.RS_SECONDARY
                  or (with_primary and s.server_type is S.RS_PRIMARY)]
    candidates = _staleness_filter(td, candidates, read_preference.max_staleness_seconds,
                                   heartbeat_ms)
    return _tag_filter(candidates, read_preference.tag_sets)


def _replica_set(td, servers, criteria, heartbeat_ms):
    primaries = [s for s in servers if s.server_type is S.RS_PRIMARY]
    if criteria.operation == WRITE:
        return primaries
    rp = criteria.read_preference
    mode = rp.mode
    if mode == "primary":
        return primaries
    if mode == "primaryPreferred":
        return primaries or _rs_secondaries(td, servers, rp, heartbeat_ms)
    if mode == "secondaryPreferred":
        return _rs_secondaries(td, servers, rp, heartbeat_ms) or primaries
    return _rs_secondaries(td, servers, rp, heartbeat_ms, with_primary=(mode == "nearest"))


def _by_topology(td, servers, criteria, heartbeat_ms):
    kind = td.topology_type
    if kind is T.UNKNOWN:
        return []
    if kind is T.SINGLE:
        return [s for s in servers if s.is_known]
    if kind is T.LOAD_BALANCED:
        return [s for s in servers if s.server_type is S.LOAD_BALANCER]
    if kind is T.SHARDED:
        return [s for s in servers if s.server_type is S.MONGOS]
    return _replica_set(td, servers, criteria, heartbeat_ms)


def suitable_servers(td, criteria, settings=SelectionSettings(), deprioritized=()):
    """Suitable servers, preferring those not deprioritized (sharded and replica sets)."""
    heartbeat_ms = settings.heartbeat_frequency_ms
    servers = list(td.servers.values())
    if deprioritized and td.topology_type not in (T.SINGLE, T.LOAD_BALANCED):
        skip = {getattr(d, "address", d) for d in deprioritized}
        preferred = _by_topology(td, [s for s in servers if s.address not in skip], criteria,
                                 heartbeat_ms)
        if preferred:
            return preferred
    return _by_topology(td, servers, criteria, heartbeat_ms)


def latency_window(servers, local_threshold_ms):
    """'Filtering suitable servers based on the latency window'."""
    if len(servers) <= 1:
        return list(servers)
    fastest = min(s.round_trip_time or 0.0 for s in servers)
    limit = fastest + local_threshold_ms / 1000.0
    return [s for s in servers if (s.round_trip_time or 0.0) <= limit]


def select(td, criteria, settings=SelectionSettings(), deprioritized=()):
    """One selection attempt: validate, find suitable servers, apply the selector and window."""
    check_compatible(td)
    criteria = effective(td, criteria)
    if criteria.operation == READ:
        validate_max_staleness(td, criteria.read_preference, settings.heartbeat_frequency_ms)
    servers = suitable_servers(td, criteria, settings, deprioritized)
    if settings.server_selector is not None and servers:
        servers = list(settings.server_selector(list(servers)))
    return Selection(tuple(servers), tuple(latency_window(servers, settings.local_threshold_ms)))
