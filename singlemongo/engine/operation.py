"""Run one command on a selected server: selection, the idle-socket check, authentication,
the implicit session, read preference on the wire, $clusterTime, the SDAM decision on errors,
and one retry for retryable reads and writes (retryable reads/writes specs).
"""
from ..records import dataclass
from typing import Any, Optional

from bson import Int64

from ..monitoring import command_monitoring
from .backpressure import (MAX_ATTEMPTS, NO_WRITES_PERFORMED, RETRY_COST,
                           RETRY_TOKEN_RETURN_RATE, SYSTEM_OVERLOADED, RetryState, annotate,
                           decide, labels_of)
from ..errors import (ConnectionFailure, CursorNotFound, DuplicateKeyError, OperationFailure,
                     ServerSelectionError, WriteConcernError)
from .handshake import read_preference_for_op_msg
from ..sdam.server_description import ServerDescription, format_address
from ..sdam.server_type import ServerType

# Retryable writes spec (pre-4.4 servers, without labels) and retryable reads spec.
RETRYABLE_CODES = frozenset({11600, 11602, 10107, 13435, 13436, 189, 91, 7, 6, 89, 9001, 262})
RETRYABLE_READ_CODES = RETRYABLE_CODES | {134}


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


@dataclass
class Outcome:
    reply: dict
    server: ServerDescription
    session: Any


def _idle_check(topology, conn):
    """'Checking an idle socket after socketCheckIntervalMS': ping; False if it failed."""
    now = topology.clock.monotonic()
    if now - conn.last_used < topology.options.socket_check_interval_ms / 1000.0:
        return True
    try:
        conn.command("admin", {"ping": 1}, topology.options.connect_timeout_ms / 1000.0 or None)
    except ConnectionFailure as exc:
        topology.close_connection(conn.address, bump_generation=True)
        # Not a failed check: a stale idle socket says little about the server, so no
        # cooldown; the reselection's scan reconnects at once.
        topology.apply(ServerDescription(conn.address,
                                         error=f"idle connection check failed: {exc}"))
        return False
    conn.last_used = topology.clock.monotonic()
    return True


def checkout(topology, criteria, deprioritized=(), operation="command", operation_id=None):
    """A selected server and its ready, authenticated connection; selection runs at most twice."""
    last = None
    for _ in range(2):
        sd = topology.select_server(criteria, deprioritized, operation, operation_id)
        conn = topology.connection_for(sd)
        if conn is not None and _idle_check(topology, conn):
            if topology.options.credentials is not None and not conn.authenticated:
                _authenticate(topology, conn)
            return sd, conn
        last = sd
    raise ServerSelectionError(
        f"server {format_address(last.address)} failed its connection check twice for "
        f"{criteria}; the topology is now:\n{topology.summary()}")


def _authenticate(topology, conn):
    from ..auth import authenticate  # hashlib and friends load only for authenticated clients
    timeout = topology.options.connect_timeout_ms / 1000.0 or None
    try:
        authenticate(conn, topology.options.credentials, topology.clock, topology.scram_cache,
                     timeout)
    except (ConnectionFailure, OperationFailure) as exc:
        topology.handshake_failed(conn, exc)
        raise


def failed(reply):
    return reply.get("ok") in (0, 0.0, False) or "writeConcernError" in reply


def error_from_reply(reply, address):
    if reply.get("ok") in (0, 0.0, False):
        code = reply.get("code")
        cls = {43: CursorNotFound, 11000: DuplicateKeyError}.get(code, OperationFailure)
        return cls(f"command failed on {format_address(address)}: "
                   f"{reply.get('errmsg', 'unknown error')} (code {code}"
                   f"{', ' + reply['codeName'] if reply.get('codeName') else ''})",
                   code, reply, address)
    wce = reply["writeConcernError"]
    details = dict(reply)
    if "errorLabels" in wce:
        details["errorLabels"] = list(wce["errorLabels"]) + list(reply.get("errorLabels", ()))
    return WriteConcernError(f"write concern error on {format_address(address)}: "
                             f"{wce.get('errmsg', '')} (code {wce.get('code')})",
                             wce.get("code"), details, address)


def is_retryable(error, kind, max_wire_version):
    if kind is None:
        return False
    if isinstance(error, ConnectionFailure):
        return True
    if not isinstance(error, OperationFailure):
        return False
    if kind == "write":
        if error.has_error_label("RetryableWriteError"):
            return True
        return max_wire_version < 9 and error.code in RETRYABLE_CODES
    return error.code in RETRYABLE_READ_CODES


def flush_kill_queue(topology):
    """killCursors for cursors garbage-collected since the last operation (no I/O in __del__)."""
    while topology.kill_queue:
        address, db, coll, cursor_id = topology.kill_queue.pop()
        conn = topology.connections.get(address)
        if conn is not None and not conn.closed:
            try:
                conn.command(db, {"killCursors": coll, "cursors": [Int64(cursor_id)]},
                             topology.options.connect_timeout_ms / 1000.0 or None)
            except (ConnectionFailure, OperationFailure):
                pass


def _prepare(topology, req, sd, session, txn_number):
    cmd = dict(req.command)
    if session is not None:
        cmd["lsid"] = session.lsid
    if txn_number is not None:
        cmd["txnNumber"] = Int64(txn_number)
    cluster_time = topology.sessions.cluster_time
    if cluster_time is not None and sd.server_type is not ServerType.STANDALONE:
        cmd["$clusterTime"] = cluster_time
    rp = read_preference_for_op_msg(topology.description.topology_type, sd.server_type,
                                    req.criteria.read_preference, req.is_read)
    if rp is not None:
        cmd["$readPreference"] = rp
    return cmd


def _send(topology, conn, req, cmd, session, operation_id):
    timeout_ms = topology.options.socket_timeout_ms
    try:
        reply = command_monitoring.run(topology.events, topology.clock, conn, req.db, cmd,
                                       timeout_ms / 1000.0 if timeout_ms else None,
                                       req.sequences, operation_id)
    except ConnectionFailure as exc:
        topology.handle_operation_error(conn, exc=exc)
        if session is not None:
            session.dirty = True  # driver sessions spec: a network error taints the session
        return None, exc
    conn.last_used = topology.clock.monotonic()
    topology.sessions.advance_cluster_time(reply)
    if failed(reply):
        topology.handle_operation_error(conn, reply=reply)
        return reply, error_from_reply(reply, conn.address)
    return reply, None


class _Run:
    """One operation: its attempts, its implicit session and its retry state."""

    def __init__(self, topology, req):
        self.t = topology
        self.req = req
        self.session, self.owned = req.session, False
        self.txn_number = None
        self.state = RetryState()
        self.operation_id = command_monitoring.next_operation_id()
        timeout_ms = topology.options.timeout_ms
        self.deadline = topology.clock.monotonic() + timeout_ms / 1000.0 if timeout_ms else None
        self.last_error = self.last_server = None

    def run(self):
        # Bounded: the overload retries plus the one ordinary retry.
        for _ in range(MAX_ATTEMPTS + 2):
            outcome, error, retry_kind, max_wire = self._attempt()
            if error is None:
                bonus = RETRY_COST if self.state.attempts > 1 else 0
                self.t.token_bucket.deposit(RETRY_TOKEN_RETURN_RATE + bonus)
                return outcome
            self._after_failure(error, retry_kind, max_wire)
        raise self.last_error

    def _attempt(self):
        self.state.attempts += 1
        try:
            sd, conn = checkout(self.t, self.req.criteria, self.state.deprioritized,
                                next(iter(self.req.command), "command"), self.operation_id)
        except ServerSelectionError:
            if self.last_error is not None:
                raise self.last_error from None  # the retry found no server: report the cause
            raise
        except ConnectionFailure as exc:  # a new connection failed during its handshake
            return None, exc, None, 0
        self.last_server = sd
        td = self.t.description
        if self.session is None and self.t.sessions.supported(td):
            self.session = self.t.sessions.acquire(td.logical_session_timeout_minutes)
            self.owned = True
        can_retry_write = (self.req.retry == "write" and self.session is not None
                           and self.t.options.retry_writes
                           and sd.server_type is not ServerType.STANDALONE)
        if can_retry_write and self.txn_number is None:
            self.txn_number = self.session.next_txn_number()
        cmd = _prepare(self.t, self.req, sd, self.session,
                       self.txn_number if can_retry_write else None)
        reply, error = _send(self.t, conn, self.req, cmd, self.session, self.operation_id)
        retry_kind = "write" if can_retry_write else (
            "read" if self.req.retry == "read" and self.t.options.retry_reads else None)
        outcome = Outcome(reply, sd, self.session) if error is None else None
        return outcome, error, retry_kind, (conn.hello or {}).get("maxWireVersion", 0)

    def _after_failure(self, error, retry_kind, max_wire):
        """Sleep and return to retry, or raise the error saying why retrying stopped."""
        labels = labels_of(error)
        if self.state.attempts > 1 and SYSTEM_OVERLOADED not in labels:
            self.t.token_bucket.deposit(RETRY_COST)
        if self.last_error is not None and NO_WRITES_PERFORMED in labels:
            raise self.last_error  # the retry wrote nothing: the earlier error is the truth
        clock = self.t.clock
        decision = decide(self.state, error,
                          ordinary_retryable=is_retryable(error, retry_kind, max_wire),
                          max_adaptive_retries=self.t.options.max_adaptive_retries,
                          bucket=self.t.token_bucket, jitter=clock.random(),
                          now=clock.monotonic(), deadline=self.deadline)
        if not decision.retry:
            raise annotate(error, decision.reason, self.state.attempts)
        self.last_error = error
        if decision.backoff_s:
            clock.sleep(decision.backoff_s)
        if decision.deprioritize and self.last_server is not None:
            self.state.deprioritized.append(self.last_server.address)

    def release(self):
        if self.owned and not self.req.keep_session:
            self.t.sessions.release(self.session,
                                    self.t.description.logical_session_timeout_minutes)


def execute(topology, req):
    """Run ``req`` with the retry rules (ordinary and overload); return an Outcome."""
    flush_kill_queue(topology)
    run = _Run(topology, req)
    try:
        return run.run()
    finally:
        run.release()

