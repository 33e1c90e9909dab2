"""SDAM monitoring events, and the pure function that derives them from two descriptions.

SDAM monitoring spec order: a server's description change, then servers opened or closed by
the change, then the topology description change. Nothing is published when a check leaves
the server description equal ("Server Description Equality") and the server set unchanged.
"""
from ..records import dataclass
from typing import Any

from .server_description import ServerDescription, TopologyType
from .topology_description import TopologyDescription


@dataclass(frozen=True)
class TopologyOpeningEvent:
    topology_id: Any


@dataclass(frozen=True)
class TopologyClosedEvent:
    topology_id: Any


@dataclass(frozen=True)
class TopologyDescriptionChangedEvent:
    topology_id: Any
    previous_description: TopologyDescription
    new_description: TopologyDescription


@dataclass(frozen=True)
class ServerOpeningEvent:
    topology_id: Any
    address: Any

    @property
    def server_address(self):
        """The server's (host, port), as PyMongo names it."""
        return self.address


@dataclass(frozen=True)
class ServerClosedEvent:
    topology_id: Any
    address: Any

    @property
    def server_address(self):
        """The server's (host, port), as PyMongo names it."""
        return self.address


@dataclass(frozen=True)
class ServerDescriptionChangedEvent:
    topology_id: Any
    address: Any

    @property
    def server_address(self):
        """The server's (host, port), as PyMongo names it."""
        return self.address
    previous_description: ServerDescription
    new_description: ServerDescription


def empty_description():
    return TopologyDescription(TopologyType.UNKNOWN, {})


def opening_events(topology_id, initial):
    """What a topology publishes when it opens (with the first selection, never a constructor)."""
    events = [TopologyOpeningEvent(topology_id),
              TopologyDescriptionChangedEvent(topology_id, empty_description(), initial)]
    events.extend(ServerOpeningEvent(topology_id, a) for a in initial.servers)
    return events


def closing_events(topology_id, current):
    """What a topology publishes when it closes. Load balancer spec, "Monitoring": in
    load-balanced mode exactly ServerClosedEvent then TopologyClosedEvent."""
    events = [ServerClosedEvent(topology_id, a) for a in current.servers]
    if current.topology_type is not TopologyType.LOAD_BALANCED:
        events.append(TopologyDescriptionChangedEvent(topology_id, current, empty_description()))
    events.append(TopologyClosedEvent(topology_id))
    return events


def change_events(topology_id, old, new, address):
    """Events for applying one server description at ``address`` that turned ``old`` into ``new``."""
    before, after = old.servers.get(address), new.servers.get(address)
    added = [a for a in new.servers if a not in old.servers]
    removed = [a for a in old.servers if a not in new.servers]
    events = []
    if before is not None and after is not None and before != after:
        events.append(ServerDescriptionChangedEvent(topology_id, address, before, after))
    events.extend(ServerOpeningEvent(topology_id, a) for a in added)
    events.extend(ServerClosedEvent(topology_id, a) for a in removed)
    if events or old != new:
        events.append(TopologyDescriptionChangedEvent(topology_id, old, new))
    return events


@dataclass(frozen=True)
class ServerHeartbeatStartedEvent:
    connection_id: Any
    awaited: bool = False


@dataclass(frozen=True)
class ServerHeartbeatSucceededEvent:
    connection_id: Any
    duration: float
    reply: Any
    awaited: bool = False


@dataclass(frozen=True)
class ServerHeartbeatFailedEvent:
    connection_id: Any
    duration: float
    failure: Any
    awaited: bool = False
