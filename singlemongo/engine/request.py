"""One operation as the face asks for it (``Request``), what it gets back (``Outcome``), the
record of its attempts (``RetryState``) and how a failed attempt may be retried
(``retry_kind``: retryable reads and writes specs, decided in this one place; the rest of the
retry rules are retry.py's, loaded at the first failure); and the command each attempt
sends, built by pure functions: session fields, $clusterTime, read concern and read
preference, maxTimeMS under timeoutMS and the write concern it overrides (client-side
operations timeout).
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Any, Optional

from bson import Int64

from singlemongo.errors import NetworkTimeout
from singlemongo.sdam.server_description import ServerDescription, ServerType
from singlemongo.selection import WRITE, effective, read_preference_for_op_msg

# Client-side operations timeout, "Retryability": under timeoutMS (0 included) a retryable read
# or write is retried until the deadline. This bounds the count where no deadline comes
# (timeoutMS=0, a frozen clock); PyMongo has no bound.
MAX_TIMEOUT_RETRIES = 100


class Request:
    """One operation as the face asks for it. A plain class, not a record: every operation
    makes one, and a record's generic ``__init__`` with keywords cost about 100 bytecodes
    of each operation (and the class 0.1 M instructions more to make)."""

    __slots__ = ("db", "command", "criteria", "is_read", "retry", "sequences", "session",
                 "keep_session", "pinned", "unacknowledged", "codec", "user_fields",
                 "explicit_session", "parse_write_concern_error", "exhaust", "prepare",
                 "operation_id", "reply_timeout_s", "send_max_time")

    def __init__(self, db: str, command: dict, criteria: Any, is_read: bool = True,
                 retry: Optional[str] = None, sequences: tuple = (), *, session: Any = None,
                 keep_session: bool = False, pinned: Any = None, unacknowledged: bool = False,
                 codec: Any = None, user_fields: Any = None, explicit_session: Any = None,
                 parse_write_concern_error: bool = True, exhaust: Optional[str] = None,
                 prepare: Any = None, operation_id: Optional[int] = None,
                 reply_timeout_s: Optional[float] = None, send_max_time: bool = True) -> None:
        self.db, self.command, self.criteria, self.is_read = db, command, criteria, is_read
        self.retry = retry  # "read", "write" or None
        self.sequences = sequences
        self.session = session  # a ServerSession the caller keeps (cursors); else implicit
        # An implicit session outlives the call (a cursor owns it).
        self.keep_session = keep_session
        self.pinned = pinned  # the connection a cursor is bound to: no selection, same server
        self.unacknowledged = unacknowledged  # w: 0: moreToCome, no reply, never retried
        self.codec = codec  # the user's CodecOptions: encodes the command, decodes the reply
        self.user_fields = user_fields  # where the user's documents are (selective decoding)
        self.explicit_session = explicit_session  # the user's ClientSession, if any
        # False for the generic command: a writeConcernError in an ok reply is returned, not
        # raised (PyMongo's Database.command does not parse it).
        self.parse_write_concern_error = parse_write_concern_error
        self.exhaust = exhaust  # "allow": a getMore the server may answer with a stream
        # prepare(connection): called once, on the first connection the operation gets,
        # before anything is sent; it checks sizes against that server's limits
        # (DocumentTooLarge) and may set ``sequences`` and ``retry`` (a bulk write's batch is
        # cut to those limits). One selection per operation: no separate lookup of the limits.
        self.prepare = prepare
        self.operation_id = operation_id  # the caller's, shared by a bulk write's commands
        # Without timeoutMS, what bounds the reply instead of socketTimeoutMS (None: that).
        self.reply_timeout_s = reply_timeout_s
        # CSOT, "Tailable non-awaitData Cursors": False sends no maxTimeMS (the server would
        # cap every later getMore with it); the timeout is kept on the client only.
        self.send_max_time = send_max_time


class RetryState:
    """An operation's attempts so far (what client backpressure's ``decide`` reads and
    updates). A plain class, not a record: every operation makes one, and a one-off makes
    the class (a record class costs 0.1 M instructions more to make)."""

    __slots__ = ("attempts", "overload_retries", "ordinary_retries", "first_error",
                 "deprioritized")

    def __init__(self) -> None:
        self.attempts = self.overload_retries = self.ordinary_retries = 0
        self.first_error: Any = None
        self.deprioritized: list = []


class Outcome:
    """What an operation got back (a plain class, as ``Request``)."""

    __slots__ = ("reply", "server", "session", "deadline", "check_in", "command_name",
                 "statements")

    def __init__(self, reply: dict, server: ServerDescription, session: Any,
                 deadline: Any = None, check_in: Any = None, command_name: str = "",
                 statements: Optional[int] = None) -> None:
        self.reply, self.server, self.session = reply, server, session
        self.deadline = deadline  # the timeoutMS it ran within (a cursor lives within it)
        # Behind a load balancer, with pool events: checks the cursor's connection back in
        # (engine/cmap_events.py). The cursor that takes this outcome calls it when it ends.
        self.check_in = check_in
        self.command_name = command_name  # what the reply answers (an error about its shape)
        self.statements = statements  # a write's documents, updates or deletes sent


def retry_kind(req, step, options, unacknowledged, has_session, server_type=None):
    """How a failed attempt of ``req`` may be retried: "read", "write" or None. In a
    transaction, the transaction's rule (``step``); else a retryable read when retryReads,
    a retryable write when retryWrites, acknowledged, with a session (sessions supported),
    and, once the server is known (``server_type``), not on a standalone (retryable writes,
    "Supported Server Versions")."""
    if step is not None:
        return step.retry_kind
    if req.retry == "read":
        return "read" if options.retry_reads else None
    if req.retry == "write" and options.retry_writes and not unacknowledged and has_session \
            and server_type is not ServerType.STANDALONE:
        return "write"
    return None


# ----- the command an attempt sends ---------------------------------------------------------

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
