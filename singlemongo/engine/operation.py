"""Run one command: a selected server (or the connection a cursor is pinned to), the implicit
session, read preference on the wire, $clusterTime, the SDAM decision on errors, one retry for
retryable reads and writes (retryable reads/writes specs) and overload retries (client
backpressure).
"""
from __future__ import annotations

from typing import Any, Optional

from bson import Int64

from ..clock import Deadline
from ..errors import (ConnectionFailure, NetworkTimeout, OperationFailure, PyMongoError,
                      ServerSelectionError, with_configured_timeouts)
from ..replies import failed, is_ok, sanitize
from ..monitoring import next_operation_id
from ..records import dataclass, field
from ..sdam.server_description import ServerDescription, ServerType, TopologyType
from ..selection import PRIMARY, WRITE, Criteria, effective, read_preference_for_op_msg
from .checkout import checkout, checkout_pinned, reauthenticate, reauthentication_required
from .check import api_fields

RETRYABLE_WRITE_ERROR = "RetryableWriteError"
# Sharded Transactions, "Mongos Pinning" (and the load balancer's one connection).
PINNING_TOPOLOGIES = frozenset({TopologyType.SHARDED, TopologyType.LOAD_BALANCED})
# Client-side operations timeout, "Retryability": under timeoutMS (0 included) a retryable read
# or write is retried until the deadline. This bounds the count where no deadline comes
# (timeoutMS=0, a frozen clock); PyMongo has no bound.
MAX_TIMEOUT_RETRIES = 100


@dataclass
class RetryState:
    """An operation's attempts so far (what client backpressure's ``decide`` reads and
    updates; the backpressure module loads at the first failure)."""
    attempts: int = 0
    overload_retries: int = 0
    ordinary_retries: int = 0
    first_error: Any = None
    deprioritized: list = field(default_factory=list)


@dataclass
class Request:
    db: str
    command: dict
    criteria: Any
    is_read: bool = True
    retry: Optional[str] = None  # "read", "write" or None
    sequences: tuple = ()
    session: Any = None  # a ServerSession the caller keeps (cursors); else implicit
    keep_session: bool = False  # an implicit session outlives the call (a cursor owns it)
    pinned: Any = None  # the connection a cursor is bound to: no selection, same server
    unacknowledged: bool = False  # w: 0: sent with moreToCome, no reply, never retried
    codec: Any = None  # the user's CodecOptions: encodes the command, decodes the reply
    user_fields: Any = None  # where the user's documents are in the reply (selective decoding)
    explicit_session: Any = None  # the user's ClientSession (client_session.py), if any
    # False for the generic command: a writeConcernError in an ok reply is returned, not
    # raised (PyMongo's Database.command does not parse it).
    parse_write_concern_error: bool = True
    exhaust: Optional[str] = None  # "allow": a getMore the server may answer with a stream
    # prepare(connection): called once, on the first connection the operation gets, before
    # anything is sent; it checks sizes against that server's limits (DocumentTooLarge) and
    # may set ``sequences`` and ``retry`` (a bulk write's batch is cut to those limits).
    # One selection per operation: no separate lookup of the limits.
    prepare: Any = None
    operation_id: Optional[int] = None  # the caller's, shared by a bulk write's commands
    # Without timeoutMS, what bounds the reply instead of socketTimeoutMS (None: that).
    reply_timeout_s: Optional[float] = None
    # CSOT, "Tailable non-awaitData Cursors": False sends no maxTimeMS (the server would cap
    # every later getMore with it); the timeout is kept on the client only.
    send_max_time: bool = True


@dataclass
class Outcome:
    reply: dict
    server: ServerDescription
    session: Any
    deadline: Any = None  # the timeoutMS it ran within (a cursor lives within it)
    # Behind a load balancer, with pool events: checks the cursor's connection back in
    # (engine/pool.py). The cursor that takes this outcome calls it when it ends.
    check_in: Any = None
    command_name: str = ""  # what the reply answers (an error about its shape names it)
    statements: Optional[int] = None  # a write's documents, updates or deletes sent


def flush_kill_queue(topology):
    """killCursors for cursors garbage-collected since the last operation (no I/O in __del__)."""
    while topology.kill_queue:
        address, db, coll, cursor_id = topology.kill_queue.pop()
        conn = topology.connections.get(address)
        if conn is not None and not conn.closed:
            kill_cursor(topology, conn, db, coll, cursor_id)


def kill_cursor(topology, conn, db, coll, cursor_id, session=None, explicit_session=None):
    """killCursors on ``conn``, as every command (overload retries, client backpressure),
    within the timeoutMS in force; without one within socketTimeoutMS, else
    connectTimeoutMS: never unbounded. A failure is not raised: the server times the cursor
    out."""
    options = topology.options
    fallback_ms = options.socket_timeout_ms or options.connect_timeout_ms
    try:
        execute(topology, Request(
            db, {"killCursors": coll, "cursors": [Int64(cursor_id)]}, None, is_read=False,
            session=session, keep_session=True, pinned=conn, explicit_session=explicit_session,
            reply_timeout_s=fallback_ms / 1000.0 if fallback_ms else None))
    except PyMongoError:
        pass


def _prepare(topology, req, sd, session, txn_number, step=None, command=None, criteria=None):
    cmd = dict(req.command if command is None else command)
    cmd.update(api_fields(topology.options))
    if session is not None:
        cmd["lsid"] = session.lsid
    if txn_number is not None:
        cmd["txnNumber"] = Int64(txn_number)
    cluster_time = topology.sessions.cluster_time
    explicit = req.explicit_session
    if explicit is not None:
        cluster_time = _newer_cluster_time(cluster_time, explicit.cluster_time)
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
        criteria = effective(topology.description, criteria or req.criteria)
        rp = read_preference_for_op_msg(topology.description.topology_type, sd.server_type,
                                        criteria.read_preference, criteria.operation != WRITE)
        if rp is not None:
            cmd["$readPreference"] = rp
    return cmd


def _newer_cluster_time(a, b):
    if a is None or b is None:
        return a if b is None else b
    return b if b["clusterTime"] > a["clusterTime"] else a


def _send(topology, conn, req, cmd, session, operation_id, deadline=None, step=None):
    """Send ``cmd`` and read its reply within timeoutMS (``deadline``), else within
    socketTimeoutMS for the whole reply."""
    if deadline is None and req.reply_timeout_s is not None:
        deadline = Deadline(topology.clock, req.reply_timeout_s,
                            f"{req.reply_timeout_s * 1000:.0f} ms for {next(iter(cmd))}")
    elif deadline is None:
        ms = topology.options.socket_timeout_ms
        deadline = Deadline(topology.clock, ms / 1000.0 if ms else None, f"socketTimeoutMS {ms}")
    try:
        reply = topology.events.command(topology.clock, conn, req.db, cmd, deadline,
                                        req.sequences, operation_id, req.codec,
                                        req.user_fields, exhaust=req.exhaust)
    except ConnectionFailure as exc:
        topology.handle_operation_error(conn, exc=exc)
        if session is not None:
            session.dirty = True  # driver sessions spec: a network error taints the session
        return None, exc
    conn.last_used = topology.clock.monotonic()
    topology.sessions.advance_cluster_time(reply)
    if req.explicit_session is not None:
        req.explicit_session._after_reply(reply)
    reply = sanitize(reply)
    bad = failed(reply) if req.parse_write_concern_error else not is_ok(reply)
    if step is not None and not bad:
        step.on_reply(reply)
    if bad:
        topology.handle_operation_error(conn, reply=reply)
        from ..monitoring.command_monitoring import is_sensitive, redacted_failure
        from ..reply_errors import error_from_reply
        # The error carries the reply, redacted as a log of it is (command monitoring spec,
        # "Security"): a sensitive command's reply keeps its code, name and labels only.
        shown = redacted_failure(reply) if is_sensitive(next(iter(cmd)), cmd) else reply
        return reply, error_from_reply(shown, conn.address)
    return reply, None


class _Run:
    """One operation: its attempts, its implicit session and its retry state."""

    def __init__(self, topology, req):
        self.t = topology
        self.req = req
        self.session, self.owned = req.session, False
        self.step = None  # a command of a transaction (transaction.py)
        if req.explicit_session is not None:
            self.session, self.step = req.explicit_session._for_operation(topology, req)
        # Transactions spec: a collection's w: 0 is ignored in a transaction.
        self.unacknowledged = req.unacknowledged and self.step is None
        self.command = req.command  # copied before a commit retry changes its write concern
        # Transactions spec, "readPreference": a transaction reads from the primary, whatever
        # the collection says (step refused any other transaction read preference).
        self.criteria = req.criteria if self.step is None or not req.is_read else Criteria(
            req.criteria.operation, PRIMARY)
        self.txn_number = None
        self.state = RetryState()
        self.operation_id = req.operation_id or next_operation_id()
        self.deadline = topology.deadline  # timeoutMS (execute opens its scope)
        self.last_error = self.last_server = None
        self.reauthenticated = False  # error 391: at most one reauthentication per operation
        # Client backpressure: handshakes the server closes share one connectTimeoutMS.
        self.handshake_budget_s = topology.options.connect_timeout_ms / 1000.0 or None

    def run(self):
        if self.step is None:
            return self._run()
        try:
            return self._run()
        except PyMongoError as exc:
            self.step.label(exc)  # Error Reporting and Retrying Transactions
            raise
        finally:
            self.step.finish()

    def _run(self):
        # Bounded: decide() allows at most min(maxAdaptiveRetries, 5) overload retries and
        # one ordinary one, or MAX_TIMEOUT_RETRIES under timeoutMS.
        for _ in range(self.t.options.max_adaptive_retries + MAX_TIMEOUT_RETRIES + 1):
            outcome, error, retry_kind, max_wire = self._attempt()
            if error is None:
                if self.t._token_bucket is not None:  # else full: nothing to return to it
                    from .backpressure import RETRY_COST, RETRY_TOKEN_RETURN_RATE
                    bonus = RETRY_COST if self.state.attempts > 1 else 0
                    self.t.token_bucket.deposit(RETRY_TOKEN_RETURN_RATE + bonus)
                return outcome
            self._after_failure(error, retry_kind, max_wire)
        raise self.last_error

    def _server(self):
        """(server description, connection): the pinned connection, the transaction's mongos,
        or a checked-out one."""
        pinned = self.req.pinned
        if pinned is None and self.step is not None:
            pinned = self.step.txn.held_connection  # load balanced, with pool events
            if pinned is not None and pinned.closed:
                self.step.txn.release()  # lost: the retry checks a new one out and holds it
                pinned = None
        if pinned is not None:
            sd = self.t.description.servers.get(pinned.address) or ServerDescription(
                pinned.address)
            if self.t.pool is not None and not self.t.options.load_balanced:
                self.t.pool.check_out_existing(pinned, self.t.clock)
                self.checked_out = True
            return sd, pinned
        self.checked_out = self.t.pool is not None
        if self.step is not None and self.step.txn.pinned is not None:
            return checkout_pinned(self.t, self.step.txn.pinned, self.handshake_budget_s)
        return checkout(self.t, self.criteria, self.state.deprioritized,
                        next(iter(self.req.command), "command"), self.operation_id,
                        self.handshake_budget_s)

    def _attempt(self):
        self.state.attempts += 1
        self.checked_out = False  # whether this attempt checked a connection out (pool events)
        try:
            sd, conn = self._server()
        except ServerSelectionError:
            if self.last_error is not None:
                raise self.last_error from None  # the retry found no server: report the cause
            raise
        except (ConnectionFailure, OperationFailure) as exc:
            if isinstance(exc, OperationFailure) and not getattr(exc, "in_authentication", False):
                raise
            if self.handshake_budget_s is not None:  # overload: the server closed handshakes
                self.handshake_budget_s -= getattr(exc, "handshake_s", 0.0)
            address = getattr(exc, "selected_address", None)
            if address is not None:  # the attempt's server, for deprioritization (rule 6)
                self.last_server = self.t.description.servers.get(address) or \
                    ServerDescription(address)
            # No wire version: the handshake did not finish (PyMongo's rule, 0).
            return None, exc, self._checkout_retry_kind(), 0
        if not self.checked_out:
            return self._use(sd, conn)
        from .pool import attempt_ended
        result = None
        try:
            result = self._use(sd, conn)
        finally:
            attempt_ended(self.t, conn, self.req, self.step, result)
        return result

    def _checkout_retry_kind(self):
        """Retryable reads and writes: an error while checking a connection out (its
        handshake, authentication included) is retried as the operation would be."""
        if self.step is not None:
            return self.step.retry_kind
        if self.req.retry == "read":
            return "read" if self.t.options.retry_reads else None
        if self.req.retry == "write" and self.t.options.retry_writes and \
                not self.unacknowledged and self.t.sessions.supported(self.t.description):
            return "write"
        return None

    def _use(self, sd, conn):
        """The attempt on the checked-out connection ``conn`` of server ``sd``."""
        self.last_server = sd
        if self.req.prepare is not None:
            prepare, self.req.prepare = self.req.prepare, None
            self.req.sequences, self.req.retry = prepare(conn, self.req.sequences, self.req.retry)
        td = self.t.description
        if self.session is None and self.t.sessions.supported(td) and not self.unacknowledged:
            self.session = self.t.sessions.acquire(td.logical_session_timeout_minutes)
            self.owned = True
        step = self.step
        if step is not None:
            step.selected(sd.address, td.topology_type in PINNING_TOPOLOGIES)
            can_retry_write = step.retry_kind == "write"
        else:
            can_retry_write = (self.req.retry == "write" and self.session is not None
                               and self.t.options.retry_writes and not self.unacknowledged
                               and sd.server_type is not ServerType.STANDALONE)
            if can_retry_write and self.txn_number is None:
                self.txn_number = self.session.next_txn_number()
        txn_number = step.txn.txn_number if step is not None else (
            self.txn_number if can_retry_write else None)
        cmd = _prepare(self.t, self.req, sd, self.session, txn_number, step, self.command,
                       self.criteria)
        if self.deadline is not None:
            _add_max_time(cmd, self.deadline, sd, self.req.send_max_time)
            _drop_wtimeout(cmd)
        if self.unacknowledged:
            return (_send_unacknowledged(self.t, conn, self.req, cmd, sd, self.deadline),
                    None, None, 0)
        reply, error = _send(self.t, conn, self.req, cmd, self.session, self.operation_id,
                             self.deadline, step)
        if reauthentication_required(error, self.t) and not self.reauthenticated:
            # Auth spec, "Reauthentication": the connection authenticates again (SASL, no
            # hello) and the operation is re-attempted once, retryable or not.
            self.reauthenticated = True
            reauthenticate(self.t, conn)
            reply, error = _send(self.t, conn, self.req, cmd, self.session,
                                 self.operation_id, self.deadline, step)
        if can_retry_write and isinstance(error, ConnectionFailure) and _network(error):
            # Retryable writes: a network error of a retryable write is labelled for the user.
            error.error_labels = tuple(error.error_labels) + (RETRYABLE_WRITE_ERROR,)
        if can_retry_write and _no_retryable_writes(error):
            raise OperationFailure(NO_RETRYABLE_WRITES, 20, error.details, address=sd.address)
        if step is not None:
            retry_kind = step.retry_kind
        else:
            retry_kind = "write" if can_retry_write else (
                "read" if self.req.retry == "read" and self.t.options.retry_reads else None)
        sent = self.req.sequences
        outcome = Outcome(reply, sd, self.session, self.deadline,
                          command_name=next(iter(self.command)),
                          statements=len(sent[0][1]) if sent else None) if error is None else None
        max_wire = (conn.hello or {}).get("maxWireVersion", 0)
        if isinstance(error, OperationFailure) and error.max_wire_version is None:
            # A load balancer's description has no wire version: the connection's hello does.
            error.max_wire_version = max_wire
        return outcome, error, retry_kind, max_wire

    def _after_failure(self, error, retry_kind, max_wire):
        """Sleep and return to retry, or raise the error saying why retrying stopped."""
        from .backpressure import (NO_WRITES_PERFORMED, RETRY_COST, SYSTEM_OVERLOADED, annotate,
                                   decide, labels_of)
        from ..reply_errors import is_retryable
        labels = labels_of(error)
        if self.state.attempts > 1 and SYSTEM_OVERLOADED not in labels:
            self.t.token_bucket.deposit(RETRY_COST)
        if self.last_error is not None and NO_WRITES_PERFORMED in labels:
            raise self.last_error  # the retry wrote nothing: the earlier error is the truth
        if self.handshake_budget_s is not None and self.handshake_budget_s <= 0:
            raise self._timeouts(annotate(
                error, "connectTimeoutMS is spent on handshakes the server closed",
                self.state.attempts))
        if self.deadline is not None and self.deadline.expired():
            raise self._timeouts(_timed_out(error, self.deadline, self.state.attempts))
        clock = self.t.clock
        decision = decide(self.state, error,
                          ordinary_retryable=is_retryable(error, retry_kind, max_wire),
                          max_adaptive_retries=self.t.options.max_adaptive_retries,
                          bucket=self.t.token_bucket, jitter=clock.random(),
                          now=clock.io_time(),
                          deadline=self.deadline.at if self.deadline is not None else None,
                          ordinary_limit=MAX_TIMEOUT_RETRIES if self.t.timeout_in_force()
                          else 1)
        if not decision.retry:
            raise self._timeouts(annotate(error, decision.reason, self.state.attempts,
                                          quiet=_beyond_retries(error, self.state.attempts)))
        self.last_error = error
        self._log_retry()
        if self.step is not None:
            self.command = dict(self.command)
            self.step.before_retry(self.command, error)
        if decision.backoff_s:
            clock.sleep(decision.backoff_s)
        if decision.deprioritize and self.last_server is not None and self.req.pinned is None:
            self.state.deprioritized.append(self.last_server.address)

    def _log_retry(self):
        # PyMongo's debug message for a retry (its users' log filters look for it).
        from ..monitoring import log
        text = f"Retrying {'read' if self.req.is_read else 'write'} attempt number " \
               f"{self.state.attempts}"
        log.emit(log.COMMAND, log.DEBUG, text, self.t.topology_id, message=text,
                 commandName=next(iter(self.command)), operationId=self.operation_id)

    def _timeouts(self, error):
        options = self.t.options
        return with_configured_timeouts(error, self.deadline.seconds if self.deadline else None,
                                        options.socket_timeout_ms, options.connect_timeout_ms)

    def release(self):
        if self.owned and not self.req.keep_session:
            self.t.sessions.release(self.session,
                                    self.t.description.logical_session_timeout_minutes)


# Retryable writes, "Determining Retryable Support": a deployment that refuses txnNumber
# (MMAPv1, a mongod that is no replica set member) gets PyMongo's actionable error.
NO_RETRYABLE_WRITES = ("This MongoDB deployment does not support retryable writes. Please add "
                       "retryWrites=false to your connection string.")


def _no_retryable_writes(error):
    details = getattr(error, "details", None)
    return isinstance(error, OperationFailure) and error.code == 20 and isinstance(
        details, dict) and str(details.get("errmsg", "")).startswith("Transaction numbers")


# Client-side operations timeout, "Cursors": no maxTimeMS on getMore.
NO_MAX_TIME = frozenset({"getMore", "endSessions"})


def _add_max_time(cmd, deadline, sd, send=True):
    """maxTimeMS: the time left less the server's round trip; if none is left, a timeout
    without sending anything (CSOT, "Command Execution": the connection is kept)."""
    left_ms = deadline.remaining() * 1000.0 - (sd.round_trip_time or 0.0) * 1000.0
    if left_ms <= 0:
        raise NetworkTimeout(f"{deadline.what} expired before {next(iter(cmd))} could be sent "
                             f"(less time left than the server's round trip)", sd.address)
    if send and next(iter(cmd)) not in NO_MAX_TIME:
        cmd["maxTimeMS"] = max(1, int(left_ms))


def _drop_wtimeout(cmd):
    """Client-side operations timeout, "Validation and Overrides": with timeoutMS in force
    the deprecated wTimeoutMS is ignored (a write concern left empty is not sent)."""
    wc = cmd.get("writeConcern")
    if wc and "wtimeout" in wc:
        wc = {k: v for k, v in wc.items() if k != "wtimeout"}
        if wc:
            cmd["writeConcern"] = wc
        else:
            del cmd["writeConcern"]


def _network(error):
    from ..reply_errors import from_server
    return not from_server(error)


def _beyond_retries(error, attempts):
    """A first attempt's server error that no retry of any kind could fix (no label, not a
    retryable code): its message needs no note about retries."""
    from .backpressure import labels_of
    from ..reply_errors import from_server, is_retryable
    return attempts == 1 and from_server(error) and not labels_of(error) and not any(
        is_retryable(error, kind, 0) for kind in ("read", "write"))


def _timed_out(error, deadline, attempts):
    """The timeout error once timeoutMS has expired, exposing the error that preceded it."""
    from .backpressure import annotate
    if getattr(error, "timeout", False):
        return annotate(error, f"{deadline.what} expired", attempts)
    timeout = NetworkTimeout(f"{deadline.what} expired after {attempts} attempt(s); the last "
                             f"error: {error}", getattr(error, "address", None))
    timeout.__cause__ = error
    return timeout


def _send_unacknowledged(topology, conn, req, cmd, sd, deadline=None):
    """Write concern w: 0: OP_MSG with moreToCome; nothing is read, nothing retried."""
    try:
        topology.events.command(topology.clock, conn, req.db, cmd,
                                deadline or topology.options.socket_timeout_ms / 1000.0 or None,
                                req.sequences, codec=req.codec, unacknowledged=True)
    except ConnectionFailure as exc:
        topology.handle_operation_error(conn, exc=exc)
        raise
    conn.last_used = topology.clock.monotonic()
    return Outcome({"ok": 1}, sd, None)


def execute(topology, req):
    """Run ``req`` with the retry rules (ordinary and overload); return an Outcome."""
    with topology.operation():
        topology.check_fork()  # before the kill queue or a cursor's socket is touched
        flush_kill_queue(topology)
        with topology.timeout_scope():
            run = _Run(topology, req)
            try:
                return run.run()
            finally:
                run.release()

