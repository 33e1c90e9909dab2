"""Implicit server sessions (driver sessions spec) and $clusterTime gossip.

A client keeps a LIFO pool of server sessions; one is checked out per operation (or cursor)
when the deployment supports sessions, and returned after. ``endSessions`` is sent at close,
and clients still open at interpreter exit are closed then, so that thousands of one-off
processes do not leave sessions behind on the server.
"""

import atexit
import weakref
TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Any

from bson import Binary
from bson.timestamp import Timestamp

from singlemongo.sdam.server_description import DATA_BEARING, TopologyType

END_SESSIONS_BATCH = 10_000


class ServerSession:
    def __init__(self, clock):
        self.lsid = {"id": Binary(clock.uuid4().bytes, 4)}
        self.last_use = clock.monotonic()
        self.txn_number = 0
        self.dirty = False

    def next_txn_number(self):
        self.txn_number += 1
        return self.txn_number


class SessionPool:
    def __init__(self, clock):
        self.clock = clock
        self._pool = []
        self.cluster_time = None
        self._cluster_key = None  # (time, inc) of cluster_time's Timestamp
        self._last_read = None  # the $clusterTime last read (the same reply is read twice)

    def supported(self, td):
        if td.topology_type is TopologyType.LOAD_BALANCED:
            return True
        return td.logical_session_timeout_minutes is not None

    def _expiring(self, session, timeout_minutes):
        # "Server Session Pool": discard sessions within a minute of timing out.
        age = self.clock.monotonic() - session.last_use
        return timeout_minutes is not None and not 0 <= age <= (timeout_minutes - 1) * 60

    def acquire(self, timeout_minutes):
        while self._pool:
            session = self._pool.pop()
            if not self._expiring(session, timeout_minutes):
                return session
        return ServerSession(self.clock)

    def release(self, session, timeout_minutes):
        session.last_use = self.clock.monotonic()
        if session.dirty or self._expiring(session, timeout_minutes):
            return
        self._pool.append(session)

    def drain_ids(self):
        ids = [s.lsid for s in self._pool]
        self._pool.clear()
        return ids

    def advance_cluster_time(self, reply):
        """Gossip the newest $clusterTime (sessions spec, "Gossipping the cluster time"); one
        that is not {clusterTime: Timestamp, ...} is ignored, never sent back to a server."""
        new = reply.get("$clusterTime")
        if new is self._last_read:  # the same reply again (a handshake is also a check)
            return
        self._last_read = new
        stamp = new.get("clusterTime") if isinstance(new, dict) else None
        if not isinstance(stamp, Timestamp):
            return
        # Compared as (time, inc), the newest's kept: Timestamp's own comparison is Python,
        # and every reply of a scan carries a $clusterTime.
        key = (stamp.time, stamp.inc)
        if self.cluster_time is None or key > self._cluster_key:
            self.cluster_time, self._cluster_key = new, key


# By identity: a WeakSet holds by equality, and two clients with the same seeds are equal
# (PyMongo's __eq__), so the second would never be registered. An entry leaves when its
# client is collected, before its id can be reused.
_open_clients: "weakref.WeakValueDictionary[int, Any]" = weakref.WeakValueDictionary()


def register_for_exit(client):
    _open_clients[id(client)] = client


def unregister(client):
    _open_clients.pop(id(client), None)


@atexit.register
def _close_open_clients():
    # Bounded: close sends endSessions only on connections already open, each with
    # connectTimeoutMS as its socket timeout, and never scans or connects.
    for client in list(_open_clients.values()):
        try:
            client.close()
        except Exception:
            pass


def _end_sessions_connection(topo):
    """PyMongo's choice, primaryPreferred: the primary's open connection, else the first open
    one to a data-bearing server, else None. One pass, no sort: a 50-member one-off closes
    with 50 connections open."""
    servers = topo.description.servers
    chosen = None
    for address, conn in topo._connections.items():
        sd = servers.get(address)
        if conn.closed or sd is None or sd.server_type not in DATA_BEARING:
            continue
        if sd.is_writable:
            return conn
        if chosen is None:
            chosen = conn
    return chosen


def end_sessions(topo):
    """Send endSessions for the client's pooled server sessions on a connection already
    open (never scan or connect to do it); moreToCome, so closing a one-off client costs no
    round trip. Monitored as every command; a network error is ignored."""
    from singlemongo.errors import ConnectionFailure
    from singlemongo.engine.handshake import api_fields
    ids = topo.sessions.drain_ids()
    if not ids or topo._description is None:
        return
    conn = _end_sessions_connection(topo)
    if conn is None:
        return
    timeout = topo.options.connect_timeout_ms / 1000.0 or None
    if topo.pool is not None:  # pool events, as every command's (engine/cmap_events.py)
        topo.pool.check_out_existing(conn, topo.clock)
    try:
        for i in range(0, len(ids), END_SESSIONS_BATCH):
            topo.events.command(topo.clock, conn, "admin", {
                "endSessions": ids[i:i + END_SESSIONS_BATCH], **api_fields(topo.options)},
                timeout, unacknowledged=True)
    except ConnectionFailure:
        pass
    finally:
        if topo.pool is not None:
            topo.pool.checked_in(conn)
