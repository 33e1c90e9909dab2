"""TopologyDescription and the pure SDAM update (SDAM, "Updating the TopologyDescription").

``TopologyDescription.update(server_description)`` returns a new description; the transitions
are the spec's TopologyType table, written as a dict keyed by (TopologyType, ServerType), at the
end of this module: each action takes a mutable ``Working`` copy of the description and the new
ServerDescription, and ``update`` runs the actions the table lists in order.
"""
from __future__ import annotations

from singlemongo.records import dataclass, field
from types import MappingProxyType
TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Any, Mapping, Optional, Tuple

from singlemongo.sdam.server_description import (Address, ServerDescription, compare_topology_version,
                                 DATA_BEARING, ServerType, TopologyType, ServerType as S,
                                 TopologyType as T)
from singlemongo.sdam.address import format_address

# clientMinWireVersion / clientMaxWireVersion: MongoDB 4.2 and newer.
MIN_SUPPORTED_WIRE_VERSION = 8
MAX_SUPPORTED_WIRE_VERSION = 25
MIN_SUPPORTED_SERVER_VERSION = "4.2"

DRIVER_NAME = "singlemongo"


def initial_topology_type(direct_connection, replica_set, load_balanced, seed_count=1):
    """SDAM "Initial TopologyType"; directConnection unset behaves as false."""
    if load_balanced:
        return TopologyType.LOAD_BALANCED
    if direct_connection:
        return TopologyType.SINGLE
    if replica_set is not None:
        return TopologyType.REPLICA_SET_NO_PRIMARY
    return TopologyType.UNKNOWN


class _Derived:
    """A value derived from a description's ``servers``: computed with its two siblings at
    the first read of any, then an instance attribute (a descriptor without ``__set__``:
    the instance's own value wins), so that later reads call nothing."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, td: Any, owner: Any = None) -> Any:
        if td is None:
            return self
        values = td.__dict__  # a frozen record: its __setattr__ refuses
        values["compatible"], values["compatibility_error"] = _compatibility(
            td.servers.values())
        values["logical_session_timeout_minutes"] = _session_timeout(td.servers.values())
        return values[self.name]


@dataclass(frozen=True)
class TopologyDescription:
    topology_type: TopologyType
    servers: Mapping[Address, ServerDescription]
    set_name: Optional[str] = None
    max_set_version: Optional[int] = None
    max_election_id: Any = None
    seeds: Tuple[Address, ...] = field(default=())

    # Derived from ``servers`` when first read, not at every update: a scan of n members
    # applies n updates, and each would otherwise walk all n servers again.

    # SDAM "Checking wire protocol compatibility": every known server's range overlaps the
    # driver's. Each is computed at the first read of any of them, then read as a plain
    # attribute (every operation reads them).
    # Not annotated: an annotation would make each a field of the record.
    compatible = _Derived()
    compatibility_error = _Derived()
    logical_session_timeout_minutes = _Derived()

    @classmethod
    def initial(cls, seeds, replica_set=None, direct_connection=None, load_balanced=False):
        topology_type = initial_topology_type(direct_connection, replica_set, load_balanced)
        # In load-balanced mode the server starts Unknown too; the engine publishes the
        # LoadBalancer description at once, without I/O (load balancer spec, "Monitoring").
        servers = {a: ServerDescription.unknown(a) for a in seeds}
        return cls(topology_type, MappingProxyType(servers), set_name=replica_set,
                   seeds=tuple(seeds))

    @classmethod
    def from_servers(cls, topology_type, servers, set_name=None, seeds=()):
        """A description assembled from known server descriptions (tests, topology caches)."""
        work = Working(topology_type, {sd.address: sd for sd in servers}, set_name, None, None,
                       tuple(seeds))
        return cls(topology_type, MappingProxyType({}), seeds=tuple(seeds))._finish(work)

    @classmethod
    def from_options(cls, options):
        return cls.initial(options.seeds, options.replica_set, options.direct_connection,
                           options.load_balanced)

    def update(self, sd):
        """Apply one check outcome; outcomes for unknown addresses or stale versions are ignored."""
        current = self.servers.get(sd.address)
        if current is None:
            return self
        # "Replacing the TopologyDescription": keep the newer topologyVersion.
        if compare_topology_version(current.topology_version, sd.topology_version) > 0:
            return self
        work = Working.of(self)
        work.servers[sd.address] = sd
        if self.topology_type is TopologyType.SINGLE:
            _verify_set_name_single(work, sd)
        elif self.topology_type is not TopologyType.LOAD_BALANCED:
            for action in TRANSITIONS[(self.topology_type, sd.server_type)]:
                action(work, sd)
        return self._finish(work)

    def _finish(self, work):
        cls = type(self)
        if cls is not TopologyDescription:
            return cls(work.topology_type, MappingProxyType(work.servers), work.set_name,
                       work.max_set_version, work.max_election_id, work.seeds)
        # The working copy becomes the new description (each member of a scan makes one):
        # no second object, no record constructor (three times the instructions).
        work.servers = MappingProxyType(work.servers)
        _seal(work, "__class__", cls)
        return work

    def server(self, address):
        return self.servers.get(address)

    # PyMongo's read accessors (pymongo.topology_description), for code that inspects them.

    @property
    def topology_type_name(self):
        return self.topology_type.value

    @property
    def replica_set_name(self):
        return self.set_name

    def server_descriptions(self):
        """{address: ServerDescription} of every server."""
        return dict(self.servers)

    @property
    def known_servers(self):
        return [sd for sd in self.servers.values() if sd.is_known]

    @property
    def common_wire_version(self):
        versions = [sd.max_wire_version for sd in self.known_servers
                    if sd.max_wire_version is not None]
        return min(versions) if versions else None

    def has_readable_server(self, read_preference=None):
        """Whether a read with ``read_preference`` (primary by default) could be served now."""
        from singlemongo.selection import READ, Criteria, select
        from singlemongo.read_preferences import to_core
        core = to_core(read_preference)
        criteria = Criteria(READ, core) if core is not None else Criteria(READ)
        return bool(select(self, criteria).in_window)

    def has_writable_server(self):
        """Whether a write could be served now."""
        from singlemongo.selection import WRITE, Criteria, select
        return bool(select(self, Criteria(WRITE)).in_window)

    def summary(self):
        """One line per server, for error messages and the CLI."""
        lines = [f"topology type {self.topology_type}" + (
            f", replica set {self.set_name!r}" if self.set_name else "")]
        for sd in self.servers.values():
            rtt = f", rtt {sd.round_trip_time * 1000:.1f} ms" if sd.round_trip_time is not None else ""
            err = f", last error: {sd.error}" if sd.error else ""
            lines.append(f"  {format_address(sd.address)}: {sd.server_type}{rtt}{err}")
        return "\n".join(lines)


def _verify_set_name_single(work, sd):
    # "Verifying setName with TopologyType Single".
    if work.set_name is not None and sd.server_type is not ServerType.UNKNOWN \
            and sd.set_name != work.set_name:
        work.servers[sd.address] = ServerDescription.unknown(
            sd.address, f"replica set name mismatch: expected {work.set_name!r}, server "
                        f"{format_address(sd.address)} reports {sd.set_name!r}")


_NOT_CHECKED = frozenset({ServerType.UNKNOWN, ServerType.POSSIBLE_PRIMARY,
                          ServerType.LOAD_BALANCER})


def _compatibility(servers):
    # "Checking wire protocol compatibility".
    for sd in servers:
        # A load balancer's wire versions arrive with each connection's handshake.
        if sd.server_type in _NOT_CHECKED:
            continue
        if (sd.min_wire_version or 0) > MAX_SUPPORTED_WIRE_VERSION:
            where = format_address(sd.address)
            return False, (f"Server at {where} requires wire version {sd.min_wire_version}, but "
                           f"this version of {DRIVER_NAME} only supports up to "
                           f"{MAX_SUPPORTED_WIRE_VERSION}.")
        if (sd.max_wire_version or 0) < MIN_SUPPORTED_WIRE_VERSION:
            where = format_address(sd.address)
            return False, (f"Server at {where} reports wire version {sd.max_wire_version}, but "
                           f"this version of {DRIVER_NAME} requires at least "
                           f"{MIN_SUPPORTED_WIRE_VERSION} (MongoDB {MIN_SUPPORTED_SERVER_VERSION}).")
    return True, None


def _session_timeout(servers):
    # "Logical Session Timeout": the smallest among data-bearing servers; any null wins.
    values = [sd.logical_session_timeout_minutes for sd in servers if sd.server_type in DATA_BEARING]
    if not values or any(v is None for v in values):
        return None
    return min(values)


# ----- the TopologyType table and its actions (SDAM, "TopologyType table", "Actions") -----

# Makes a Working copy the TopologyDescription it stands for (the record's __setattr__
# refuses every field).
_seal = object.__setattr__


# A plain class, not a record: a one-off makes this class, and a record class costs 0.1 M
# instructions more to make.
class Working:
    """The mutable copy of a description that the table's actions change; then sealed: made
    the new TopologyDescription itself (``_finish``). Its fields are the record's, in order
    (a test compares them), and it has no slots: the two classes share a layout."""

    def __init__(self, topology_type: T, servers: dict, set_name: Optional[str],
                 max_set_version: Optional[int], max_election_id: Any, seeds: tuple) -> None:
        self.topology_type, self.servers, self.set_name = topology_type, servers, set_name
        self.max_set_version, self.max_election_id = max_set_version, max_election_id
        self.seeds = seeds

    @classmethod
    def of(cls, td):
        # copy() is the dict's own (a table copy); dict() of the proxy would look up each key.
        return cls(td.topology_type, td.servers.copy(), td.set_name, td.max_set_version,
                   td.max_election_id, td.seeds)


def no_op(work, sd):
    pass


def remove(work, sd):
    work.servers.pop(sd.address, None)


def check_if_has_primary(work, sd=None):
    has_primary = any(s.server_type is S.RS_PRIMARY for s in work.servers.values())
    work.topology_type = T.REPLICA_SET_WITH_PRIMARY if has_primary else T.REPLICA_SET_NO_PRIMARY


def set_type(topology_type):
    def action(work, sd):
        work.topology_type = topology_type
    action.__name__ = f"set_type_{topology_type.name.lower()}"
    return action


def update_unknown_with_standalone(work, sd):
    if sd.address not in work.servers:
        return
    if len(work.seeds) == 1:
        work.topology_type = T.SINGLE
    else:
        remove(work, sd)


def _add_hosts(work, sd):
    for address in sd.all_hosts:
        if address not in work.servers:
            work.servers[address] = ServerDescription.unknown(address)


def _mark_possible_primary(work, sd):
    if sd.primary is not None:
        current = work.servers.get(sd.primary)
        if current is not None and current.server_type is S.UNKNOWN:
            work.servers[sd.primary] = current.with_type(S.POSSIBLE_PRIMARY)


def _adopt_set_name(work, sd):
    """Record the set name, or remove a member of another set; False if it was removed."""
    if work.set_name is None:
        work.set_name = sd.set_name
    elif work.set_name != sd.set_name:
        remove(work, sd)
        return False
    return True


def update_rs_without_primary(work, sd):
    if sd.address not in work.servers or not _adopt_set_name(work, sd):
        return
    _add_hosts(work, sd)
    _mark_possible_primary(work, sd)
    if sd.me is not None and sd.address != sd.me:
        remove(work, sd)


def update_rs_with_primary_from_member(work, sd):
    if sd.address not in work.servers:
        return
    if work.set_name != sd.set_name or (sd.me is not None and sd.address != sd.me):
        remove(work, sd)
        check_if_has_primary(work)
        return
    for server in work.servers.values():  # a loop, not any(): each member's update asks
        if server.server_type is S.RS_PRIMARY:
            break
    else:
        work.topology_type = T.REPLICA_SET_NO_PRIMARY
        _mark_possible_primary(work, sd)


def _key(value):
    # Null electionId / setVersion compare less than any value.
    return (0,) if value is None else (1, value)


def _is_stale_primary(work, sd):
    """'Using electionId and setVersion to detect stale primaries'; updates the maxima if not."""
    if (sd.max_wire_version or 0) >= 17:  # MongoDB 6.0+: electionId first, then setVersion.
        newer = _key(sd.election_id) > _key(work.max_election_id) or (
            sd.election_id == work.max_election_id
            and _key(sd.set_version) >= _key(work.max_set_version))
        if not newer:
            return True
        work.max_election_id, work.max_set_version = sd.election_id, sd.set_version
        return False
    if sd.set_version is not None and sd.election_id is not None:
        if work.max_set_version is not None and work.max_election_id is not None and (
                work.max_set_version > sd.set_version or (
                    work.max_set_version == sd.set_version
                    and work.max_election_id > sd.election_id)):
            return True
        work.max_election_id = sd.election_id
    if sd.set_version is not None and (
            work.max_set_version is None or sd.set_version > work.max_set_version):
        work.max_set_version = sd.set_version
    return False


def update_rs_from_primary(work, sd):
    if sd.address not in work.servers:
        return
    if not _adopt_set_name(work, sd):
        check_if_has_primary(work)
        return
    if _is_stale_primary(work, sd):
        work.servers[sd.address] = ServerDescription.unknown(
            sd.address,
            f"primary marked stale due to electionId/setVersion mismatch, "
            f"({sd.election_id}, {sd.set_version}) is stale compared to "
            f"({work.max_election_id}, {work.max_set_version})")
        check_if_has_primary(work)
        return
    for address, other in list(work.servers.items()):
        if address != sd.address and other.server_type is S.RS_PRIMARY:
            work.servers[address] = ServerDescription.unknown(
                address, f"primary marked stale due to discovery of newer primary "
                         f"{format_address(sd.address)}")
    _add_hosts(work, sd)
    members = set(sd.all_hosts)
    for address in list(work.servers):
        if address not in members:
            del work.servers[address]
    check_if_has_primary(work)


def _record_set_name_then(action):
    def run(work, sd):
        work.topology_type = T.REPLICA_SET_NO_PRIMARY
        action(work, sd)
    run.__name__ = f"set_type_replica_set_no_primary_then_{action.__name__}"
    return run


_TO_RS_NO_PRIMARY = _record_set_name_then(update_rs_without_primary)
_TO_RS_WITH_PRIMARY = (set_type(T.REPLICA_SET_WITH_PRIMARY), update_rs_from_primary)

# Rows: the new ServerDescription's type; columns: the current TopologyType.
_TABLE: dict[Any, dict[Any, tuple[Any, ...]]] = {
    S.UNKNOWN: {T.UNKNOWN: (no_op,), T.SHARDED: (no_op,), T.REPLICA_SET_NO_PRIMARY: (no_op,),
                T.REPLICA_SET_WITH_PRIMARY: (check_if_has_primary,)},
    S.STANDALONE: {T.UNKNOWN: (update_unknown_with_standalone,), T.SHARDED: (remove,),
                   T.REPLICA_SET_NO_PRIMARY: (remove,),
                   T.REPLICA_SET_WITH_PRIMARY: (remove, check_if_has_primary)},
    S.MONGOS: {T.UNKNOWN: (set_type(T.SHARDED),), T.SHARDED: (no_op,),
               T.REPLICA_SET_NO_PRIMARY: (remove,),
               T.REPLICA_SET_WITH_PRIMARY: (remove, check_if_has_primary)},
    S.RS_PRIMARY: {T.UNKNOWN: _TO_RS_WITH_PRIMARY, T.SHARDED: (remove,),
                   T.REPLICA_SET_NO_PRIMARY: _TO_RS_WITH_PRIMARY,
                   T.REPLICA_SET_WITH_PRIMARY: (update_rs_from_primary,)},
    S.RS_GHOST: {T.UNKNOWN: (no_op,), T.SHARDED: (remove,), T.REPLICA_SET_NO_PRIMARY: (no_op,),
                 T.REPLICA_SET_WITH_PRIMARY: (check_if_has_primary,)},
}
for _member in (S.RS_SECONDARY, S.RS_ARBITER, S.RS_OTHER):
    _TABLE[_member] = {T.UNKNOWN: (_TO_RS_NO_PRIMARY,), T.SHARDED: (remove,),
                       T.REPLICA_SET_NO_PRIMARY: (update_rs_without_primary,),
                       T.REPLICA_SET_WITH_PRIMARY: (update_rs_with_primary_from_member,)}
# A PossiblePrimary or LoadBalancer description never arrives from a check in these
# topologies; treat it like Unknown so the table is total.
_TABLE[S.POSSIBLE_PRIMARY] = _TABLE[S.UNKNOWN]
_TABLE[S.LOAD_BALANCER] = _TABLE[S.UNKNOWN]

TRANSITIONS = {(topology_type, server_type): actions
               for server_type, row in _TABLE.items() for topology_type, actions in row.items()}

# The server types whose description can remove a server other than its own: a primary's
# (updateRSFromPrimary removes the servers its reply does not list). Any other update
# removes at most the server checked, so Topology.apply tests only that one for a closed
# connection (a scan of n members applies n updates; a test runs every row of the table).
REMOVES_OTHERS = frozenset({ServerType.RS_PRIMARY})
