"""``pymongo.event_loggers``: listeners that log every event to the ``logging`` module, as
PyMongo's example listeners do (``CommandLogger``, ``ServerLogger``, ``HeartbeatLogger``,
``TopologyLogger``, ``ConnectionPoolLogger``)."""
from __future__ import annotations

import logging
from typing import Any

from ..monitoring.listeners import (CommandListener, ConnectionPoolListener,
                                    ServerHeartbeatListener, ServerListener, TopologyListener)


def _log(kind: str, what: str, event: Any) -> None:
    logging.info("%s %s: %r", kind, what, event)


class CommandLogger(CommandListener):
    """Logs each command's start, success and failure at INFO."""

    def started(self, event: Any) -> None:
        _log("Command", "started", event)

    def succeeded(self, event: Any) -> None:
        _log("Command", "succeeded", event)

    def failed(self, event: Any) -> None:
        _log("Command", "failed", event)


class ServerLogger(ServerListener):
    """Logs servers opened, changed and closed at INFO."""

    def opened(self, event: Any) -> None:
        _log("Server", "opened", event)

    def description_changed(self, event: Any) -> None:
        _log("Server", "description changed", event)

    def closed(self, event: Any) -> None:
        _log("Server", "closed", event)


class HeartbeatLogger(ServerHeartbeatListener):
    """Logs each server check at INFO."""

    def started(self, event: Any) -> None:
        _log("Heartbeat", "started", event)

    def succeeded(self, event: Any) -> None:
        _log("Heartbeat", "succeeded", event)

    def failed(self, event: Any) -> None:
        _log("Heartbeat", "failed", event)


class TopologyLogger(TopologyListener):
    """Logs the topology's opening, changes and closing at INFO."""

    def opened(self, event: Any) -> None:
        _log("Topology", "opened", event)

    def description_changed(self, event: Any) -> None:
        _log("Topology", "description changed", event)

    def closed(self, event: Any) -> None:
        _log("Topology", "closed", event)


class ConnectionPoolLogger(ConnectionPoolListener):
    """Logs connection events at INFO (singlemongo publishes pool_cleared)."""

    def pool_cleared(self, event: Any) -> None:
        _log("Pool", "cleared", event)
