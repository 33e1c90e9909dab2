"""TopologyDescription and the pure SDAM update (SDAM, "Updating the TopologyDescription").

``TopologyDescription.update(server_description)`` returns a new description; the transitions
are the spec's TopologyType table, written as a dict keyed by (TopologyType, ServerType).
"""
from ..records import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Mapping, Optional, Tuple

from ..constants import (MAX_SUPPORTED_WIRE_VERSION, MIN_SUPPORTED_SERVER_VERSION,
                         MIN_SUPPORTED_WIRE_VERSION)
from .server_description import Address, ServerDescription, compare_topology_version
from .address import format_address
from .server_type import DATA_BEARING, ServerType, TopologyType
from .transitions import TRANSITIONS, Working

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

    @property
    def compatible(self) -> bool:
        """SDAM "Checking wire protocol compatibility": every known server's range overlaps
        the driver's."""
        return self._derived()[0]

    @property
    def compatibility_error(self) -> Optional[str]:
        return self._derived()[1]

    @property
    def logical_session_timeout_minutes(self) -> Optional[int]:
        return self._derived()[2]

    def _derived(self):
        derived = self.__dict__.get("_derived_values")
        if derived is None:
            derived = (*_compatibility(self.servers.values()),
                       _session_timeout(self.servers.values()))
            object.__setattr__(self, "_derived_values", derived)
        return derived

    @classmethod
    def initial(cls, seeds, replica_set=None, direct_connection=None, load_balanced=False):
        topology_type = initial_topology_type(direct_connection, replica_set, load_balanced)
        # In load-balanced mode the server starts Unknown too; the engine publishes the
        # LoadBalancer description at once, without I/O (load balancer spec, "Monitoring").
        servers = {a: ServerDescription(a) for a in seeds}
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
        return replace(self, topology_type=work.topology_type,
                       servers=MappingProxyType(work.servers), set_name=work.set_name,
                       max_set_version=work.max_set_version,
                       max_election_id=work.max_election_id)

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
        from ..selection.selector import READ, Criteria, select
        from ..read_preferences import to_core
        core = to_core(read_preference)
        criteria = Criteria(READ, core) if core is not None else Criteria(READ)
        return bool(select(self, criteria).in_window)

    def has_writable_server(self):
        """Whether a write could be served now."""
        from ..selection.selector import WRITE, Criteria, select
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
