"""Explicit sessions (as ``pymongo.client_session``; driver sessions and causal consistency
specs): ``client.start_session()`` and ``session=`` on every operation.

A ClientSession takes a server session from the client's pool on first use and gives it back
at ``end_session``. With causal consistency (the default, unless ``snapshot``), every read
after the session's first operation carries ``readConcern.afterClusterTime`` = the session's
``operationTime``. Transactions are not offered yet (issue 14).
"""
from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING, Any, Mapping, Optional

from bson.timestamp import Timestamp

from .errors import ConfigurationError, InvalidOperation

if TYPE_CHECKING:
    from .client import MongoClient

# Causal consistency, "Commands that support afterClusterTime".
READ_CONCERN_COMMANDS = frozenset({"find", "aggregate", "distinct", "count"})


class SessionOptions:
    """The options of a session: ``causal_consistency`` (default True unless ``snapshot``)
    and ``snapshot``."""

    def __init__(self, causal_consistency: Optional[bool] = None,
                 default_transaction_options: Any = None, snapshot: Optional[bool] = False
                 ) -> None:
        if snapshot and causal_consistency:
            raise ConfigurationError("snapshot reads do not support causal_consistency=True")
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
        """Whether reads are snapshot reads (not offered yet: refused at the first operation)."""
        return self._snapshot

    @property
    def default_transaction_options(self) -> Any:
        """Transaction options by default (transactions are not offered yet)."""
        return self._default_transaction_options


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
        """Always False: transactions are not offered yet."""
        return False

    # ----- gossip -----------------------------------------------------------------------------

    def advance_cluster_time(self, cluster_time: Mapping[str, Any]) -> None:
        """Move the session's cluster time forward (never back); TypeError or ValueError for
        a value that is not a $clusterTime document."""
        if not isinstance(cluster_time, Mapping):
            raise TypeError(f"cluster_time must be a subclass of collections.Mapping, not "
                            f"{type(cluster_time).__name__}")
        if not isinstance(cluster_time.get("clusterTime"), Timestamp):
            raise ValueError("Invalid cluster_time")
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

    # ----- ending -----------------------------------------------------------------------------

    def end_session(self) -> None:
        """End the session: its server session goes back to the client's pool. Idempotent."""
        if self._ended:
            return
        self._ended = True
        if self._server_session is not None:
            topology = self._client._topology
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
        if self._server_session is None:
            topology = self._client._topology
            self._server_session = topology.sessions.acquire(
                topology.description.logical_session_timeout_minutes)
        return self._server_session

    def _for_operation(self, topology: Any, unacknowledged: bool) -> Any:
        """The server session an operation of this client runs in; InvalidOperation for an
        ended session, another client's session or an unacknowledged write (sessions spec)."""
        self._check_ended()
        if topology is not self._client._topology:
            raise InvalidOperation("Can only use session with the MongoClient that started it")
        if unacknowledged:
            raise InvalidOperation("Explicit sessions are incompatible with unacknowledged "
                                   "write concern")
        if self._options.snapshot:
            raise InvalidOperation("snapshot sessions are not offered yet: start the session "
                                   "without snapshot=True")
        return self._take_server_session()

    def _after_reply(self, reply: Mapping[str, Any]) -> None:
        """Gossip: the reply's $clusterTime and operationTime advance the session's."""
        cluster_time = reply.get("$clusterTime")
        if isinstance(cluster_time, Mapping) and isinstance(cluster_time.get("clusterTime"),
                                                            Timestamp):
            self.advance_cluster_time(cluster_time)
        operation_time = reply.get("operationTime")
        if isinstance(operation_time, Timestamp):
            self.advance_operation_time(operation_time)

    def _read_concern_for(self, command_name: str) -> Optional[Timestamp]:
        """afterClusterTime for a read in a causally consistent session, else None."""
        if not self._options.causal_consistency or command_name not in READ_CONCERN_COMMANDS:
            return None
        return self._operation_time
