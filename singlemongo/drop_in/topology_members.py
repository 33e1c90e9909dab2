"""PyMongo's Topology members that PyMongo's own test harness reads (its unified-format
runner, its session and read-preference tests): a compatibility shim, loaded only when such
code calls one (the methods of the same names on ``Topology``). See docs/coming-from-pymongo.md,
"Compatibility members"."""
from __future__ import annotations

from typing import Any, Optional


class _SelectedServer:
    """What PyMongo's Topology.select_server_by_address returns, as far as code reads it."""

    def __init__(self, description: Any, connection: Any) -> None:
        self.description = description
        self.connection = connection


def select_server_by_address(topology: Any, address: Any, operation: Optional[str] = None,
                             operation_id: Optional[int] = None) -> _SelectedServer:
    """The server at ``address`` if it is selectable now (PyMongo's Topology method, with its
    result's ``description``); ServerSelectionTimeoutError if not."""
    from singlemongo.selection import READ, Criteria, ReadPreference
    address = tuple(address)
    sd = topology.select_server(
        Criteria(READ, ReadPreference("nearest")), operation=str(operation or "command"),
        operation_id=operation_id,
        selector=lambda servers: [s for s in servers if s.address == address])
    return _SelectedServer(sd, topology.cursor_connection(sd.address))


def max_cluster_time(topology: Any) -> Any:
    """The greatest ``$clusterTime`` any reply has carried (PyMongo's Topology method;
    PyMongo's unified-format runner reads it)."""
    return topology.sessions.cluster_time

