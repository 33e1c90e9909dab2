"""The one connection-pool event a single-socket driver has a real counterpart for.

``PoolClearedEvent`` (CMAP's name) is published when a server's connection generation is
bumped: its connection is closed and no connection made before is used again. The other CMAP
events describe a pool this driver does not have.
"""
from typing import Any

from ..records import dataclass


@dataclass(frozen=True)
class PoolClearedEvent:
    """The connection to ``address`` was cleared (its generation bumped)."""
    address: Any
    service_id: Any = None
    interrupt_in_use_connections: bool = False
