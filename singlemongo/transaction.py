"""Transactions (transactions spec): TransactionOptions, the session's transaction state
table, and what one command of a transaction adds to the wire and to its errors.

``ClientSession`` (client_session.py) owns a ``Transaction``; for each command run with the
session while a transaction is open the engine asks it for a ``TransactionStep``: the
fields the command carries (``txnNumber``, ``autocommit``, ``startTransaction`` and
``readConcern`` on the first, ``recoveryToken`` on commit and abort), the mongos or load
balancer it is pinned to, whether it may be retried, and the labels its error gets.
"""
from __future__ import annotations

import enum
from typing import Any, Mapping, Optional

from singlemongo.errors import (ConfigurationError, ConnectionFailure, InvalidOperation, OperationFailure,
                     PyMongoError, WriteConcernError)
from singlemongo.reply_errors import RETRYABLE_CODES, from_server
from singlemongo.read_concern import ReadConcern
from singlemongo.engine.backpressure import SYSTEM_OVERLOADED
from singlemongo.engine.lifecycle import SEND, TRANSACTION
from singlemongo.engine.retry import RETRYABLE_WRITE_ERROR
from singlemongo.read_preferences import to_core
from singlemongo.write_concern import WriteConcern

TRANSIENT = "TransientTransactionError"
UNKNOWN_COMMIT = "UnknownTransactionCommitResult"
# Error Reporting and Retrying Transactions, "UnknownTransactionCommitResult": retryable
# write errors, MaxTimeMSExpired and WriteConcernFailed; a write concern error that only says
# the write concern cannot be satisfied (100, 79) is not unknown: a retry fails the same way.
UNKNOWN_COMMIT_CODES = RETRYABLE_CODES | {50, 64}
UNSATISFIABLE_WRITE_CONCERN = frozenset({100, 79})
# "writeConcern for commitTransaction attempts".
COMMIT_RETRY_WTIMEOUT_MS = 10_000


class TransactionOptions:
    """Options of one transaction (as ``pymongo.client_session.TransactionOptions``): each
    left None is inherited from the session's ``default_transaction_options``, then from the
    client."""

    def __init__(self, read_concern: Optional[ReadConcern] = None,
                 write_concern: Optional[WriteConcern] = None, read_preference: Any = None,
                 max_commit_time_ms: Optional[int] = None) -> None:
        if read_concern is not None and not isinstance(read_concern, ReadConcern):
            raise TypeError(f"read_concern must be a ReadConcern, not {read_concern!r}")
        if write_concern is not None:
            if not isinstance(write_concern, WriteConcern):
                raise TypeError(f"write_concern must be a WriteConcern, not {write_concern!r}")
            if not write_concern.acknowledged:
                raise ConfigurationError(f"transactions do not support unacknowledged write "
                                         f"concerns: {write_concern!r}")
        if read_preference is not None:  # a clear error now (PyMongo's words and class)
            try:
                valid = to_core(read_preference) is not None
            except (TypeError, ValueError):
                valid = False
            if not valid or isinstance(read_preference, (str, Mapping)):
                raise TypeError(f"{read_preference!r} is not valid for read_preference. See "
                                f"singlemongo.read_preferences (pymongo.read_preferences) for "
                                f"valid options.")
        if max_commit_time_ms is not None and (isinstance(max_commit_time_ms, bool) or not
                                               isinstance(max_commit_time_ms, int)):
            raise TypeError(f"max_commit_time_ms must be an integer or None, not "
                            f"{max_commit_time_ms!r}")
        self._read_concern = read_concern
        self._write_concern = write_concern
        self._read_preference = read_preference
        self._max_commit_time_ms = max_commit_time_ms

    @property
    def read_concern(self) -> Optional[ReadConcern]:
        """The read concern of the transaction's first command."""
        return self._read_concern

    @property
    def write_concern(self) -> Optional[WriteConcern]:
        """The write concern of commitTransaction and abortTransaction."""
        return self._write_concern

    @property
    def read_preference(self) -> Any:
        """The read preference of every read in the transaction (it must be primary)."""
        return self._read_preference

    @property
    def max_commit_time_ms(self) -> Optional[int]:
        """maxTimeMS of commitTransaction, if set."""
        return self._max_commit_time_ms

    def __repr__(self) -> str:
        return (f"TransactionOptions(read_concern={self._read_concern!r}, write_concern="
                f"{self._write_concern!r}, read_preference={self._read_preference!r}, "
                f"max_commit_time_ms={self._max_commit_time_ms!r})")


class TxnState(enum.Enum):
    """ClientSession changes: the five states (and "committed" without a command)."""
    NONE = "none"
    STARTING = "starting"
    IN_PROGRESS = "in_progress"
    COMMITTED = "committed"
    COMMITTED_EMPTY = "committed_empty"
    ABORTED = "aborted"


# The transaction's rows of the lifecycle table (engine/lifecycle.py), with this module's
# states: (state, event) -> (next state, whether the command is sent) or PyMongo's message.
TRANSITIONS: dict[tuple[TxnState, str], Any] = {
    (TxnState(state), event): outcome if isinstance(outcome, str)
    else (TxnState(outcome[0]), SEND in outcome[1])
    for (state, event), outcome in TRANSACTION.items()}


def transition(state: TxnState, event: str) -> tuple[TxnState, bool]:
    """(next state, whether a command is sent); InvalidOperation where the table says so."""
    outcome = TRANSITIONS[(state, event)]
    if isinstance(outcome, str):
        raise InvalidOperation(outcome)
    return outcome  # type: ignore[no-any-return]


class Transaction:
    """The transaction state of one ClientSession."""

    def __init__(self) -> None:
        self.state = TxnState.NONE
        self.options: Optional[TransactionOptions] = None
        self.txn_number = 0
        self._pinned: Any = None
        # Behind a load balancer, with pool events (engine/cmap_events.py): the connection this
        # transaction keeps checked out while pinned, and what checks it in.
        self.held_connection: Any = None
        self._check_in: Any = None
        self.recovery_token: Optional[Mapping[str, Any]] = None
        self.commit_attempts = 0

    @property
    def pinned(self) -> Any:
        """The mongos (or load balancer) address, sharded and load balanced only."""
        return self._pinned

    @pinned.setter
    def pinned(self, address: Any) -> None:
        self._pinned = address
        if address is None:
            self.release()

    def hold(self, conn: Any, check_in: Any) -> None:
        """Keep ``conn`` checked out until the transaction is unpinned."""
        self.release()
        self.held_connection, self._check_in = conn, check_in

    def release(self) -> None:
        """Check the held connection in, if any."""
        check_in, self._check_in, self.held_connection = self._check_in, None, None
        if check_in is not None:
            check_in()

    @property
    def active(self) -> bool:
        """Between start_transaction and commit or abort."""
        return self.state in (TxnState.STARTING, TxnState.IN_PROGRESS)

    def reset(self) -> None:
        """Back to "no transaction": unpinned, no recovery token."""
        self.state = TxnState.NONE
        self.pinned = None
        self.recovery_token = None


def resolve_options(options: Optional[TransactionOptions], defaults: Optional[TransactionOptions],
                    client: Any) -> TransactionOptions:
    """Each option from the call, else the session's defaults, else the client."""
    def pick(name: str, client_value: Any) -> Any:
        for source in (options, defaults):
            value = getattr(source, name, None) if source is not None else None
            if value is not None:
                return value
        return client_value
    return TransactionOptions(pick("read_concern", client.read_concern),
                              pick("write_concern", client.write_concern),
                              pick("read_preference", client.read_preference),
                              pick("max_commit_time_ms", None))


class TransactionStep:
    """One command of a transaction, as the engine runs it (engine/operation.py)."""

    def __init__(self, txn: Transaction, command_name: str, is_read: bool) -> None:
        self.txn = txn
        self.kind = command_name if command_name in ("commitTransaction",
                                                     "abortTransaction") else "operation"
        self.first = txn.state is TxnState.STARTING
        self.sent = False
        self.non_overload_failure = False
        assert txn.options is not None
        if is_read and self.kind == "operation":
            check_read_preference(txn.options.read_preference)

    @property
    def ends_transaction(self) -> bool:
        """True for commitTransaction and abortTransaction."""
        return self.kind != "operation"

    @property
    def retry_kind(self) -> Optional[str]:
        """Interaction with Retryable Writes: only commit and abort are retried (always)."""
        return "write" if self.ends_transaction else None

    def selected(self, address: Any, pins: bool) -> None:
        """Mongos Pinning: the first command's server is the transaction's."""
        if pins and self.txn.pinned is None and not self.ends_transaction:
            self.txn.pinned = address

    def apply(self, cmd: dict[str, Any], after_cluster_time: Any) -> None:
        """The transaction fields ("Constructing commands within a transaction"); what the
        command inherited from its collection (readConcern, writeConcern) is not sent."""
        if not self.ends_transaction:
            cmd.pop("readConcern", None)
            cmd.pop("writeConcern", None)
        if self.first and not self.ends_transaction:
            cmd["startTransaction"] = True
            read_concern = dict(self.txn.options.read_concern.document
                                if self.txn.options and self.txn.options.read_concern else {})
            if after_cluster_time is not None:
                read_concern["afterClusterTime"] = after_cluster_time
            if read_concern:
                cmd["readConcern"] = read_concern
        cmd["autocommit"] = False
        if self.ends_transaction and self.txn.recovery_token is not None:
            cmd["recoveryToken"] = self.txn.recovery_token
        self.sent = True

    def on_reply(self, reply: Mapping[str, Any]) -> None:
        """recoveryToken field: the newest one is sent with commit and abort."""
        token = reply.get("recoveryToken")
        if isinstance(token, Mapping):
            self.txn.recovery_token = token

    def before_retry(self, cmd: dict[str, Any], error: BaseException) -> None:
        """A retry of commit or abort stays on the transaction's mongos (seed: Server
        Selection, "Sharded Transactions": every command after the first goes to the
        original mongos; DESIGN.md, the seed wins over the transactions spec's unpinning);
        commit with w: majority unless every failure so far was an overload (Interaction
        with Client Backpressure)."""
        if SYSTEM_OVERLOADED not in getattr(error, "error_labels", ()):
            self.non_overload_failure = True
        if self.kind == "commitTransaction" and self.non_overload_failure:
            cmd["writeConcern"] = majority(cmd.get("writeConcern"))

    def label(self, error: PyMongoError) -> None:
        """The labels the driver adds (Error Reporting and Retrying Transactions), and the
        unpinning they call for ("When to unpin")."""
        labels = list(error.error_labels)
        network = isinstance(error, ConnectionFailure) and not from_server(error)
        if self.kind == "operation":
            if network and TRANSIENT not in labels:
                labels.append(TRANSIENT)
        elif self.kind == "commitTransaction" and unknown_commit_result(error, network):
            labels = [l for l in labels if l != TRANSIENT]
            if UNKNOWN_COMMIT not in labels:
                labels.append(UNKNOWN_COMMIT)
        error.error_labels = tuple(labels)
        # "When to unpin": the transaction is over (a transient error aborts it). A commit
        # whose result is unknown stays pinned: its retries go to the original mongos.
        if TRANSIENT in labels or self.kind == "abortTransaction":
            self.txn.pinned = None

    def finish(self) -> None:
        """The session is "in progress" after its first command was sent, even on error."""
        if self.sent and self.first and self.txn.state is TxnState.STARTING:
            self.txn.state, _ = transition(self.txn.state, "sent")


def check_read_preference(read_preference: Any) -> None:
    """transactions spec, "readPreference": reads in a transaction are on the primary."""
    core = to_core(read_preference)
    if core is not None and core.mode != "primary":
        raise InvalidOperation(f"read preference in a transaction must be primary, not "
                               f"{core.mode}")


def majority(write_concern: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """w: majority, the other options kept, wtimeout 10000 if none."""
    doc = dict(write_concern or {})
    doc["w"] = "majority"
    doc.setdefault("wtimeout", COMMIT_RETRY_WTIMEOUT_MS)
    return doc


def unknown_commit_result(error: BaseException, network: bool) -> bool:
    """Whether a failed commit's outcome is unknown: network and selection errors, retryable
    write errors, MaxTimeMSExpired, and write concern errors that a retry may satisfy."""
    if network or RETRYABLE_WRITE_ERROR in getattr(error, "error_labels", ()):
        return True
    if isinstance(error, WriteConcernError):
        return error.code not in UNSATISFIABLE_WRITE_CONCERN
    if isinstance(error, (OperationFailure, ConnectionFailure)):
        return getattr(error, "code", None) in UNKNOWN_COMMIT_CODES
    return False
