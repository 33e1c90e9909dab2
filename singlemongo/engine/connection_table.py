"""One connection per server: the table of open connections, each server's generation (CMAP's
pool generation, bumped when its "pool" is cleared) and the count of connections opened.
"""
from collections import defaultdict


class ConnectionTable:
    """The Topology's part that owns its connections; only the engine reads ``_connections``
    (the face asks ``cursor_connection``)."""

    def _init_table(self):
        self._connections = {}
        self.generations = defaultdict(int)
        self.connections_opened = 0

    def cursor_connection(self, address):
        """The open connection to ``address`` (where a cursor lives), or None."""
        return self._connections.get(address)

    def hold(self, address, conn):
        """``conn`` becomes the server's connection."""
        self._connections[address] = conn

    def forget(self, conn):
        """``conn`` is no longer its server's connection (if it still was)."""
        if self._connections.get(conn.address) is conn:
            del self._connections[conn.address]

    def close_connection(self, address, bump_generation=False, service_id=None,
                         reason="error", interrupt=False):
        """Close the server's connection (for CMAP's ConnectionClosedReason ``reason``); with
        ``bump_generation`` its pool is cleared first (connections from before are stale),
        so a listener sees PoolClearedEvent, then the stale connection's ConnectionClosed."""
        conn = self._connections.pop(address, None)
        if conn is not None:
            service_id = service_id or conn.service_id
        if bump_generation:
            self.clear_pool(address, service_id, interrupt)
        if conn is not None:
            if not conn.closed:
                conn.close_reason = "stale" if bump_generation else reason
            conn.close()

    def clear_pool(self, address, service_id=None, interrupt=False):
        """CMAP "clear": the generation bumped, PoolClearedEvent published (its
        interruptInUseConnections says whether a check timed out: server monitoring)."""
        self.generations[address] += 1
        if self.pool is not None:
            self.pool.cleared(address, service_id, self.options.load_balanced, interrupt)

    def _detach_all(self):
        """In a forked child: close only the child's file descriptors of the parent's
        connections (never shutting them down), and start a new table."""
        for conn in self._connections.values():
            conn.detach()
        self._connections = {}
        self.generations = defaultdict(int)

    def _close_all_quietly(self):
        """Close every socket: no events, nothing sent."""
        for conn in self._connections.values():
            conn.close()
        self._connections = {}
