"""The SDAM TopologyType table and its actions (SDAM, "TopologyType table" and "Actions").

Each action takes a mutable ``Working`` copy of the description and the new
ServerDescription; ``TopologyDescription.update`` runs the actions the table lists in order.
"""
from ..records import dataclass
from typing import Any, Optional

from .server_description import ServerDescription
from .address import format_address
from .server_type import ServerType as S, TopologyType as T


@dataclass
class Working:
    topology_type: T
    servers: dict
    set_name: Optional[str]
    max_set_version: Optional[int]
    max_election_id: Any
    seeds: tuple

    @classmethod
    def of(cls, td):
        return cls(td.topology_type, dict(td.servers), td.set_name, td.max_set_version,
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
            work.servers[address] = ServerDescription(address)


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
    if not any(s.server_type is S.RS_PRIMARY for s in work.servers.values()):
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
