"""Server selection, the pure rules: read preferences (server selection spec, "Read
Preference") and which servers suit an operation (server selection spec, "Rules for server
selection"). One module, so a one-off loads one file for them, not a package and a module.

Pure: a function of the topology description, the criteria, the settings and the
deprioritized servers. The engine's loop (scan, sleep, retry) lives in ``engine/scanner.py``.
"""
from __future__ import annotations

from singlemongo.records import dataclass, field
TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Callable, Optional, Tuple

from singlemongo.options.table import HEARTBEAT_FREQUENCY_MS, LOCAL_THRESHOLD_MS, READ_PREFERENCE_MODES
from singlemongo import errors
from singlemongo.errors import ConfigurationError
from singlemongo.sdam.server_description import ServerType as S, TopologyType as T

__all__ = ["PRIMARY", "ReadPreference", "READ", "WRITE", "Criteria", "Selection",
           "SelectionSettings", "latency_window", "select", "suitable_servers"]

# Max staleness: the smallest value a user may set, and the idle write period of a primary.
SMALLEST_MAX_STALENESS_SECONDS = 90
IDLE_WRITE_PERIOD_MS = 10_000

_MODES_BY_LOWER = {m.lower(): m for m in READ_PREFERENCE_MODES}


@dataclass(frozen=True)
class ReadPreference:
    mode: str = "primary"
    tag_sets: Tuple[dict, ...] = field(default=({},))
    max_staleness_seconds: Optional[int] = None
    hedge: Optional[dict] = None

    def __post_init__(self):
        mode = _MODES_BY_LOWER.get(str(self.mode).lower())
        if mode is None:
            raise ConfigurationError(
                f"invalid read preference mode {self.mode!r}: expected one of "
                f"{', '.join(READ_PREFERENCE_MODES)}")
        object.__setattr__(self, "mode", mode)
        tags = tuple(dict(t) for t in (self.tag_sets if self.tag_sets is not None else ({},)))
        object.__setattr__(self, "tag_sets", tags)
        staleness = self.max_staleness_seconds
        if staleness is not None and staleness == -1:
            object.__setattr__(self, "max_staleness_seconds", None)
        elif staleness is not None and (isinstance(staleness, bool) or not isinstance(
                staleness, int) or staleness <= 0):
            raise ConfigurationError(
                f"invalid maxStalenessSeconds {staleness!r}: expected a positive integer or -1")
        if mode == "primary":
            if any(tags):
                raise ConfigurationError(
                    f"read preference mode 'primary' cannot be combined with tag sets {list(tags)}")
            if self.max_staleness_seconds is not None:
                raise ConfigurationError(
                    "read preference mode 'primary' cannot be combined with maxStalenessSeconds "
                    f"{self.max_staleness_seconds}")
            if self.hedge is not None:
                raise ConfigurationError("read preference mode 'primary' cannot be hedged")

    @classmethod
    def from_document(cls, doc):
        """From a ``{mode, tag_sets | tags, maxStalenessSeconds, hedge}`` document."""
        if doc is None:
            return cls()
        tags = doc.get("tag_sets", doc.get("tags"))
        return cls(doc.get("mode", "primary"), tuple(tags) if tags is not None else ({},),
                   doc.get("maxStalenessSeconds"), doc.get("hedge"))

    @property
    def is_primary(self):
        return self.mode == "primary"

    def document(self):
        """The ``$readPreference`` document ("Document structure")."""
        doc = {"mode": self.mode}
        if any(self.tag_sets):
            doc["tags"] = [dict(t) for t in self.tag_sets]
        if self.max_staleness_seconds is not None:
            doc["maxStalenessSeconds"] = self.max_staleness_seconds
        if self.hedge:  # an empty hedge document is left out, as PyMongo leaves it
            doc["hedge"] = dict(self.hedge)
        return doc

    def needs_document_for_op_query(self):
        """OP_QUERY to mongos: secondaryPreferred with only a mode travels as the flag alone."""
        if self.mode == "primary":
            return False
        if self.mode == "secondaryPreferred":
            return any(self.tag_sets) or self.max_staleness_seconds is not None or bool(self.hedge)
        return True

    def __str__(self):
        parts = [self.mode]
        if any(self.tag_sets):
            parts.append(f"tag sets {list(self.tag_sets)}")
        if self.max_staleness_seconds is not None:
            parts.append(f"maxStalenessSeconds {self.max_staleness_seconds}")
        if self.hedge is not None:
            parts.append(f"hedge {dict(self.hedge)}")
        return ", ".join(parts)


PRIMARY = ReadPreference()


# ----- selection ----------------------------------------------------------------------------

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


class Selection:
    """One selection attempt's result: the suitable servers and those in the latency window
    (a plain class: every operation makes one, and a record class costs a one-off more)."""

    __slots__ = ("suitable", "in_window")

    def __init__(self, suitable: tuple, in_window: tuple) -> None:
        self.suitable, self.in_window = suitable, in_window


def check_compatible(td):
    if not td.compatible:
        raise errors.IncompatibleWireVersionError(td.compatibility_error)


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
    # Load balancer spec, "Server Selection": the single server MUST always be selected, so
    # an application's selector does not apply (PyMongo ignores it there too).
    if settings.server_selector is not None and servers and \
            td.topology_type is not T.LOAD_BALANCED:
        servers = list(settings.server_selector(list(servers)))
    return Selection(tuple(servers), tuple(latency_window(servers, settings.local_threshold_ms)))


# ----- read preference on the wire (server selection spec, "Passing read preference to
# mongos and load balancers", "Topology type: Single") ----------

def read_preference_for_op_msg(topology_type, server_type, read_preference, is_read=True):
    """The ``$readPreference`` to add to an OP_MSG command, or None (server selection spec)."""
    if not is_read:
        return None
    if topology_type is T.SINGLE:
        if server_type is S.STANDALONE:
            return None
        if server_type is not S.MONGOS and read_preference.is_primary:
            return {"mode": "primaryPreferred"}  # so that any member answers a direct read
    if read_preference.is_primary:
        return None
    return read_preference.document()


def op_query_read_preference(topology_type, server_type, read_preference):
    """(secondaryOk flag, $readPreference or None) for an OP_QUERY read."""
    if topology_type is T.SINGLE and server_type not in (S.MONGOS,
                                                                    S.STANDALONE):
        return True, None
    if server_type in (S.MONGOS, S.LOAD_BALANCER):
        doc = read_preference.document() if read_preference.needs_document_for_op_query() else None
        return not read_preference.is_primary, doc
    return not read_preference.is_primary, None
