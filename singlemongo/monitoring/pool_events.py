"""The connection pool's events (CMAP's names, PyMongo's classes and signatures).

Only ``PoolClearedEvent`` is published: a server's connection generation is bumped, its
connection closed and no connection made before it used again. The others describe a pool of
connections checked out and in by concurrent operations, which a driver with one socket per
server shared by its checks does not have. They exist so that programs written for PyMongo
import them, annotate with them and test ``isinstance`` against them unchanged; a
``ConnectionPoolListener`` gets ``pool_cleared`` calls only.
"""
from typing import Any, Optional

from ..records import dataclass


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


@dataclass(frozen=True)
class PoolClearedEvent:
    """The connection to ``address`` was cleared (its generation bumped)."""
    address: Any
    service_id: Any = None
    interrupt_connections: bool = False


@dataclass(frozen=True)
class PoolCreatedEvent:
    """A server's pool was created (not published)."""
    address: Any
    options: dict


@dataclass(frozen=True)
class PoolReadyEvent:
    """A server's pool was marked ready (not published)."""
    address: Any


@dataclass(frozen=True)
class PoolClosedEvent:
    """A server's pool was closed (not published)."""
    address: Any


@dataclass(frozen=True)
class ConnectionCreatedEvent:
    """A connection was created (not published)."""
    address: Any
    connection_id: int


@dataclass(frozen=True)
class ConnectionReadyEvent:
    """A connection finished its handshake (not published)."""
    address: Any
    connection_id: int
    duration: Optional[float]


@dataclass(frozen=True)
class ConnectionClosedEvent:
    """A connection was closed, for a ConnectionClosedReason (not published)."""
    address: Any
    connection_id: int
    reason: str


@dataclass(frozen=True)
class ConnectionCheckOutStartedEvent:
    """An operation began to check a connection out (not published)."""
    address: Any


@dataclass(frozen=True)
class ConnectionCheckOutFailedEvent:
    """A check-out failed, for a ConnectionCheckOutFailedReason (not published)."""
    address: Any
    reason: str
    duration: Optional[float]
    connection_id: int = 0  # PyMongo's attribute; no connection was checked out


@dataclass(frozen=True)
class ConnectionCheckedOutEvent:
    """A connection was checked out (not published)."""
    address: Any
    connection_id: int
    duration: Optional[float]


@dataclass(frozen=True)
class ConnectionCheckedInEvent:
    """A connection was checked back in (not published)."""
    address: Any
    connection_id: int
