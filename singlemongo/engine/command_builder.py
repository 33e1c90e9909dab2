"""The command an attempt sends, built from the request by pure functions: session fields,
$clusterTime, read concern and read preference (builders), maxTimeMS under timeoutMS and the
write concern it overrides (client-side operations timeout).
"""
from __future__ import annotations

from bson import Int64

from ..errors import NetworkTimeout
from ..selection import WRITE, effective, read_preference_for_op_msg


def build_command(req, sd, session, txn_number, *, api, cluster_time, description, step=None,
                  command=None, criteria=None):
    """The command to send for ``req`` to server ``sd``: the Stable API fields (``api``), the
    session and txnNumber, the transaction's or causal consistency's read concern, the newest
    $clusterTime known (``cluster_time``, or the explicit session's), and the read
    preference as OP_MSG carries it for this server in ``description``."""
    cmd = dict(req.command if command is None else command)
    cmd.update(api)
    if session is not None:
        cmd["lsid"] = session.lsid
    if txn_number is not None:
        cmd["txnNumber"] = Int64(txn_number)
    explicit = req.explicit_session
    if explicit is not None:
        cluster_time = newer_cluster_time(cluster_time, explicit.cluster_time)
        if step is not None:  # transactions spec, "Constructing commands within a transaction"
            step.apply(cmd, explicit._after_cluster_time() if step.first else None)
        else:
            after = explicit._read_concern_for(next(iter(cmd)))
            if after is not None:  # causal consistency spec, "afterClusterTime"
                cmd["readConcern"] = {**cmd.get("readConcern", {}), "afterClusterTime": after}
            snapshot = explicit._snapshot_read_concern(next(iter(cmd)), sd.max_wire_version or 0)
            if snapshot is not None:  # sessions spec, "Snapshot reads"
                cmd["readConcern"] = snapshot
    if cluster_time is not None:  # sessions spec, "Gossipping the cluster time": any server
        cmd["$clusterTime"] = cluster_time
    if req.is_read:
        criteria = effective(description, criteria or req.criteria)
        rp = read_preference_for_op_msg(description.topology_type, sd.server_type,
                                        criteria.read_preference, criteria.operation != WRITE)
        if rp is not None:
            cmd["$readPreference"] = rp
    return cmd


def newer_cluster_time(a, b):
    """The later of two $clusterTime documents (either may be None)."""
    if a is None or b is None:
        return a if b is None else b
    return b if b["clusterTime"] > a["clusterTime"] else a


# Client-side operations timeout, "Cursors": no maxTimeMS on getMore.
NO_MAX_TIME = frozenset({"getMore", "endSessions"})


def add_max_time(cmd, deadline, sd, send=True):
    """maxTimeMS: the time left less the server's round trip; if none is left, a timeout
    without sending anything (CSOT, "Command Execution": the connection is kept)."""
    left_ms = deadline.remaining() * 1000.0 - (sd.round_trip_time or 0.0) * 1000.0
    if left_ms <= 0:
        raise NetworkTimeout(f"{deadline.what} expired before {next(iter(cmd))} could be sent "
                             f"(less time left than the server's round trip)", sd.address)
    if send and next(iter(cmd)) not in NO_MAX_TIME:
        cmd["maxTimeMS"] = max(1, int(left_ms))


def drop_wtimeout(cmd):
    """Client-side operations timeout, "Validation and Overrides": with timeoutMS in force
    the deprecated wTimeoutMS is ignored (a write concern left empty is not sent)."""
    wc = cmd.get("writeConcern")
    if wc and "wtimeout" in wc:
        wc = {k: v for k, v in wc.items() if k != "wtimeout"}
        if wc:
            cmd["writeConcern"] = wc
        else:
            del cmd["writeConcern"]
