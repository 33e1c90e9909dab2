"""Event listeners as PyMongo spells them (``pymongo.monitoring``): subclass CommandListener,
ServerListener, ServerHeartbeatListener, TopologyListener or ConnectionPoolListener and pass
instances in ``event_listeners``. A plain callable gets every event. Listeners written for
PyMongo (subclasses of ``pymongo.monitoring``'s classes) work unchanged: they are recognised by
their base classes' names."""
from __future__ import annotations

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
    """Connection pool events. singlemongo publishes pool_cleared only (a server's connection
    generation was bumped); the other methods are PyMongo's, for listeners written for it."""

    def pool_created(self, event: Any) -> None:
        """A pool was created (not published)."""

    def pool_ready(self, event: Any) -> None:
        """A pool was marked ready (not published)."""

    def pool_cleared(self, event: Any) -> None:
        """The connection to a server was cleared."""

    def pool_closed(self, event: Any) -> None:
        """A pool was closed (not published)."""

    def connection_created(self, event: Any) -> None:
        """A connection was created (not published)."""

    def connection_ready(self, event: Any) -> None:
        """A connection is ready (not published)."""

    def connection_closed(self, event: Any) -> None:
        """A connection was closed (not published)."""

    def connection_check_out_started(self, event: Any) -> None:
        """A check-out began (not published)."""

    def connection_check_out_failed(self, event: Any) -> None:
        """A check-out failed (not published)."""

    def connection_checked_out(self, event: Any) -> None:
        """A connection was checked out (not published)."""

    def connection_checked_in(self, event: Any) -> None:
        """A connection was checked in (not published)."""


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
    "TopologyOpeningEvent": ("TopologyListener", "opened"),
    "TopologyDescriptionChangedEvent": ("TopologyListener", "description_changed"),
    "TopologyClosedEvent": ("TopologyListener", "closed"),
    "PoolClearedEvent": ("ConnectionPoolListener", "pool_cleared"),
}
_KINDS = frozenset(kind for kind, _ in _ROUTES.values())


def _kinds(listener: Any) -> frozenset[str]:
    return frozenset(klass.__name__ for klass in type(listener).__mro__) & _KINDS


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
