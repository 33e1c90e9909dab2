"""``pymongo.event_loggers``: listeners that log every event to the ``logging`` module with
PyMongo's texts and levels (programs and their log filters grep them): ``CommandLogger``,
``ServerLogger``, ``HeartbeatLogger``, ``TopologyLogger``, ``ConnectionPoolLogger``.

Each logger is a table: method name -> (level, message template over the event), rendered by
one function. A template's fields are the event's attributes (PyMongo's names)."""
from __future__ import annotations

import logging
from typing import Any, Callable, Mapping, Tuple

from singlemongo.monitoring.listeners import (CommandListener, ConnectionPoolListener,
                                    ServerHeartbeatListener, ServerListener, TopologyListener)

INFO, WARNING = logging.INFO, logging.WARNING
_Row = Tuple[int, Callable[[Any], str]]


def _table_logger(name: str, base: type, rows: Mapping[str, _Row], doc: str) -> type:
    """A listener class whose methods log their row's message at its level (the root logger,
    as PyMongo's do)."""
    def method(attr: str, level: int, message: Callable[[Any], str]) -> Callable[[Any, Any], None]:
        def log(self: Any, event: Any) -> None:
            text = message(event)
            if text is not None:
                logging.log(level, text)
        log.__name__ = log.__qualname__ = attr
        log.__doc__ = f"Log the event at {logging.getLevelName(level)}, in PyMongo's words."
        return log
    namespace: dict[str, Any] = {attr: method(attr, *row) for attr, row in rows.items()}
    namespace["__doc__"] = doc
    namespace["__module__"] = __name__
    return type(name, (base,), namespace)


def _reply_document(reply: Any) -> Any:
    """A heartbeat's reply as PyMongo's Hello shows it (``.document``), or the reply itself."""
    return getattr(reply, "document", reply)


def _server_type_change(event: Any) -> Any:
    old, new = event.previous_description, event.new_description
    if new.server_type == old.server_type:
        return None
    return (f"Server {event.server_address} changed type from {old.server_type_name} to "
            f"{new.server_type_name}")


def _topology_type_change(event: Any) -> Any:
    old, new = event.previous_description, event.new_description
    if new.topology_type == old.topology_type:
        return None
    return (f"Topology {event.topology_id} changed type from {old.topology_type_name} to "
            f"{new.topology_type_name}")


CommandLogger = _table_logger("CommandLogger", CommandListener, {
    "started": (INFO, lambda e: f"Command {e.command_name} with request id {e.request_id} "
                                f"started on server {e.connection_id}"),
    "succeeded": (INFO, lambda e: f"Command {e.command_name} with request id {e.request_id} "
                                  f"on server {e.connection_id} succeeded in "
                                  f"{e.duration_micros} microseconds"),
    "failed": (INFO, lambda e: f"Command {e.command_name} with request id {e.request_id} on "
                               f"server {e.connection_id} failed in {e.duration_micros} "
                               f"microseconds"),
}, "Logs each command's start, success and failure at INFO.")

ServerLogger = _table_logger("ServerLogger", ServerListener, {
    "opened": (INFO, lambda e: f"Server {e.server_address} added to topology "
                               f"{e.topology_id}"),
    "description_changed": (INFO, _server_type_change),
    "closed": (WARNING, lambda e: f"Server {e.server_address} removed from topology "
                                  f"{e.topology_id}"),
}, "Logs servers added and removed, and each change of a server's type.")

HeartbeatLogger = _table_logger("HeartbeatLogger", ServerHeartbeatListener, {
    "started": (INFO, lambda e: f"Heartbeat sent to server {e.connection_id}"),
    "succeeded": (INFO, lambda e: f"Heartbeat to server {e.connection_id} succeeded with "
                                  f"reply {_reply_document(e.reply)}"),
    "failed": (WARNING, lambda e: f"Heartbeat to server {e.connection_id} failed with error "
                                  f"{e.reply}"),
}, "Logs each server check: sent and succeeded at INFO, failed at WARNING.")

ConnectionPoolLogger = _table_logger("ConnectionPoolLogger", ConnectionPoolListener, {
    "pool_created": (INFO, lambda e: f"[pool {e.address}] pool created"),
    "pool_ready": (INFO, lambda e: f"[pool {e.address}] pool ready"),
    "pool_cleared": (INFO, lambda e: f"[pool {e.address}] pool cleared"),
    "pool_closed": (INFO, lambda e: f"[pool {e.address}] pool closed"),
    "connection_created": (INFO, lambda e: f"[pool {e.address}][conn #{e.connection_id}] "
                                           f"connection created"),
    "connection_ready": (INFO, lambda e: f"[pool {e.address}][conn #{e.connection_id}] "
                                         f"connection setup succeeded"),
    "connection_closed": (INFO, lambda e: f"[pool {e.address}][conn #{e.connection_id}] "
                                          f'connection closed, reason: "{e.reason}"'),
    "connection_check_out_started": (INFO, lambda e: f"[pool {e.address}] connection check "
                                                     f"out started"),
    "connection_check_out_failed": (INFO, lambda e: f"[pool {e.address}] connection check "
                                                    f"out failed, reason: {e.reason}"),
    "connection_checked_out": (INFO, lambda e: f"[pool {e.address}][conn #{e.connection_id}] "
                                               f"connection checked out of pool"),
    "connection_checked_in": (INFO, lambda e: f"[pool {e.address}][conn #{e.connection_id}] "
                                              f"connection checked into pool"),
}, "Logs every pool and connection event at INFO.")


class TopologyLogger(TopologyListener):
    """Logs the topology's opening, each change (its type's, at INFO) and closing; warns when
    a change leaves no writable or no readable server."""

    def opened(self, event: Any) -> None:
        logging.info(f"Topology with id {event.topology_id} opened")

    def description_changed(self, event: Any) -> None:
        logging.info(f"Topology description updated for topology id {event.topology_id}")
        change = _topology_type_change(event)
        if change is not None:
            logging.info(change)
        if not event.new_description.has_writable_server():
            logging.warning("No writable servers available.")
        if not event.new_description.has_readable_server():
            logging.warning("No readable servers available.")

    def closed(self, event: Any) -> None:
        logging.info(f"Topology with id {event.topology_id} closed")
