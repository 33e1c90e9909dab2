"""Run one command: a selected server (or the connection a cursor is pinned to), the implicit
session, the command built (request.py), the SDAM decision on errors, and the retry
loop: one retry for retryable reads and writes and the overload retries of client
backpressure, as retry.py decides them.
"""

from singlemongo.engine import moved_names
from singlemongo.clock import Deadline
from singlemongo.errors import ConnectionFailure, OperationFailure, PyMongoError, ServerSelectionError
from singlemongo.replies import failed, is_ok, sanitize
from singlemongo.monitoring import next_operation_id
from singlemongo.sdam.server_description import ServerDescription, TopologyType
from singlemongo.selection import PRIMARY, Criteria
from singlemongo.engine.checkout import checkout, checkout_pinned, reauthenticate, reauthentication_required
from singlemongo.engine.handshake import api_fields
from singlemongo.engine.lifecycle import (BACKOFF, BEFORE_RETRY, DEPRIORITIZE, DIRTY_SESSION, LABEL_RETRYABLE,
                        LABEL_TRANSACTION, PIN_TRANSACTION, REAUTHENTICATE, RECORD_REPLY,
                        REMEMBER_SERVER, REPORT_EARLIER, RETURN_TOKENS, SDAM_ERROR,
                        SPEND_HANDSHAKE, TAKE_SESSION, LIFECYCLE, advance)
from singlemongo.engine.request import (MAX_TIMEOUT_RETRIES, Outcome, RetryState, add_max_time, build_command,
                      drop_wtimeout, retry_kind)

# Sharded Transactions, "Mongos Pinning" (and the load balancer's one connection).
PINNING_TOPOLOGIES = frozenset({TopologyType.SHARDED, TopologyType.LOAD_BALANCED})
# Tests set a list here to see each lifecycle step an operation takes, (state, event).
STEPS = None


def _send(topology, conn, req, cmd, operation_id, deadline=None):
    """(event, reply, error): ``cmd`` sent and its reply read within timeoutMS
    (``deadline``), else within socketTimeoutMS for the whole reply. Nothing else is done
    here: the lifecycle's actions for the event are the run's."""
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
        return "network error", None, exc
    conn.last_used = topology.clock.monotonic()
    reply = sanitize(reply)
    bad = failed(reply) if req.parse_write_concern_error else not is_ok(reply)
    if not bad:
        return "ok reply", reply, None
    from singlemongo.monitoring.command_monitoring import is_sensitive, redacted_failure
    from singlemongo.reply_errors import error_from_reply
    # The error carries the reply, redacted as a log of it is (command monitoring spec,
    # "Security"): a sensitive command's reply keeps its code, name and labels only.
    shown = redacted_failure(reply) if is_sensitive(next(iter(cmd)), cmd) else reply
    return "error reply", reply, error_from_reply(shown, conn.address)


class _Run:
    """One operation: its attempts, its implicit session and its retry state, stepped
    through the lifecycle table (lifecycle.py)."""

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
        self.phase = "selecting"  # the lifecycle state
        self.operation_id = req.operation_id or next_operation_id()
        self.deadline = topology.deadline  # timeoutMS (execute opens its scope)
        self.last_error = self.last_server = None
        self.reauthenticated = False  # error 391: at most one reauthentication per operation
        # Client backpressure: handshakes the server closes share one connectTimeoutMS.
        self.handshake_budget_s = topology.options.connect_timeout_ms / 1000.0 or None

    def _advance(self, event):
        """The lifecycle's step for ``event``: the new state, and the actions to do."""
        if STEPS is not None:
            STEPS.append((self.phase, event))
        step = LIFECYCLE.get((self.phase, event))  # the table itself: a step every operation
        if step is None:
            advance(self.phase, event)  # raises, naming the missing step
        self.phase, actions = step
        return actions

    def run(self):
        try:
            outcome = self._run()
        except BaseException as exc:
            if self.phase != "failed":
                self._advance("error")
            if LABEL_TRANSACTION in self._advance("end") and self.step is not None and \
                    isinstance(exc, PyMongoError):
                self.step.label(exc)  # Error Reporting and Retrying Transactions
            raise
        finally:
            if self.step is not None:
                self.step.finish()
        if RETURN_TOKENS in self._advance("end") and self.t._token_bucket is not None:
            # (else the bucket is full: nothing to return to it)
            from singlemongo.engine.backpressure import RETRY_COST, RETRY_TOKEN_RETURN_RATE
            bonus = RETRY_COST if self.state.attempts > 1 else 0
            self.t.token_bucket.deposit(RETRY_TOKEN_RETURN_RATE + bonus)
        return outcome

    def _run(self):
        # Bounded: decide() allows at most min(maxAdaptiveRetries, 5) overload retries and
        # one ordinary one, or MAX_TIMEOUT_RETRIES under timeoutMS.
        for _ in range(self.t.options.max_adaptive_retries + MAX_TIMEOUT_RETRIES + 1):
            outcome, error, retry_kind, max_wire = self._attempt()
            if error is None:
                return outcome
            from singlemongo.engine.retry import after_failure
            try:
                decision = after_failure(self, error, retry_kind, max_wire)
            except PyMongoError:
                self._advance("give up")
                raise
            self._between_attempts(self._advance("retry"), decision, error)
        raise self.last_error

    def _between_attempts(self, actions, decision, error):
        for action in actions:
            if action == BACKOFF and decision.backoff_s:
                self.t.clock.sleep(decision.backoff_s)
            elif action == DEPRIORITIZE and decision.deprioritize and \
                    self.last_server is not None and self.req.pinned is None:
                self.state.deprioritized.append(self.last_server.address)
            elif action == BEFORE_RETRY and self.step is not None:
                self.command = dict(self.command)
                self.step.before_retry(self.command, error)

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
            if REPORT_EARLIER in self._advance("no server") and self.last_error is not None:
                raise self.last_error from None  # the retry found no server: report the cause
            raise
        except (ConnectionFailure, OperationFailure) as exc:
            if isinstance(exc, OperationFailure) and not getattr(exc, "in_authentication", False):
                raise  # not the handshake's: the lifecycle's "error"
            for action in self._advance("handshake error"):
                if action == SPEND_HANDSHAKE and self.handshake_budget_s is not None:
                    self.handshake_budget_s -= getattr(exc, "handshake_s", 0.0)
                elif action == REMEMBER_SERVER and getattr(exc, "selected_address", None):
                    address = exc.selected_address  # the attempt's server (rule 6)
                    self.last_server = self.t.description.servers.get(address) or \
                        ServerDescription(address)
            # No wire version: the handshake did not finish (PyMongo's rule, 0).
            return None, exc, self._checkout_retry_kind(), 0
        if not self.checked_out:
            return self._use(sd, conn)
        from singlemongo.engine.cmap_events import attempt_ended
        result = None
        try:
            result = self._use(sd, conn)
        finally:  # the lifecycle's CHECK_IN, however the attempt ends
            attempt_ended(self.t, conn, self.req, self.step, result)
        return result

    def _checkout_retry_kind(self):
        """Retryable reads and writes: an error while checking a connection out (its
        handshake, authentication included) is retried as the operation would be."""
        return retry_kind(self.req, self.step, self.t.options, self.unacknowledged,
                          self.t.sessions.supported(self.t.description))

    def _connected(self, sd):
        """The lifecycle's actions on a connection in hand."""
        td = self.t.description
        for action in self._advance("connection"):
            if action == TAKE_SESSION and self.session is None and \
                    self.t.sessions.supported(td) and not self.unacknowledged:
                self.session = self.t.sessions.acquire(td.logical_session_timeout_minutes)
                self.owned = True
            elif action == PIN_TRANSACTION and self.step is not None:
                self.step.selected(sd.address, td.topology_type in PINNING_TOPOLOGIES)

    def _use(self, sd, conn):
        """The attempt on the checked-out connection ``conn`` of server ``sd``."""
        self.last_server = sd
        if self.req.prepare is not None:
            prepare, self.req.prepare = self.req.prepare, None
            self.req.sequences, self.req.retry = prepare(conn, self.req.sequences, self.req.retry)
        self._connected(sd)
        td, step = self.t.description, self.step
        kind = retry_kind(self.req, step, self.t.options, self.unacknowledged,
                          self.session is not None, sd.server_type)
        if kind == "write" and step is None and self.txn_number is None:
            self.txn_number = self.session.next_txn_number()
        txn_number = step.txn.txn_number if step is not None else (
            self.txn_number if kind == "write" else None)
        cmd = build_command(self.req, sd, self.session, txn_number,
                            api=api_fields(self.t.options),
                            cluster_time=self.t.sessions.cluster_time, description=td,
                            step=step, command=self.command, criteria=self.criteria)
        if self.deadline is not None:
            add_max_time(cmd, self.deadline, sd, self.req.send_max_time)
            drop_wtimeout(cmd)
        if self.unacknowledged:
            return self._send_unacknowledged(conn, cmd, sd)
        reply, error = self._exchange(conn, cmd, kind)
        sent = self.req.sequences
        outcome = Outcome(reply, sd, self.session, self.deadline,
                          command_name=next(iter(self.command)),
                          statements=len(sent[0][1]) if sent else None) if error is None else None
        max_wire = (conn.hello or {}).get("maxWireVersion", 0)
        if isinstance(error, OperationFailure) and error.max_wire_version is None:
            # A load balancer's description has no wire version: the connection's hello does.
            error.max_wire_version = max_wire
        return outcome, error, kind, max_wire

    def _exchange(self, conn, cmd, kind):
        """(reply, error): ``cmd`` sent on ``conn`` (again after a reauthentication), and the
        lifecycle's actions for what came back."""
        self._advance("sent")
        while True:
            event, reply, error = _send(self.t, conn, self.req, cmd, self.operation_id,
                                        self.deadline)
            if event == "error reply" and not self.reauthenticated and \
                    reauthentication_required(error, self.t):
                event = "reauthentication required"
            elif event == "error reply" and kind == "write":
                from singlemongo.engine.retry import no_retryable_writes
                event = "no retryable writes" if no_retryable_writes(error) else event
            for action in self._advance(event):
                self._after_reply(action, conn, reply, error, kind)
            if event != "reauthentication required":
                break
            self._advance("sent")
        if event == "no retryable writes":
            from singlemongo.engine.retry import NO_RETRYABLE_WRITES
            raise OperationFailure(NO_RETRYABLE_WRITES, 20, error.details, address=conn.address)
        return reply, error

    def _after_reply(self, action, conn, reply, error, kind):
        """One lifecycle action on what an attempt's command brought back."""
        if action == RECORD_REPLY:
            self.t.sessions.advance_cluster_time(reply)
            if self.req.explicit_session is not None:
                self.req.explicit_session._after_reply(reply)
            if self.step is not None and error is None:
                self.step.on_reply(reply)
        elif action == SDAM_ERROR:
            if reply is None:
                self.t.handle_operation_error(conn, exc=error)
            else:
                self.t.handle_operation_error(conn, reply=reply)
        elif action == DIRTY_SESSION and self.session is not None:
            self.session.dirty = True
        elif action == LABEL_RETRYABLE and kind == "write":
            from singlemongo.engine.retry import RETRYABLE_WRITE_ERROR, network
            if network(error):
                error.error_labels = tuple(error.error_labels) + (RETRYABLE_WRITE_ERROR,)
        elif action == REAUTHENTICATE:
            # Auth spec, "Reauthentication": the connection authenticates again (SASL, no
            # hello) and the operation is re-attempted once, retryable or not.
            self.reauthenticated = True
            reauthenticate(self.t, conn)

    def _send_unacknowledged(self, conn, cmd, sd):
        """Write concern w: 0: OP_MSG with moreToCome; nothing is read, nothing retried."""
        try:
            self.t.events.command(self.t.clock, conn, self.req.db, cmd,
                                  self.deadline or self.t.options.socket_timeout_ms / 1000.0
                                  or None, self.req.sequences, self.operation_id,
                                  codec=self.req.codec, unacknowledged=True)
        except ConnectionFailure as exc:
            for action in self._advance("network error"):
                self._after_reply(action, conn, None, exc, None)
            raise
        self._advance("sent unacknowledged")
        conn.last_used = self.t.clock.monotonic()
        return Outcome({"ok": 1}, sd, None), None, None, 0

    def release(self):
        if self.owned and not self.req.keep_session:
            self.t.sessions.release(self.session,
                                    self.t.description.logical_session_timeout_minutes)


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
