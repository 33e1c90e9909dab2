"""Event listeners as PyMongo spells them (``pymongo.monitoring``): subclass CommandListener,
ServerListener, ServerHeartbeatListener, TopologyListener or ConnectionPoolListener and pass
instances in ``event_listeners``. A plain callable gets every event. Listeners written for
PyMongo (subclasses of ``pymongo.monitoring``'s classes) work unchanged: they are recognised by
their base classes' names."""
from __future__ import annotations

from collections import namedtuple
from typing import Any


class _EventListener:
    """Base of the listener classes."""


class CommandListener(_EventListener):
    """started(CommandStartedEvent), succeeded(CommandSucceededEvent), failed(...)."""

    def started(self, event: Any) -> None:
        """A command was sent."""

    def succeeded(self, event: Any) -> None:
        """A command succeeded."""

    def failed(self, event: Any) -> None:
        """A command failed."""


class ServerHeartbeatListener(_EventListener):
    """started, succeeded and failed ServerHeartbeat events (one per server check)."""

    def started(self, event: Any) -> None:
        """A check began."""

    def succeeded(self, event: Any) -> None:
        """A check succeeded."""

    def failed(self, event: Any) -> None:
        """A check failed."""


class ServerListener(_EventListener):
    """opened, description_changed and closed events of each server."""

    def opened(self, event: Any) -> None:
        """A server was added to the topology."""

    def description_changed(self, event: Any) -> None:
        """A server's description changed."""

    def closed(self, event: Any) -> None:
        """A server was removed from the topology."""


class TopologyListener(_EventListener):
    """opened, description_changed and closed events of the topology."""

    def opened(self, event: Any) -> None:
        """The topology opened (with the first operation)."""

    def description_changed(self, event: Any) -> None:
        """The topology's description changed."""

    def closed(self, event: Any) -> None:
        """The client was closed."""


class ConnectionPoolListener(_EventListener):
    """Connection pool events: the pool of one connection each server has (docs:
    observability), with PyMongo's methods."""

    def pool_created(self, event: Any) -> None:
        """A pool was created."""

    def pool_ready(self, event: Any) -> None:
        """A pool was marked ready."""

    def pool_cleared(self, event: Any) -> None:
        """A pool was cleared (its connection generation bumped)."""

    def pool_closed(self, event: Any) -> None:
        """A pool was closed."""

    def connection_created(self, event: Any) -> None:
        """A connection was created."""

    def connection_ready(self, event: Any) -> None:
        """A connection is ready."""

    def connection_closed(self, event: Any) -> None:
        """A connection was closed."""

    def connection_check_out_started(self, event: Any) -> None:
        """A check-out began."""

    def connection_check_out_failed(self, event: Any) -> None:
        """A check-out failed."""

    def connection_checked_out(self, event: Any) -> None:
        """A connection was checked out."""

    def connection_checked_in(self, event: Any) -> None:
        """A connection was checked in."""


# Event class name -> (listener base class name, method).
_ROUTES = {
    "CommandStartedEvent": ("CommandListener", "started"),
    "CommandSucceededEvent": ("CommandListener", "succeeded"),
    "CommandFailedEvent": ("CommandListener", "failed"),
    "ServerHeartbeatStartedEvent": ("ServerHeartbeatListener", "started"),
    "ServerHeartbeatSucceededEvent": ("ServerHeartbeatListener", "succeeded"),
    "ServerHeartbeatFailedEvent": ("ServerHeartbeatListener", "failed"),
    "ServerOpeningEvent": ("ServerListener", "opened"),
    "ServerDescriptionChangedEvent": ("ServerListener", "description_changed"),
    "ServerClosedEvent": ("ServerListener", "closed"),
    "TopologyOpenedEvent": ("TopologyListener", "opened"),
    "TopologyDescriptionChangedEvent": ("TopologyListener", "description_changed"),
    "TopologyClosedEvent": ("TopologyListener", "closed"),
    **{name: ("ConnectionPoolListener", method) for name, method in (
        ("PoolCreatedEvent", "pool_created"), ("PoolReadyEvent", "pool_ready"),
        ("PoolClearedEvent", "pool_cleared"), ("PoolClosedEvent", "pool_closed"),
        ("ConnectionCreatedEvent", "connection_created"),
        ("ConnectionReadyEvent", "connection_ready"),
        ("ConnectionClosedEvent", "connection_closed"),
        ("ConnectionCheckOutStartedEvent", "connection_check_out_started"),
        ("ConnectionCheckOutFailedEvent", "connection_check_out_failed"),
        ("ConnectionCheckedOutEvent", "connection_checked_out"),
        ("ConnectionCheckedInEvent", "connection_checked_in"))},
}
_KINDS = frozenset(kind for kind, _ in _ROUTES.values())


# PyMongo's ``monitoring._LISTENERS`` shape: one list per kind.
_Listeners = namedtuple("_Listeners", ("command_listeners", "server_listeners",
                                       "server_heartbeat_listeners", "topology_listeners",
                                       "cmap_listeners"))


def _kinds(listener: Any) -> frozenset[str]:
    return frozenset(klass.__name__ for klass in type(listener).__mro__) & _KINDS


def wants_pool_events(listeners: Any) -> bool:
    """Whether any of ``listeners`` takes connection pool events (a ConnectionPoolListener,
    or a plain callable, which gets every event)."""
    kinds = [_kinds(listener) for listener in listeners]
    return any(not k or "ConnectionPoolListener" in k for k in kinds)


def deliver(listener: Any, event: Any) -> None:
    """Give ``event`` to ``listener``: the matching method of a listener class, or the whole
    event to a plain callable."""
    kinds = _kinds(listener)
    if not kinds:
        listener(event)
        return
    route = _ROUTES.get(type(event).__name__)
    if route is not None and route[0] in kinds:
        getattr(listener, route[1])(event)
