"""Run one command: a selected server (or the connection a cursor is pinned to), the implicit
session, the command built (request.py), the SDAM decision on errors, and the retry
loop: one retry for retryable reads and writes and the overload retries of client
backpressure, as retry.py decides them.
"""
from __future__ import annotations

from . import moved_names
from ..clock import Deadline
from ..errors import ConnectionFailure, OperationFailure, PyMongoError, ServerSelectionError
from ..replies import failed, is_ok, sanitize
from ..monitoring import next_operation_id
from ..sdam.server_description import ServerDescription, TopologyType
from ..selection import PRIMARY, Criteria
from .checkout import checkout, checkout_pinned, reauthenticate, reauthentication_required
from .handshake import api_fields
from .request import (MAX_TIMEOUT_RETRIES, Outcome, RetryState, add_max_time, build_command,
                      drop_wtimeout, retry_kind)

# Sharded Transactions, "Mongos Pinning" (and the load balancer's one connection).
PINNING_TOPOLOGIES = frozenset({TopologyType.SHARDED, TopologyType.LOAD_BALANCED})


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
            if not hasattr(req.explicit_session, "_for_operation"):  # not a ClientSession
                # PyMongo's words; nothing is sent.
                raise ValueError(f"'session' argument must be a ClientSession or None, not "
                                 f"{type(req.explicit_session)}")
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

    def _after_failure(self, error, retry_kind, max_wire):
        from .retry import after_failure
        after_failure(self, error, retry_kind, max_wire)

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
        from .cmap_events import attempt_ended
        result = None
        try:
            result = self._use(sd, conn)
        finally:
            attempt_ended(self.t, conn, self.req, self.step, result)
        return result

    def _checkout_retry_kind(self):
        """Retryable reads and writes: an error while checking a connection out (its
        handshake, authentication included) is retried as the operation would be."""
        return retry_kind(self.req, self.step, self.t.options, self.unacknowledged,
                          self.t.sessions.supported(self.t.description))

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
        kind = retry_kind(self.req, step, self.t.options, self.unacknowledged,
                          self.session is not None, sd.server_type)
        can_retry_write = kind == "write"
        if can_retry_write and step is None and self.txn_number is None:
            self.txn_number = self.session.next_txn_number()
        txn_number = step.txn.txn_number if step is not None else (
            self.txn_number if can_retry_write else None)
        cmd = build_command(self.req, sd, self.session, txn_number,
                            api=api_fields(self.t.options),
                            cluster_time=self.t.sessions.cluster_time, description=td,
                            step=step, command=self.command, criteria=self.criteria)
        if self.deadline is not None:
            add_max_time(cmd, self.deadline, sd, self.req.send_max_time)
            drop_wtimeout(cmd)
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
        if can_retry_write and error is not None:
            from .retry import (NO_RETRYABLE_WRITES, RETRYABLE_WRITE_ERROR, network,
                                no_retryable_writes)
            if isinstance(error, ConnectionFailure) and network(error):
                # Retryable writes: a network error of a retryable write is labelled for the
                # user.
                error.error_labels = tuple(error.error_labels) + (RETRYABLE_WRITE_ERROR,)
            if no_retryable_writes(error):
                raise OperationFailure(NO_RETRYABLE_WRITES, 20, error.details, address=sd.address)
        sent = self.req.sequences
        outcome = Outcome(reply, sd, self.session, self.deadline,
                          command_name=next(iter(self.command)),
                          statements=len(sent[0][1]) if sent else None) if error is None else None
        max_wire = (conn.hello or {}).get("maxWireVersion", 0)
        if isinstance(error, OperationFailure) and error.max_wire_version is None:
            # A load balancer's description has no wire version: the connection's hello does.
            error.max_wire_version = max_wire
        return outcome, error, kind, max_wire

    def release(self):
        if self.owned and not self.req.keep_session:
            self.t.sessions.release(self.session,
                                    self.t.description.logical_session_timeout_minutes)


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
        topology.flush_deferred_kills()  # cursors the garbage collector dropped
        with topology.timeout_scope():
            run = _Run(topology, req)
            try:
                return run.run()
            finally:
                run.release()


# Names issue 61 moved to modules of their own (old import paths keep working).
__getattr__ = moved_names(__name__, {'MAX_TIMEOUT_RETRIES': 'request',
                                         'RetryState': 'request',
                                         'NO_MAX_TIME': 'request',
                                         'RETRYABLE_WRITE_ERROR': 'retry',
                                         'NO_RETRYABLE_WRITES': 'retry',
                                         'flush_kill_queue': 'cursors',
                                         'kill_cursor': 'cursors',
                                         'Request': 'request'})
