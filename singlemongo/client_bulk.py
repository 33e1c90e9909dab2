"""Client bulk write (bulk write spec; PyMongo's ``MongoClient.bulk_write``): write models
across namespaces become MongoDB 8.0's ``bulkWrite`` commands on admin, split into batches by
the selected server's limits, each executed with the retryable-writes rules, and merged into
one ClientBulkWriteResult (or a ClientBulkWriteException holding what succeeded).

The models add themselves with the calls a collection's bulk takes (``add_insert``,
``add_update``, ...), in the namespace the bulk is told first. A batch's ``nsInfo`` holds only
its own namespaces, so each op's namespace index is written when its batch is cut.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Optional

from bson import ObjectId
from bson.raw_bson import RawBSONDocument

from singlemongo.arguments import (hint_value, validate_is_document_type, validate_ok_for_replace,
                        validate_ok_for_update)
from singlemongo.bulk import _encode, too_large
from singlemongo.command_cursor import CommandCursor
from singlemongo.engine.operation import execute
from singlemongo.engine.request import Outcome, Request
from singlemongo.errors import (ConfigurationError, InvalidOperation, OperationFailure, PyMongoError,
                     WriteConcernError)
from singlemongo.monitoring import next_operation_id
from singlemongo.replies import check
from singlemongo.results import ClientBulkWriteResult, DeleteResult, InsertOneResult, _ClientUpdateResult
from singlemongo.selection import WRITE, Criteria
from singlemongo.wire.messages import EncodedBatch

if TYPE_CHECKING:
    from singlemongo.client import MongoClient
    from singlemongo.write_concern import WriteConcern

# "Total Message Size": room for the OP_MSG header and the command-agnostic fields.
MESSAGE_OVERHEAD = 1000
# The overhead PyMongo allows a statement over maxBsonObjectSize (the collection bulk's).
COMMAND_OVERHEAD = 16 * 1024
_CRITERIA = Criteria(WRITE)


class _ClientBulk:
    """The ops of one client bulk write: each op document with, at the same index, its kind
    and namespace (parallel lists: no tuple per op for the collector to traverse)."""

    upsert_as_given = True  # an op says upsert only when its model was given it

    def __init__(self, ordered: bool, bypass: Optional[bool], comment: Any,
                 let: Optional[Mapping[str, Any]], verbose: bool) -> None:
        if let is not None:
            validate_is_document_type("let", let)
        self.ordered, self.bypass, self.comment, self.let = ordered, bypass, comment, let
        self.verbose = verbose
        self.namespace = ""  # the namespace of the model adding itself
        self.ops: list[dict[str, Any]] = []
        self.kinds: list[str] = []
        self.namespaces: list[str] = []
        self.multi: list[bool] = []  # per op: may write many documents (not retryable)
        self.uses_collation = self.uses_array_filters = False

    def _add(self, kind: str, op: dict[str, Any], multi: bool = False) -> None:
        self.ops.append(op)
        self.kinds.append(kind)
        self.namespaces.append(self.namespace)
        self.multi.append(multi)

    def add_insert(self, document: Any) -> None:
        """An insert; the document gets an ``_id`` if it has none (as PyMongo's)."""
        validate_is_document_type("document", document)
        if not isinstance(document, RawBSONDocument) and "_id" not in document:
            document["_id"] = ObjectId()
        self._add("insert", {"insert": 0, "document": document})

    def add_update(self, selector: Mapping[str, Any], update: Any, multi: bool,
                   upsert: Optional[bool], collation: Any = None, array_filters: Any = None,
                   hint: Any = None, sort: Any = None) -> None:
        """An update (bulk write spec, "Update"): operators or a pipeline."""
        validate_ok_for_update(update)
        op: dict[str, Any] = {"update": 0, "filter": selector, "updateMods": update,
                              "multi": multi}
        self._options(op, upsert, collation, array_filters, hint, sort)
        self._add("update", op, multi)

    def add_replace(self, selector: Mapping[str, Any], replacement: Any,
                    upsert: Optional[bool], collation: Any = None, hint: Any = None,
                    sort: Any = None) -> None:
        """A replacement: an update whose ``updateMods`` has no operator."""
        validate_ok_for_replace(replacement)
        op: dict[str, Any] = {"update": 0, "filter": selector, "updateMods": replacement,
                              "multi": False}
        self._options(op, upsert, collation, None, hint, sort)
        self._add("replace", op)

    def add_delete(self, selector: Mapping[str, Any], limit: int, collation: Any = None,
                   hint: Any = None) -> None:
        """A delete of one document (``limit`` 1) or of every match (0)."""
        op: dict[str, Any] = {"delete": 0, "filter": selector, "multi": limit == 0}
        self._options(op, None, collation, None, hint, None)
        self._add("delete", op, limit == 0)

    def _options(self, op: dict[str, Any], upsert: Optional[bool], collation: Any,
                 array_filters: Any, hint: Any, sort: Any) -> None:
        """The op's options that were given, in PyMongo's order."""
        if upsert is not None:
            op["upsert"] = upsert
        if array_filters is not None:
            self.uses_array_filters = True
            op["arrayFilters"] = array_filters
        if hint is not None:
            op["hint"] = hint_value(hint)
        if collation is not None:
            self.uses_collation = True
            op["collation"] = collation
        if sort is not None:
            op["sort"] = sort

    def command(self) -> dict[str, Any]:
        """The bulkWrite command around the ops (bulk write spec, "Building a bulkWrite
        Command"): errorsOnly unless verbose, ordered always said."""
        cmd: dict[str, Any] = {"bulkWrite": 1, "errorsOnly": not self.verbose,
                               "ordered": self.ordered}
        if self.bypass is not None:
            cmd["bypassDocumentValidation"] = self.bypass
        if self.comment is not None:
            cmd["comment"] = self.comment
        if self.let is not None:
            cmd["let"] = self.let
        return cmd

    def batch(self, start: int, limits: tuple[int, int, int], cmd_size: int, codec: Any,
              acknowledged: bool) -> tuple[EncodedBatch, list[dict[str, str]], int]:
        """(ops, nsInfo, count) of the command starting at op ``start`` ("Command
        Batching"): at most maxWriteBatchSize ops, both sequences within maxMessageSizeBytes
        less the overhead and the command. DocumentTooLarge when not even the first fits
        (and, unacknowledged, for a document the server would refuse unheard)."""
        max_bson, max_message, max_count = limits
        room = max_message - MESSAGE_OVERHEAD - cmd_size
        local: dict[str, int] = {}
        ops, ns_info, encoded, size = EncodedBatch(), [], [], 0
        for index in range(start, min(len(self.ops), start + max_count)):
            kind, op, namespace = self.kinds[index], self.ops[index], self.namespaces[index]
            if not acknowledged and kind != "delete":
                _check_size(op["document" if kind == "insert" else "updateMods"], max_bson,
                            codec)
            new = namespace not in local
            op[next(iter(op))] = len(local) if new else local[namespace]
            data = _encode(op, False, codec)
            added = len(data) + (len(namespace) + 10 if new else 0)  # {"ns": namespace}
            if not acknowledged and len(data) > max_bson + COMMAND_OVERHEAD:
                raise too_large(len(data), max_bson)
            if size + added > room:
                if not ops:
                    raise too_large(len(data), max_bson + COMMAND_OVERHEAD, "operation")
                break
            if new:
                local[namespace] = len(local)
                ns_info.append({"ns": namespace})
            ops.append(op)
            encoded.append(data)
            size += added
        ops.encoded = b"".join(encoded)  # measured once, sent as measured
        return ops, ns_info, len(ops)


def _check_size(document: Any, max_bson: int, codec: Any) -> None:
    data = document.raw if isinstance(document, RawBSONDocument) else \
        _encode(document, False, codec)
    if len(data) > max_bson:
        raise too_large(len(data), max_bson)


def new_result() -> dict[str, Any]:
    """An empty result in PyMongo's ClientBulkWriteException.details shape."""
    return {"anySuccessful": False, "error": None, "writeErrors": [], "writeConcernErrors": [],
            "nInserted": 0, "nUpserted": 0, "nMatched": 0, "nModified": 0, "nDeleted": 0,
            "insertResults": {}, "updateResults": {}, "deleteResults": {}}


def _merge_counts(result: dict[str, Any], reply: Mapping[str, Any], count: int) -> None:
    """A batch's summary counts ("Handling the bulkWrite Server Response")."""
    for key in ("nInserted", "nUpserted", "nMatched", "nModified", "nDeleted"):
        result[key] += int(reply[key])
    wce = reply.get("writeConcernError")
    if wce:
        result["writeConcernErrors"].append(dict(wce))


def _any_successful(ordered: bool, errors: int, count: int, first_error: Optional[int]
                    ) -> bool:
    """Whether a batch is known to have written anything ("Handling the bulkWrite Server
    Response"): ordered, no error or not at its first op; unordered, fewer errors than ops."""
    if ordered:
        return errors == 0 or (first_error is not None and first_error > 0)
    return errors < count


def _merge_entry(bulk: _ClientBulk, result: dict[str, Any], start: int, count: int,
                 doc: Mapping[str, Any]) -> bool:
    """One document of the results cursor; True if it is a write error."""
    idx = doc.get("idx")
    if not isinstance(idx, int) or isinstance(idx, bool) or not 0 <= idx < count:
        from singlemongo.errors import MalformedReply
        raise MalformedReply(f"bulkWrite reply's results cursor: idx {idx!r} is not an index "
                             f"of the {count} operations sent", 0, dict(doc))
    index = start + idx
    kind, op = bulk.kinds[index], bulk.ops[index]
    if not doc.get("ok"):
        error = dict(doc)
        error["idx"], error["op"] = index, op
        result["writeErrors"].append(error)
        return True
    if bulk.verbose:
        if kind == "insert":
            document = op["document"]
            result["insertResults"][index] = InsertOneResult(
                document["_id"] if "_id" in document else None, True)
        elif kind == "delete":
            result["deleteResults"][index] = DeleteResult(doc, True)
        else:
            result["updateResults"][index] = _ClientUpdateResult(doc, True)
    return False


def _results(bulk: _ClientBulk, client: MongoClient[Any], outcome: Outcome,
             session: Any) -> Iterable[Mapping[str, Any]]:
    """The documents of the results cursor, with getMores on the command's server and
    session (the cursor is killed if reading it fails)."""
    admin = client.get_database("admin")
    from singlemongo.collection import Collection
    catalog: Collection[Any] = Collection(admin, "$cmd.bulkWrite")
    return CommandCursor(catalog, outcome, comment=bulk.comment, session=session)


def _read(docs: Iterable[Mapping[str, Any]],
          result: dict[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The results cursor's documents until one fails to come; that error is the bulk
    write's top-level error, as the failure document PyMongo records for it (``errmsg``,
    ``code``, ``errtype``), and what was read before it stays in the partial result."""
    iterator = iter(docs)
    while True:
        try:
            doc = next(iterator)
        except StopIteration:
            return
        except PyMongoError as exc:
            result["error"] = {"errmsg": str(exc), "code": getattr(exc, "code", None),
                               "errtype": type(exc).__name__}
            return
        yield doc


def _raise(result: dict[str, Any], verbose: bool) -> None:
    errors = result["writeErrors"]
    errors.sort(key=lambda error: error["idx"])
    first = errors[0] if errors else {}
    if first.get("code") == 20 and str(first.get("errmsg", "")).startswith(
            "Transaction numbers"):  # PyMongo's actionable error (a standalone)
        from singlemongo.engine.retry import NO_RETRYABLE_WRITES
        raise OperationFailure(NO_RETRYABLE_WRITES, 20, result)
    from singlemongo.errors import ClientBulkWriteException
    error = result["error"]
    exc = ClientBulkWriteException(result, verbose, _summary(result))
    if isinstance(error, BaseException):
        raise exc from error
    raise exc


def _summary(result: dict[str, Any]) -> str:
    parts = [f"{len(result['writeErrors'])} write error(s)",
             f"{len(result['writeConcernErrors'])} write concern error(s)"]
    if result["writeErrors"]:
        first = result["writeErrors"][0]
        parts.append(f"first: {first.get('errmsg')} (code {first.get('code')}, operation "
                     f"{first.get('idx')})")
    if result["error"] is not None:
        parts.append(f"stopped by: {result['error']}")
    return (f"batch op errors occurred: {'; '.join(parts)}; {result['nInserted']} inserted, "
            f"{result['nMatched']} matched, {result['nModified']} modified, "
            f"{result['nDeleted']} deleted, {result['nUpserted']} upserted")


def _check_unacknowledged(bulk: _ClientBulk) -> None:
    """What PyMongo refuses in a w: 0 client bulk write."""
    if bulk.verbose:
        raise InvalidOperation("Cannot request unacknowledged write concern and verbose results")
    if bulk.ordered:
        raise InvalidOperation("Cannot request unacknowledged write concern and ordered writes")
    if bulk.uses_collation:
        raise ConfigurationError("Collation is unsupported for unacknowledged writes.")
    if bulk.uses_array_filters:
        raise ConfigurationError("arrayFilters is unsupported for unacknowledged writes.")
    if bulk.bypass is not None:
        raise OperationFailure("Cannot set bypass_document_validation with unacknowledged "
                               "write concern")


def bulk_write(client: MongoClient[Any], models: Any, session: Any, ordered: bool,
               verbose_results: bool, bypass_document_validation: Optional[bool],
               comment: Any, let: Optional[Mapping[str, Any]],
               write_concern: Optional[WriteConcern]) -> ClientBulkWriteResult:
    """``MongoClient.bulk_write``: see there."""
    if not isinstance(models, (list, tuple)):
        raise TypeError(f"models must be a list of write models, not {type(models).__name__}")
    in_transaction = session is not None and getattr(session, "in_transaction", False)
    if in_transaction and write_concern is not None:
        raise InvalidOperation("Cannot set write concern after starting a transaction")
    wc = write_concern if write_concern is not None else client.write_concern
    acknowledged = wc.acknowledged or in_transaction
    bulk = _ClientBulk(ordered, bypass_document_validation, comment, let, verbose_results)
    for model in models:
        add = getattr(model, "_add_to_client_bulk", None)
        if add is None:
            raise TypeError(f"{model!r} is not a valid request")
        add(bulk)
    if not bulk.ops:
        raise InvalidOperation("No operations to execute")
    if not acknowledged:
        _check_unacknowledged(bulk)
    result = _run(client, bulk, session, wc, acknowledged)
    if not acknowledged:
        return ClientBulkWriteResult({}, False, False)
    if result["error"] is not None or result["writeErrors"] or result["writeConcernErrors"]:
        _raise(result, bulk.verbose)
    return ClientBulkWriteResult(result, True, bulk.verbose)


def _run(client: MongoClient[Any], bulk: _ClientBulk, session: Any, wc: WriteConcern,
         acknowledged: bool) -> dict[str, Any]:
    """Send every batch; the merged result (its ``error`` set if a top-level error ended
    the bulk write: no more batches are sent)."""
    topology, codec = client._topology, client.codec_options
    result = new_result()
    operation_id = next_operation_id()  # one for the whole bulk write
    base = bulk.command()
    cmd_size = len(_encode(base, False, codec))
    start = 0
    with topology.timeout_scope():
        while start < len(bulk.ops):
            sent = [0]

            def prepare(conn: Any, sequences: Any, retry: Any, start: int = start) -> Any:
                if (conn.hello or {}).get("maxWireVersion", 0) < 25:
                    raise InvalidOperation("MongoClient.bulk_write requires MongoDB server "
                                           "version 8.0+.")
                ops, ns_info, sent[0] = bulk.batch(start, conn.write_limits, cmd_size, codec,
                                                   acknowledged)
                multi = any(bulk.multi[start:start + sent[0]])
                return (("ops", ops), ("nsInfo", ns_info)), \
                    "write" if acknowledged and not multi else None
            cmd = dict(base)
            if not wc.is_server_default:
                cmd["writeConcern"] = wc.document
            if not _batch(client, bulk, result, start, sent, cmd, prepare, session,
                          operation_id, acknowledged):
                break
            start += sent[0]
    return result


def _batch(client: MongoClient[Any], bulk: _ClientBulk, result: dict[str, Any], start: int,
           sent: list[int], cmd: dict[str, Any], prepare: Any, session: Any,
           operation_id: int, acknowledged: bool) -> bool:
    """Send one batch and merge its reply and results; False: stop (a top-level error, or
    an ordered bulk write's write error). What ``prepare`` refuses before anything is sent
    (DocumentTooLarge, a server older than 8.0) is raised as it is."""
    refused: list[BaseException] = []

    def checked(*args: Any) -> Any:
        try:
            return prepare(*args)
        except Exception as exc:
            refused.append(exc)
            raise
    docs: Any = ()
    try:
        try:
            outcome: Optional[Outcome] = execute(client._topology, Request(
                "admin", cmd, _CRITERIA, False, "write", (), keep_session=acknowledged,
                unacknowledged=not acknowledged, codec=client.codec_options,
                explicit_session=session, prepare=checked, operation_id=operation_id))
            reply: Mapping[str, Any] = outcome.reply if outcome is not None else {}
        except WriteConcernError as exc:  # the reply is kept: its results still count
            outcome, reply = None, exc.reply or {}
        if not acknowledged:
            return True
        check("bulkWrite", reply, "bulkWrite")
        _merge_counts(result, reply, sent[0])
        # After a write concern error the first batch is all there is to read.
        docs = reply["cursor"]["firstBatch"] if outcome is None else \
            _results(bulk, client, outcome, session)
        first_error = None
        for doc in _read(docs, result):
            if _merge_entry(bulk, result, start, sent[0], doc):
                first_error = result["writeErrors"][-1]["idx"] - start
                if bulk.ordered:
                    break
        result["anySuccessful"] = result["anySuccessful"] or _any_successful(
            bulk.ordered, int(reply["nErrors"]), sent[0], first_error)
        if result["error"] is not None:  # a getMore of the results cursor failed
            return False
    except PyMongoError as exc:
        if refused and exc is refused[0]:
            raise
        result["error"] = exc
        return False
    finally:
        if isinstance(docs, CommandCursor):
            docs.close()
    return not (bulk.ordered and result["writeErrors"])
