"""Explicit sessions (as ``pymongo.client_session``; driver sessions and causal consistency
specs): ``client.start_session()`` and ``session=`` on every operation.

A ClientSession takes a server session from the client's pool on first use and gives it back
at ``end_session``. With causal consistency (the default, unless ``snapshot``), every read
after the session's first operation carries ``readConcern.afterClusterTime`` = the session's
``operationTime``. Transactions (``start_transaction``, ``commit_transaction``,
``abort_transaction``, ``with_transaction``) follow the transactions spec; their state table
and wire fields are in transaction.py.
"""
from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, TypeVar

from bson.timestamp import Timestamp

from singlemongo.errors import ConfigurationError, InvalidOperation, PyMongoError
from singlemongo.transaction import (Transaction, TransactionOptions, TransactionStep, TxnState, majority,
                          resolve_options, transition)

if TYPE_CHECKING:
    from singlemongo.client import MongoClient

# Causal consistency, "Causally consistent read and write commands" (the 2026-05 revision
# adds the writes; the list is PyMongo 4.20's).
READ_CONCERN_COMMANDS = frozenset({"find", "aggregate", "distinct", "count", "insert", "update",
                                   "delete", "findAndModify", "bulkWrite", "create",
                                   "createIndexes", "drop", "dropDatabase", "dropIndexes"})
_T = TypeVar("_T")
SNAPSHOT_MIN_WIRE_VERSION = 13  # MongoDB 5.0


class SessionOptions:
    """The options of a session: ``causal_consistency`` (default True unless ``snapshot``),
    ``snapshot``, and ``default_timeout_ms``, the timeoutMS of its commits and aborts."""

    def __init__(self, causal_consistency: Optional[bool] = None,
                 default_transaction_options: Any = None, snapshot: Optional[bool] = False,
                 default_timeout_ms: Optional[int] = None) -> None:
        if default_timeout_ms is not None and (
                isinstance(default_timeout_ms, bool) or not isinstance(default_timeout_ms, int)):
            raise TypeError(f"default_timeout_ms must be a non-negative integer "
                            f"(milliseconds) or None, not {default_timeout_ms!r}")
        if default_timeout_ms is not None and default_timeout_ms < 0:
            raise ValueError(f"default_timeout_ms must be a non-negative integer "
                             f"(milliseconds) or None, not {default_timeout_ms!r}")
        self._default_timeout_ms = default_timeout_ms
        if snapshot and causal_consistency:
            raise ConfigurationError("snapshot reads do not support causal_consistency=True")
        if default_transaction_options is not None and not isinstance(
                default_transaction_options, TransactionOptions):
            raise TypeError(f"default_transaction_options must be a TransactionOptions, not "
                            f"{default_transaction_options!r}")
        self._causal_consistency = True if causal_consistency is None and not snapshot else \
            bool(causal_consistency)
        self._snapshot = bool(snapshot)
        self._default_transaction_options = default_transaction_options

    @property
    def causal_consistency(self) -> bool:
        """Whether reads see the session's earlier writes and reads."""
        return self._causal_consistency

    @property
    def snapshot(self) -> bool:
        """Whether reads are snapshot reads: all at the point in time of the first one."""
        return self._snapshot

    @property
    def default_transaction_options(self) -> Optional[TransactionOptions]:
        """The options of transactions started without their own."""
        return self._default_transaction_options

    @property
    def default_timeout_ms(self) -> Optional[int]:
        """The timeoutMS of the session's commits and aborts when no ``timeout()`` block is
        in force (client-side operations timeout, "Sessions"); None: the client's."""
        return self._default_timeout_ms


def _timeout_block_in_force() -> bool:
    """Whether the operation has its own timeoutMS: a ``timeout()`` block (an operation's
    timeout overrides the session's, "Validation and Overrides")."""
    from singlemongo.engine.guard import timeout_block
    return timeout_block() is not None


class ClientSession:
    """A logical session; a context manager that ends it. Use it only with the client that
    started it, and from one thread."""

    def __init__(self, client: MongoClient[Any], options: SessionOptions) -> None:
        self._client = client
        self._options = options
        self._server_session: Any = None
        self._cluster_time: Optional[Mapping[str, Any]] = None
        self._operation_time: Optional[Timestamp] = None
        self._ended = False
        self._pid: Optional[int] = None  # the process the server session was taken in
        self._snapshot_time: Optional[Timestamp] = None  # snapshot sessions: atClusterTime
        self._transaction = Transaction()

    # ----- PyMongo's properties ---------------------------------------------------------------

    @property
    def client(self) -> MongoClient[Any]:
        """The client this session belongs to."""
        return self._client

    @property
    def options(self) -> SessionOptions:
        """The options the session was started with."""
        return self._options

    @property
    def session_id(self) -> Mapping[str, Any]:
        """The session's lsid document (takes a server session from the pool if needed)."""
        self._check_ended()
        return self._take_server_session().lsid  # type: ignore[no-any-return]

    @property
    def cluster_time(self) -> Optional[Mapping[str, Any]]:
        """The newest $clusterTime this session has seen."""
        return self._cluster_time

    @property
    def operation_time(self) -> Optional[Timestamp]:
        """The operationTime of the session's last operation."""
        return self._operation_time

    @property
    def has_ended(self) -> bool:
        """Whether end_session was called."""
        return self._ended

    @property
    def in_transaction(self) -> bool:
        """True between start_transaction and commit or abort."""
        return self._transaction.active

    # ----- gossip -----------------------------------------------------------------------------

    def advance_cluster_time(self, cluster_time: Mapping[str, Any]) -> None:
        """Move the session's cluster time forward (never back); TypeError for a value that
        is not a $clusterTime document (PyMongo's class for both checks)."""
        if not isinstance(cluster_time, Mapping):
            raise TypeError(f"cluster_time must be a subclass of collections.Mapping, not "
                            f"{type(cluster_time).__name__}")
        if not isinstance(cluster_time.get("clusterTime"), Timestamp):
            raise TypeError("Invalid cluster_time: its clusterTime must be a bson Timestamp")
        if self._cluster_time is None or \
                cluster_time["clusterTime"] > self._cluster_time["clusterTime"]:
            self._cluster_time = cluster_time

    def advance_operation_time(self, operation_time: Timestamp) -> None:
        """Move the session's operation time forward (never back); TypeError for a value
        that is not a bson Timestamp."""
        if not isinstance(operation_time, Timestamp):
            raise TypeError(f"operation_time must be an instance of bson.timestamp.Timestamp, "
                            f"not {type(operation_time).__name__}")
        if self._operation_time is None or operation_time > self._operation_time:
            self._operation_time = operation_time

    # ----- transactions ----------------------------------------------------------------------

    def start_transaction(self, read_concern: Any = None, write_concern: Any = None,
                          read_preference: Any = None, max_commit_time_ms: Optional[int] = None
                          ) -> _TransactionContext:
        """Start a transaction (no I/O: it starts on the server with its first command).
        Options left None come from ``default_transaction_options``, then the client. As a
        context manager (``with session.start_transaction():``) it commits when the block
        ends normally and aborts when it raises, as PyMongo's does."""
        self._check_transactions_allowed()
        options = resolve_options(
            TransactionOptions(read_concern, write_concern, read_preference, max_commit_time_ms),
            self._options.default_transaction_options, self._client)
        txn = self._transaction
        state, _ = transition(txn.state, "start")
        txn.reset()
        txn.options = options
        txn.state = state
        txn.commit_attempts = 0
        txn.txn_number = self._take_server_session().next_txn_number()
        return _TransactionContext(self)

    def _check_transactions_allowed(self) -> None:
        # Before the options are checked, as PyMongo: the session's state is the first error.
        self._check_ended()
        if self._options.snapshot:
            raise InvalidOperation("Transactions are not supported in snapshot sessions")

    def commit_transaction(self) -> None:
        """Commit the transaction; a second call re-runs the commit (with w: majority).
        Errors say whether the outcome is unknown (``UnknownTransactionCommitResult``) or
        the whole transaction may be retried (``TransientTransactionError``)."""
        self._check_ended()
        txn = self._transaction
        state, send = transition(txn.state, "commit")
        txn.state = state
        if not send:
            return
        txn.commit_attempts += 1
        assert txn.options is not None
        cmd: dict[str, Any] = {"commitTransaction": 1}
        wc = txn.options.write_concern
        if wc is not None and not wc.is_server_default:
            cmd["writeConcern"] = wc.document
        if txn.commit_attempts > 1:  # "writeConcern for commitTransaction attempts"
            cmd["writeConcern"] = majority(cmd.get("writeConcern"))
        if txn.options.max_commit_time_ms:  # 0 is the server's "no limit": not sent, as PyMongo
            cmd["maxTimeMS"] = txn.options.max_commit_time_ms
        self._run_admin(cmd)

    def abort_transaction(self) -> None:
        """Abort the transaction. The server's answer is ignored (transactions spec: "Drivers
        ignore all abortTransaction errors"); the session is unpinned whatever happens."""
        self._check_ended()
        txn = self._transaction
        state, send = transition(txn.state, "abort")
        txn.state = state
        try:
            if send:
                assert txn.options is not None
                cmd: dict[str, Any] = {"abortTransaction": 1}
                wc = txn.options.write_concern
                if wc is not None and not wc.is_server_default:
                    cmd["writeConcern"] = wc.document
                self._run_admin(cmd)
        except PyMongoError:
            pass
        finally:
            txn.pinned = None
            txn.recovery_token = None

    def _run_admin(self, cmd: dict[str, Any]) -> None:
        from singlemongo.engine.operation import execute
        from singlemongo.engine.request import Request
        from singlemongo.selection import WRITE, Criteria
        request = Request("admin", cmd, Criteria(WRITE), False, "write", explicit_session=self)
        ms = self._options.default_timeout_ms
        if ms is None or _timeout_block_in_force():
            execute(self._client._topology, request)
            return
        from singlemongo.csot import timeout  # client-side operations timeout, "Sessions"
        with timeout(ms / 1000.0):
            execute(self._client._topology, request)

    def with_transaction(self, callback: Callable[[ClientSession], _T],
                         read_concern: Any = None, write_concern: Any = None,
                         read_preference: Any = None, max_commit_time_ms: Optional[int] = None
                         ) -> _T:
        """Run ``callback(session)`` in a transaction and commit it, retrying the whole
        transaction on TransientTransactionError and the commit on
        UnknownTransactionCommitResult, for at most 120 s of the client's clock (a
        frozen-time test advances it, or the attempts' bound ends the loop). Returns what
        the callback returned."""
        from singlemongo.with_transaction import run
        self._check_transactions_allowed()
        return run(self, callback, TransactionOptions(read_concern, write_concern,
                                                      read_preference, max_commit_time_ms))

    # ----- ending -----------------------------------------------------------------------------

    def end_session(self) -> None:
        """End the session: a transaction in progress is aborted (errors ignored), and its
        server session goes back to the client's pool. Idempotent."""
        if self._ended:
            return
        if self.in_transaction:
            try:
                self.abort_transaction()
            except PyMongoError:
                pass
        self._ended = True
        self._transaction.reset()
        if self._server_session is not None:
            topology = self._client._topology
            if self._pid == topology.pid:  # a forked child never pools its parent's sessions
                topology.sessions.release(self._server_session,
                                          topology.description.logical_session_timeout_minutes)
            self._server_session = None

    def __enter__(self) -> ClientSession:
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]],
                 exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        self.end_session()

    # ----- what the engine asks (engine/operation.py) -----------------------------------------

    def _check_ended(self) -> None:
        if self._ended:
            raise InvalidOperation("Cannot use ended session")

    def _take_server_session(self) -> Any:
        topology = self._client._topology
        if self._server_session is not None and self._pid != topology.pid:
            # Driver sessions spec: a forked child never reuses the parent's sessions.
            raise InvalidOperation("this session was started before the process forked: its "
                                   "server session belongs to the parent; start a new session "
                                   "in the child")
        if self._server_session is None:
            self._server_session = topology.sessions.acquire(
                topology.description.logical_session_timeout_minutes)
            self._pid = topology.pid
        return self._server_session

    def _for_operation(self, topology: Any, req: Any) -> tuple[Any, Optional[TransactionStep]]:
        """(the server session, the TransactionStep or None) for an operation of this
        client; InvalidOperation for an ended session, another client's session, or an
        unacknowledged write outside a transaction (sessions spec)."""
        self._check_ended()
        if topology is not self._client._topology:
            raise InvalidOperation("Can only use session with the MongoClient that started it")
        name = next(iter(req.command), "")
        txn = self._transaction
        if name not in ("commitTransaction", "abortTransaction"):
            state, _ = transition(txn.state, "operation")
            if state is TxnState.NONE and txn.state is not TxnState.NONE:
                txn.reset()  # an operation after commit or abort: no transaction, unpinned
        if not txn.active and name not in ("commitTransaction", "abortTransaction"):
            if req.unacknowledged:
                raise InvalidOperation("Explicit sessions are incompatible with unacknowledged "
                                       "write concern")
            return self._take_server_session(), None
        return self._take_server_session(), TransactionStep(txn, name, req.is_read)

    def _snapshot_read_concern(self, command_name: str, max_wire_version: int
                               ) -> Optional[dict[str, Any]]:
        """Snapshot reads (sessions spec): readConcern level snapshot on every command of a
        snapshot session but a cursor's getMore and killCursors, with the atClusterTime the
        first read reported; None outside snapshot sessions."""
        if not self._options.snapshot or command_name in ("getMore", "killCursors"):
            return None
        if max_wire_version < SNAPSHOT_MIN_WIRE_VERSION:
            raise ConfigurationError("Snapshot reads require MongoDB 5.0 or later")
        doc: dict[str, Any] = {"level": "snapshot"}
        if self._snapshot_time is not None:
            doc["atClusterTime"] = self._snapshot_time
        return doc

    def _after_reply(self, reply: Mapping[str, Any]) -> None:
        """Gossip: the reply's $clusterTime and operationTime advance the session's; a
        snapshot session keeps the atClusterTime of its first read."""
        if self._options.snapshot and self._snapshot_time is None:
            cursor = reply.get("cursor")
            at = cursor.get("atClusterTime") if isinstance(cursor, Mapping) else \
                reply.get("atClusterTime")
            if isinstance(at, Timestamp):
                self._snapshot_time = at
        cluster_time = reply.get("$clusterTime")
        if isinstance(cluster_time, Mapping) and isinstance(cluster_time.get("clusterTime"),
                                                            Timestamp):
            self.advance_cluster_time(cluster_time)
        operation_time = reply.get("operationTime")
        if isinstance(operation_time, Timestamp):
            self.advance_operation_time(operation_time)

    def _read_concern_for(self, command_name: str) -> Optional[Timestamp]:
        """afterClusterTime for a read or write in a causally consistent session, else None."""
        if not self._options.causal_consistency or command_name not in READ_CONCERN_COMMANDS:
            return None
        return self._operation_time

    def _after_cluster_time(self) -> Optional[Timestamp]:
        """afterClusterTime for the command that starts a transaction (any command)."""
        return self._operation_time if self._options.causal_consistency else None


class _TransactionContext:
    """What start_transaction returns: ``with session.start_transaction():`` commits the
    transaction when the block ends normally and aborts it when the block raises (PyMongo's
    rule, and MongoDB's documented pattern); a transaction the block already committed or
    aborted is left alone."""

    def __init__(self, session: ClientSession) -> None:
        self._session = session

    def __enter__(self) -> _TransactionContext:
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]],
                 exc: Optional[BaseException], tb: Optional[TracebackType]) -> None:
        if self._session.in_transaction:
            if exc is None:
                self._session.commit_transaction()
            else:
                self._session.abort_transaction()
