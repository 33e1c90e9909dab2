"""MongoClient beyond handing out databases (as ``pymongo.mongo_client``): sessions, the
databases' list and drop, ``server_info``, client bulk write, and what the client knows of the deployment. A
mixin of ``MongoClient`` that loads at the first use of one of its names: a one-off read
uses none of them (client.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union

from bson.codec_options import DEFAULT_CODEC_OPTIONS

from singlemongo.arguments import validate_database_name
from singlemongo.base_object import Generic, _DocumentType
from singlemongo.command_cursor import CommandCursor
from singlemongo.database import Database
from singlemongo.engine.operation import execute
from singlemongo.engine.request import Request
from singlemongo.errors import InvalidOperation
from singlemongo.replies import check
from singlemongo.sdam.server_description import ServerType, TopologyType
from singlemongo.selection import READ, WRITE, Criteria, ReadPreference as _Core

if TYPE_CHECKING:
    from singlemongo.client import MongoClient
    from singlemongo.client_session import ClientSession
    from singlemongo.engine.topology import Topology
    from singlemongo.operations import _WriteOp
    from singlemongo.results import ClientBulkWriteResult
    from singlemongo.typings import _Address
    from singlemongo.write_concern import WriteConcern


class ClientCommands(Generic[_DocumentType]):
    """What a MongoClient does beyond handing out databases."""

    def _as_client(self) -> MongoClient[_DocumentType]:
        # ClientCommands only ever lives in a MongoClient (no cast(): a call)
        return self  # type: ignore[return-value]

    if TYPE_CHECKING:  # what MongoClient gives the methods below
        _topology: Topology

        def __getitem__(self, name: str) -> Database[_DocumentType]: ...

    def start_session(self, causal_consistency: Optional[bool] = None,
                      default_transaction_options: Any = None,
                      snapshot: Optional[bool] = False,
                      default_timeout_ms: Optional[int] = None) -> ClientSession:
        """A new explicit session (a context manager): pass it as ``session=`` to the
        operations that should run in it. ``default_timeout_ms`` (client-side operations
        timeout's ``defaultTimeoutMS``, not in PyMongo) bounds its commits and aborts. No
        I/O; ConfigurationError for snapshot with causal consistency, InvalidOperation after
        close."""
        self._topology.check_open()
        from singlemongo.client_session import ClientSession, SessionOptions
        return ClientSession(self._as_client(), SessionOptions(causal_consistency,
                                                  default_transaction_options, snapshot,
                                                  default_timeout_ms))

    def list_databases(self, session: Any = None, comment: Any = None,
                       **kwargs: Any) -> CommandCursor[dict[str, Any]]:
        """A cursor over the databases (name, sizeOnDisk, empty)."""
        cmd: dict[str, Any] = {"listDatabases": 1}
        cmd.update(kwargs)
        if comment is not None:
            cmd["comment"] = comment
        admin: Database[dict[str, Any]] = self._as_client().get_database(
            "admin", DEFAULT_CODEC_OPTIONS)
        # A retryable read (retryable reads spec), on the primary, as in PyMongo.
        reply = execute(self._topology, Request("admin", cmd, Criteria(READ, _Core()), True,
                                                "read", codec=DEFAULT_CODEC_OPTIONS,
                                                explicit_session=session)).reply
        return CommandCursor(admin["$cmd"], None, documents=list(
            check("listDatabases", reply, "listDatabases")["databases"]))

    def list_database_names(self, session: Any = None, comment: Any = None) -> list[str]:
        """The databases' names."""
        return [doc["name"] for doc in self.list_databases(session, nameOnly=True,
                                                           comment=comment)]

    def drop_database(self, name_or_database: Union[str, Database[Any]], session: Any = None,
                      comment: Any = None) -> None:
        """Drop a database."""
        name = name_or_database.name if isinstance(name_or_database, Database) \
            else name_or_database
        if not isinstance(name, str):
            raise TypeError(f"name_or_database must be an instance of str or a Database, not "
                            f"{type(name).__name__}")
        validate_database_name(name)
        cmd: dict[str, Any] = {"dropDatabase": 1, "comment": comment}  # as PyMongo sends it
        self[name]["$cmd"]._write_command(cmd, retryable=False, session=session)

    def server_info(self, session: Any = None) -> dict[str, Any]:
        """The server's buildInfo (version, versionArray, ...)."""
        return self["admin"].command("buildinfo", read_preference=_Core(), session=session)

    # ----- the deployment, as the last scan saw it -------------------------------------------

    @property
    def topology_description(self) -> Any:
        """The current topology description, read without any I/O."""
        return self._topology.description

    @property
    def address(self) -> Optional[tuple[str, int]]:
        """(host, port) of the standalone, primary or mongos operations go to (selects a
        server, scanning if needed); None if there is none."""
        td = self._topology.description
        if td.topology_type is TopologyType.SHARDED and len(td.servers) > 1:
            raise InvalidOperation("Cannot use 'address' property when load balancing among "
                                   "mongoses, use 'nodes' instead.")
        sd = self._topology.select_server(Criteria(WRITE))
        return sd.address  # type: ignore[no-any-return]

    @property
    def primary(self) -> Optional[tuple[str, int]]:
        """The primary's (host, port), or None (after a scan if one is due: never waiting)."""
        for sd in self._topology.refresh().servers.values():
            if sd.server_type is ServerType.RS_PRIMARY:
                return sd.address  # type: ignore[no-any-return]
        return None

    def _addresses(self, kind: ServerType) -> set[_Address]:
        return {sd.address for sd in self._topology.refresh().servers.values()
                if sd.server_type is kind}

    @property
    def secondaries(self) -> set[_Address]:
        """The secondaries' addresses (after a scan if one is due)."""
        return self._addresses(ServerType.RS_SECONDARY)

    @property
    def arbiters(self) -> set[_Address]:
        """The arbiters' addresses (after a scan if one is due)."""
        return self._addresses(ServerType.RS_ARBITER)

    @property
    def nodes(self) -> frozenset[_Address]:
        """Every known server's address (after a scan if one is due)."""
        return frozenset(sd.address for sd in self._topology.refresh().servers.values()
                         if sd.server_type is not ServerType.UNKNOWN)

    @property
    def is_primary(self) -> bool:
        """Whether operations go to a standalone or a primary (selects a server)."""
        sd = self._topology.select_server(Criteria(WRITE))
        return sd.server_type in (ServerType.STANDALONE, ServerType.RS_PRIMARY,
                                  ServerType.LOAD_BALANCER)

    @property
    def is_mongos(self) -> bool:
        """Whether operations go to a mongos (selects a server)."""
        return self._topology.select_server(Criteria(WRITE)).server_type is ServerType.MONGOS

    def bulk_write(self, models: Sequence[_WriteOp], session: Any = None, ordered: bool = True,
                   verbose_results: bool = False, bypass_document_validation: Optional[bool] = None,
                   comment: Any = None, let: Optional[Mapping[str, Any]] = None,
                   write_concern: Optional[WriteConcern] = None) -> ClientBulkWriteResult:
        """Run write models across namespaces in MongoDB 8.0's ``bulkWrite`` commands (bulk
        write spec): each model names its ``namespace="db.collection"``. Ordered, the first
        write error stops it; unordered, every op runs. ``verbose_results=True`` adds one
        result per model. Raises ClientBulkWriteException (``write_errors``,
        ``write_concern_errors``, the top-level ``error``, ``partial_result``),
        InvalidOperation without a namespace or before MongoDB 8.0, DocumentTooLarge for an
        op that fits no command. With w: 0 it must be unordered and not verbose."""
        from singlemongo.client_bulk import bulk_write
        return bulk_write(self._as_client(), models, session, ordered, verbose_results,
                          bypass_document_validation, comment, let, write_concern)
