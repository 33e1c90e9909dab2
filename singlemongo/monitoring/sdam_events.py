"""SDAM monitoring events, and the pure function that derives them from two descriptions.

SDAM monitoring spec order: a server's description change, then servers opened or closed by
the change, then the topology description change. Nothing is published when a check leaves
the server description equal ("Server Description Equality") and the server set unchanged.
"""
from singlemongo.records import dataclass
from typing import Any

from singlemongo.sdam.server_description import ServerDescription, TopologyType
from singlemongo.sdam.topology_description import TopologyDescription


class TopologyEvent:
    """Base class of the topology events (``pymongo.monitoring.TopologyEvent``)."""

    __slots__ = ()

    def __repr__(self):
        return f"<{type(self).__name__} topology_id: {self.topology_id}>"


class _ServerEvent:
    """Base class of the server events: ``server_address`` and ``topology_id``."""

    __slots__ = ()

    @property
    def server_address(self):
        """The server's (host, port), as PyMongo names it."""
        return self.address

    def __repr__(self):
        return f"<{type(self).__name__} {self.address} topology_id: {self.topology_id}>"


# Each event takes PyMongo's constructor arguments in PyMongo's order, so a program that
# builds one (a test of its own listener) builds it the same way with either driver.
@dataclass(frozen=True)
class TopologyOpenedEvent(TopologyEvent):
    topology_id: Any
    __repr__ = TopologyEvent.__repr__  # a record's own repr is not PyMongo's


TopologyOpeningEvent = TopologyOpenedEvent  # the SDAM monitoring spec's name


@dataclass(frozen=True)
class TopologyClosedEvent(TopologyEvent):
    topology_id: Any
    __repr__ = TopologyEvent.__repr__  # a record's own repr is not PyMongo's


@dataclass(frozen=True)
class TopologyDescriptionChangedEvent(TopologyEvent):
    previous_description: TopologyDescription
    new_description: TopologyDescription
    topology_id: Any

    def __repr__(self):
        return (f"<{type(self).__name__} topology_id: {self.topology_id} changed from: "
                f"{self.previous_description}, to: {self.new_description}>")


@dataclass(frozen=True)
class ServerOpeningEvent(_ServerEvent):
    address: Any
    topology_id: Any
    __repr__ = _ServerEvent.__repr__  # a record's own repr is not PyMongo's


@dataclass(frozen=True)
class ServerClosedEvent(_ServerEvent):
    address: Any
    topology_id: Any
    __repr__ = _ServerEvent.__repr__  # a record's own repr is not PyMongo's


@dataclass(frozen=True)
class ServerDescriptionChangedEvent(_ServerEvent):
    previous_description: ServerDescription
    new_description: ServerDescription
    address: Any
    topology_id: Any

    def __repr__(self):
        return (f"<{type(self).__name__} {self.address} changed from: "
                f"{self.previous_description}, to: {self.new_description}>")


def empty_description():
    return TopologyDescription(TopologyType.UNKNOWN, {})


def opening_events(topology_id, initial):
    """What a topology publishes when it opens (with the first selection, never a constructor)."""
    events = [TopologyOpenedEvent(topology_id),
              TopologyDescriptionChangedEvent(empty_description(), initial, topology_id)]
    events.extend(ServerOpeningEvent(a, topology_id) for a in initial.servers)
    return events


def closing_events(topology_id, current):
    """What a topology publishes when it closes. Load balancer spec, "Monitoring": in
    load-balanced mode exactly ServerClosedEvent then TopologyClosedEvent."""
    events = [ServerClosedEvent(a, topology_id) for a in current.servers]
    if current.topology_type is not TopologyType.LOAD_BALANCED:
        events.append(TopologyDescriptionChangedEvent(current, empty_description(), topology_id))
    events.append(TopologyClosedEvent(topology_id))
    return events


def change_events(topology_id, old, new, address):
    """Events for applying one server description at ``address`` that turned ``old`` into ``new``."""
    before, after = old.servers.get(address), new.servers.get(address)
    added = [a for a in new.servers if a not in old.servers]
    removed = [a for a in old.servers if a not in new.servers]
    events = []
    if before is not None and after is not None and before != after:
        events.append(ServerDescriptionChangedEvent(before, after, address, topology_id))
    events.extend(ServerOpeningEvent(a, topology_id) for a in added)
    events.extend(ServerClosedEvent(a, topology_id) for a in removed)
    if events or old != new:
        events.append(TopologyDescriptionChangedEvent(old, new, topology_id))
    return events


class _ServerHeartbeatEvent:
    """Base class of the heartbeat events: ``connection_id`` (the server's address) and
    ``awaited`` (always False: singlemongo's checks are never awaited)."""

    __slots__ = ()

    def __repr__(self):
        return f"<{type(self).__name__} {self.connection_id} awaited: {self.awaited}>"


@dataclass(frozen=True)
class ServerHeartbeatStartedEvent(_ServerHeartbeatEvent):
    connection_id: Any
    awaited: bool = False
    __repr__ = _ServerHeartbeatEvent.__repr__  # a record's own repr is not PyMongo's


@dataclass(frozen=True)
class ServerHeartbeatSucceededEvent(_ServerHeartbeatEvent):
    duration: float
    reply: Any
    connection_id: Any
    awaited: bool = False

    def __repr__(self):
        return (f"<{type(self).__name__} {self.connection_id} duration: {self.duration}, "
                f"awaited: {self.awaited}, reply: {self.reply}>")


@dataclass(frozen=True)
class ServerHeartbeatFailedEvent(_ServerHeartbeatEvent):
    duration: float
    reply: Any  # the exception (PyMongo's name); ``failure`` in the spec
    connection_id: Any
    awaited: bool = False

    @property
    def failure(self):
        """What failed the check (the SDAM monitoring spec's name for ``reply``)."""
        return self.reply

    def __repr__(self):
        return (f"<{type(self).__name__} {self.connection_id} duration: {self.duration}, "
                f"awaited: {self.awaited}, reply: {self.reply!r}>")
