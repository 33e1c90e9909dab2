"""The connection pool's events (CMAP's names, PyMongo's classes and signatures).

singlemongo has one connection per server, shared by its checks and the operations; these
events describe it as a pool holding that one connection (``engine/cmap_events.py`` says when each
is published). They are published only to clients made with a listener that takes them.
"""
from typing import Any, Optional

from singlemongo.records import dataclass


class ConnectionClosedReason:
    """The ``reason`` of a ConnectionClosedEvent."""
    STALE = "stale"
    IDLE = "idle"
    ERROR = "error"
    POOL_CLOSED = "poolClosed"


class ConnectionCheckOutFailedReason:
    """The ``reason`` of a ConnectionCheckOutFailedEvent."""
    TIMEOUT = "timeout"
    POOL_CLOSED = "poolClosed"
    CONN_ERROR = "connectionError"


class _PoolEvent:
    """Base class of the pool events (as PyMongo's hierarchy: ``isinstance`` filters)."""

    __slots__ = ()


class _ConnectionEvent:
    """Base class of the connection events."""

    __slots__ = ()


@dataclass(frozen=True)
class PoolClearedEvent(_PoolEvent):
    """The connection to ``address`` was cleared (its generation bumped)."""
    address: Any
    service_id: Any = None
    interrupt_connections: bool = False


@dataclass(frozen=True)
class PoolCreatedEvent(_PoolEvent):
    """A server's pool was created."""
    address: Any
    options: dict


@dataclass(frozen=True)
class PoolReadyEvent(_PoolEvent):
    """A server's pool was marked ready."""
    address: Any


@dataclass(frozen=True)
class PoolClosedEvent(_PoolEvent):
    """A server's pool was closed."""
    address: Any


@dataclass(frozen=True)
class ConnectionCreatedEvent(_ConnectionEvent):
    """A connection was created."""
    address: Any
    connection_id: int


@dataclass(frozen=True)
class ConnectionReadyEvent(_ConnectionEvent):
    """A connection finished its handshake."""
    address: Any
    connection_id: int
    duration: Optional[float]


@dataclass(frozen=True)
class ConnectionClosedEvent(_ConnectionEvent):
    """A connection was closed, for a ConnectionClosedReason."""
    address: Any
    connection_id: int
    reason: str


@dataclass(frozen=True)
class ConnectionCheckOutStartedEvent(_ConnectionEvent):
    """An operation began to check a connection out."""
    address: Any


@dataclass(frozen=True)
class ConnectionCheckOutFailedEvent(_ConnectionEvent):
    """A check-out failed, for a ConnectionCheckOutFailedReason."""
    address: Any
    reason: str
    duration: Optional[float]
    connection_id: int = 0  # PyMongo's attribute; no connection was checked out


@dataclass(frozen=True)
class ConnectionCheckedOutEvent(_ConnectionEvent):
    """A connection was checked out."""
    address: Any
    connection_id: int
    duration: Optional[float]


@dataclass(frozen=True)
class ConnectionCheckedInEvent(_ConnectionEvent):
    """A connection was checked back in."""
    address: Any
    connection_id: int
