"""Bulk writes (CRUD spec, "Bulk API"; as PyMongo's ``bulk_write``): write models become runs
of insert, update and delete commands, split into batches by the server's limits, executed
with the retryable-writes rules, and merged into one result.

Ordered: runs keep the given order and stop at the first batch with a write error.
Unordered: inserts, then updates, then deletes, every batch runs. Write errors carry the
index of their operation in the request and the operation itself (``op``), as in PyMongo; any
write error or write concern error raises BulkWriteError with the whole result.
"""
from __future__ import annotations

import itertools
import struct
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Optional, Sequence

import bson
from bson import ObjectId
from bson.raw_bson import RawBSONDocument

from singlemongo.arguments import (hint_value, validate_is_document_type,
                        validate_ok_for_replace, validate_ok_for_update)
from singlemongo.monitoring import next_operation_id
from singlemongo import errors
from singlemongo.errors import BulkWriteError, ConfigurationError, InvalidOperation, OperationFailure
from singlemongo.results import BulkWriteResult
from singlemongo.wire.messages import EncodedBatch
from singlemongo.write_concern import WriteConcern

if TYPE_CHECKING:
    from singlemongo.collection import Collection

INSERT, UPDATE, DELETE = 0, 1, 2
COMMANDS = (("insert", "documents"), ("update", "updates"), ("delete", "deletes"))
# Room for the command around the documents of a batch (PyMongo's, and the spec's, 16 KiB).
COMMAND_OVERHEAD = 16 * 1024


def too_large(size: int, max_size: int, what: str = "BSON document") -> errors.DocumentTooLarge:
    """DocumentTooLarge for a document (or batch) over the server's limit, PyMongo's message."""
    return errors.DocumentTooLarge(
        f"{what} too large ({size} bytes) - the connected server supports "
        f"BSON document sizes up to {max_size} bytes (its "
        f"maxBsonObjectSize).")


_COUNTER = 1 << 24  # an ObjectId's counter is 3 bytes (ObjectId spec)


def object_ids(block: int = 1024) -> Iterator[ObjectId]:
    """New ObjectIds, as ``ObjectId()`` makes them (ObjectId spec: the time, the process's
    random value, the counter), at a quarter of the cost: a block of counters is taken at
    once, for ids that share the first one's time and random value (bson's counter is
    advanced past them, so no other ObjectId repeats one). One by one if another ObjectId
    was made between (a thread), or bson keeps its counter elsewhere."""
    lock = getattr(ObjectId, "_inc_lock", None)
    while True:
        first = ObjectId()
        yield first
        binary = first.binary
        prefix, start = binary[:9], int.from_bytes(binary[9:], "big") + 1
        if lock is None or not isinstance(getattr(ObjectId, "_inc", None), int):
            continue
        with lock:
            taken = ObjectId._inc == start % _COUNTER  # type: ignore[attr-defined]
            if taken:
                ObjectId._inc = (start + block) % _COUNTER  # type: ignore[attr-defined]
        if taken:
            for counter in range(start, start + block):
                yield ObjectId(prefix + (counter % _COUNTER).to_bytes(3, "big"))


class _Run:
    """Consecutive operations of one kind (unordered: all of them), with the request index
    of each."""

    def __init__(self, kind: int, ops: list[Mapping[str, Any]], indexes: Sequence[int]) -> None:
        self.kind, self.ops, self.indexes = kind, ops, indexes


class _Bulk:
    """The operations of one bulk write, as the write models add them."""

    upsert_as_given = False  # UpdateOne sends upsert: false when not given (PyMongo's form)

    def __init__(self, collection: Collection[Any], ordered: bool,
                 bypass_document_validation: Optional[bool], comment: Any = None,
                 let: Optional[Mapping[str, Any]] = None) -> None:
        if let is not None:
            validate_is_document_type("let", let)
        self.collection, self.ordered = collection, ordered
        self.bypass, self.comment, self.let = bypass_document_validation, comment, let
        # Each statement and, at the same index, its kind (two lists: no tuple per statement).
        self.ops: list[Mapping[str, Any]] = []
        self.kinds: list[int] = []
        self.multi = 0  # statements that may write many documents (not retryable)

    def add_insert(self, document: Any) -> None:
        if type(document) is not dict:  # a plain dict skips the ABC checks (insert_many speed)
            validate_is_document_type("document", document)
            if isinstance(document, RawBSONDocument):
                self.ops.append(document)
                self.kinds.append(INSERT)
                return
        if "_id" not in document:
            document["_id"] = ObjectId()
        self.ops.append(document)
        self.kinds.append(INSERT)

    def add_inserts(self, documents: Iterable[Any]) -> list[Any]:
        """``add_insert`` for each document; their ``_id``s, raw documents left out (as
        PyMongo's ``inserted_ids``). Plain dicts take a path of their own (insert_many speed)."""
        ids: list[Any] = []
        append, kind, add_id, add = self.ops.append, self.kinds.append, ids.append, self.add_insert
        new_id = object_ids().__next__
        for document in documents:
            if type(document) is dict:
                if "_id" not in document:
                    document["_id"] = new_id()
                append(document)
                kind(INSERT)
            else:
                add(document)
                if isinstance(document, RawBSONDocument):
                    continue
            add_id(document["_id"])
        return ids

    def add_update(self, selector: Mapping[str, Any], update: Any, multi: bool,
                   upsert: Optional[bool], collation: Any = None, array_filters: Any = None,
                   hint: Any = None, sort: Any = None) -> None:
        """An update statement; ``hint`` as the user gave it."""
        # A dict of operators is checked here; anything else by the validator (its errors).
        if type(update) is not dict or not update or next(iter(update))[:1] != "$":
            validate_ok_for_update(update)
        op: dict[str, Any] = {"q": selector, "u": update, "multi": multi}
        if upsert is not None:
            op["upsert"] = upsert
        if collation is not None or array_filters is not None or hint is not None or \
                sort is not None:  # most statements have none: no call
            self._options(op, collation, array_filters, hint, sort)
        self.multi += multi
        self.ops.append(op)
        self.kinds.append(UPDATE)

    def add_replace(self, selector: Mapping[str, Any], replacement: Any,
                    upsert: Optional[bool], collation: Any = None, hint: Any = None,
                    sort: Any = None) -> None:
        """A replacement statement; ``hint`` as the user gave it."""
        if type(replacement) is not dict or next(iter(replacement), "")[:1] == "$":
            validate_ok_for_replace(replacement)
        op: dict[str, Any] = {"q": selector, "u": replacement}
        if upsert is not None:
            op["upsert"] = upsert
        if collation is not None or hint is not None or sort is not None:
            self._options(op, collation, None, hint, sort)
        self.ops.append(op)
        self.kinds.append(UPDATE)

    def add_delete(self, selector: Mapping[str, Any], limit: int, collation: Any = None,
                   hint: Any = None) -> None:
        """A delete statement; ``hint`` as the user gave it."""
        op: dict[str, Any] = {"q": selector, "limit": limit}
        if collation is not None or hint is not None:
            self._options(op, collation, None, hint, None)
        self.multi += limit == 0
        self.ops.append(op)
        self.kinds.append(DELETE)

    @staticmethod
    def _options(op: dict[str, Any], collation: Any, array_filters: Any, hint: Any,
                 sort: Any) -> None:
        """The statement's options that were given, in PyMongo's order."""
        for key, value in (("collation", collation),
                           ("arrayFilters", array_filters), ("hint", hint_value(hint)),
                           ("sort", sort)):
            if value is not None:
                op[key] = value

    def runs(self) -> Iterator[_Run]:
        ops = self.ops
        if self.ordered:  # runs of consecutive kinds; their indexes are ranges
            start = 0
            for kind, group in itertools.groupby(self.kinds):
                end = start + len(list(group))
                yield _Run(kind, ops if end - start == len(ops) else ops[start:end],
                           range(start, end))
                start = end
            return
        indexes: tuple[list[int], ...] = ([], [], [])
        for index, kind in enumerate(self.kinds):
            indexes[kind].append(index)
        for kind, where in enumerate(indexes):
            if where:
                yield _Run(kind, ops if len(where) == len(ops) else [ops[i] for i in where],
                           where)

    def command(self, kind: int) -> dict[str, Any]:
        name = COMMANDS[kind][0]
        cmd: dict[str, Any] = {name: self.collection.name, "ordered": self.ordered}
        if self.comment is not None:
            cmd["comment"] = self.comment
        if self.let is not None and kind != INSERT:
            cmd["let"] = self.let
        if self.bypass is not None and kind != DELETE:
            cmd["bypassDocumentValidation"] = self.bypass
        return cmd


def retryable(bulk: _Bulk, kind: int, ops: list[Mapping[str, Any]]) -> bool:
    """A batch is a retryable write when each of its statements writes one document
    (retryable writes spec: a multi update or delete makes that command not retryable; the
    bulk's other commands still are)."""
    return kind == INSERT or not bulk.multi or \
        not any(op.get("multi") or op.get("limit") == 0 for op in ops)


# bson's encoder behind ``bson.encode``, without its check of the codec options (a
# collection's are checked when it is made): a Python call less per statement.
_encode = getattr(bson, "_dict_to_bson", None) or bson.encode
_CHUNK = 512  # operations encoded and measured together (at most one chunk encoded in vain)


_ARRAY_START = 11  # a wrapper's int32 size, 0x04 "a" 0x00, its array's int32 size
_INT32 = struct.Struct("<i")


def each_encoded(docs: list[Mapping[str, Any]], codec: Any) -> list[bytes]:
    """The BSON of each of ``docs``, from one call of bson's encoder: they are encoded as the
    array of a wrapper document, which is cut at each element. bson converts the codec
    options at every call, which costs more than encoding a small statement. Not for
    documents to insert: an array's elements keep their key order, and a top-level
    document's ``_id`` is moved first."""
    data = _encode({"a": docs}, False, codec)
    out, at = [], _ARRAY_START
    find, size_at = data.find, _INT32.unpack_from
    for _ in docs:
        at = find(b"\x00", at + 1) + 1  # past the element's type byte and key ("0", "1", ...)
        end = at + size_at(data, at)[0]
        out.append(data[at:end])
        at = end
    return out


def next_batch(run: _Run, start: int, limits: tuple[int, int, int], codec: Any
               ) -> list[Mapping[str, Any]]:
    """The operations of the command that starts at ``start``: at most maxWriteBatchSize of
    them in maxMessageSizeBytes. An operation over maxBsonObjectSize raises DocumentTooLarge
    when it would be first; otherwise it starts the next command (the ones before it are
    sent, as PyMongo sends them)."""
    max_bson, max_message, max_count = limits
    max_op = max_bson + (0 if run.kind == INSERT else COMMAND_OVERHEAD)
    room = max_message - COMMAND_OVERHEAD
    ops, end, encode = run.ops, min(len(run.ops), start + max_count), _encode
    batch, size = EncodedBatch(), 0
    encoded: list[bytes] = []
    for at in range(start, end, _CHUNK):
        chunk = ops[at:min(at + _CHUNK, end)]
        data: list[Any]
        if run.kind != INSERT or all(type(op) is dict and next(iter(op)) == "_id"
                                     for op in chunk):  # no _id to move first: one call
            data = each_encoded(chunk, codec)
        else:  # type() first: isinstance against RawBSONDocument (a Mapping) is an ABC check
            data = [encode(op, False, codec) if type(op) is dict else
                    op.raw if isinstance(op, RawBSONDocument) else encode(op, False, codec)
                    for op in chunk]
        sizes = list(map(len, data))
        total = sum(sizes)
        if max(sizes) <= max_op and size + total <= room:  # the whole chunk fits
            batch.extend(chunk)
            encoded.extend(data)
            size += total
            continue
        for op, op_data, op_size in zip(chunk, data, sizes):
            if batch and (op_size > max_op or size + op_size > room):
                break
            if op_size > max_op:
                raise too_large(op_size, max_bson)
            batch.append(op)
            encoded.append(op_data)
            size += op_size
        break
    batch.encoded = b"".join(encoded)  # measured once, sent as measured: never encoded twice
    return batch


def _commands(bulk: _Bulk, run: _Run, session: Any, operation_id: int,
              sender_at: Any = None) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """(offset in the run, reply) for each command of ``run``. Each batch is cut to the
    limits of the connection its command gets (``Request.prepare``): one selection per
    command. ``sender_at(offset)``: the collection that sends the command at ``offset`` (an
    unacknowledged bulk's; its commands are never retried, as PyMongo's)."""
    coll = bulk.collection
    name, field = COMMANDS[run.kind]
    offset = 0
    while offset < len(run.ops):
        sent: list[Mapping[str, Any]] = []

        def prepare(conn: Any, sequences: Any, retry: Any, start: int = offset,
                    sent: list[Mapping[str, Any]] = sent) -> Any:
            batch = next_batch(run, start, conn.write_limits, coll.codec_options)
            sent[:] = batch
            retry = sender_at is None and retryable(bulk, run.kind, batch)
            return ((field, batch),), "write" if retry else None
        sender = coll if sender_at is None else sender_at(offset)
        reply = sender._write_command(bulk.command(run.kind), session=session, check=False,
                                      prepare=prepare, operation_id=operation_id)
        yield offset, reply
        offset += len(sent)


def new_result() -> dict[str, Any]:
    """An empty result in PyMongo's BulkWriteError.details shape."""
    return {"writeErrors": [], "writeConcernErrors": [], "nInserted": 0, "nUpserted": 0,
            "nMatched": 0, "nModified": 0, "nRemoved": 0, "upserted": []}


def merge(run: _Run, result: dict[str, Any], offset: int, reply: Mapping[str, Any]) -> None:
    """Add one command's reply to the bulk result (CRUD spec, "Merging Results")."""
    n = int(reply.get("n", 0))
    if run.kind == INSERT:
        result["nInserted"] += n
    elif run.kind == DELETE:
        result["nRemoved"] += n
    else:
        upserted = reply.get("upserted") or []
        for doc in upserted:
            result["upserted"].append({"index": run.indexes[doc["index"] + offset],
                                       "_id": doc["_id"]})
        result["nUpserted"] += len(upserted)
        result["nMatched"] += n - len(upserted)
        result["nModified"] += int(reply.get("nModified", 0))
    for error in reply.get("writeErrors") or ():
        entry = dict(error)
        entry["index"] = run.indexes[error["index"] + offset]
        entry["op"] = run.ops[error["index"] + offset]
        result["writeErrors"].append(entry)
    wce = reply.get("writeConcernError")
    if wce:
        result["writeConcernErrors"].append(dict(wce))


def execute(bulk: _Bulk, session: Any = None) -> BulkWriteResult:
    """Run every batch of the bulk; raise BulkWriteError if anything failed."""
    if not bulk.ops:
        raise InvalidOperation("No operations to execute")
    coll = bulk.collection
    acknowledged = coll._acknowledged(session)
    if not acknowledged:
        _check_unacknowledged(bulk)
        if bulk.ordered:
            _execute_ordered_unacknowledged(bulk, session)
            return BulkWriteResult({}, False)
    result = new_result()
    operation_id = next_operation_id()  # one for the whole bulk write, as PyMongo's
    with coll._topology.timeout_scope():
        for run in bulk.runs():
            for offset, reply in _commands(bulk, run, session, operation_id):
                if not acknowledged:
                    continue
                merge(run, result, offset, reply)
                if bulk.ordered and result["writeErrors"]:
                    break
            if bulk.ordered and result["writeErrors"]:
                break
    if not acknowledged:
        return BulkWriteResult({}, False)
    if result["writeErrors"] or result["writeConcernErrors"]:
        result["writeErrors"].sort(key=lambda error: error["index"])
        first = result["writeErrors"][0] if result["writeErrors"] else {}
        if first.get("code") == 20 and str(first.get("errmsg", "")).startswith(
                "Transaction numbers"):  # PyMongo's actionable error (MMAPv1, a standalone)
            from singlemongo.engine.retry import NO_RETRYABLE_WRITES
            raise OperationFailure(NO_RETRYABLE_WRITES, 20, result, address=None)
        raise BulkWriteError(result, _summary(result), address=None)
    return BulkWriteResult(result, True)


def _check_unacknowledged(bulk: _Bulk) -> None:
    """What PyMongo refuses in a w: 0 bulk write (nothing would say it was understood)."""
    ops = [op for op in bulk.ops if isinstance(op, Mapping)]
    if any("collation" in op for op in ops):
        raise ConfigurationError("Collation is unsupported for unacknowledged writes.")
    if any("arrayFilters" in op for op in ops):
        raise ConfigurationError("arrayFilters is unsupported for unacknowledged writes.")
    if bulk.bypass:
        raise OperationFailure("Cannot set bypass_document_validation with unacknowledged "
                               "write concern")


def _execute_ordered_unacknowledged(bulk: _Bulk, session: Any) -> None:
    """An ordered w: 0 bulk write, as PyMongo sends it: each command acknowledged (so the
    first write error stops the rest, as "ordered" promises), but a last command of a single
    operation with w: 0. Errors are not raised: the write was unacknowledged."""
    coll = bulk.collection
    acknowledging = coll.with_options(write_concern=WriteConcern())
    operation_id = next_operation_id()
    with coll._topology.timeout_scope():
        runs = list(bulk.runs())
        for number, run in enumerate(runs):
            def sender_at(offset: int, final: bool = number == len(runs) - 1,
                          run: _Run = run) -> Any:
                return coll if final and offset == len(run.ops) - 1 else acknowledging
            try:
                for _, reply in _commands(bulk, run, session, operation_id, sender_at):
                    if reply.get("writeErrors"):
                        return
            except OperationFailure:
                return


def _summary(result: dict[str, Any]) -> str:
    write_errors = result["writeErrors"]
    first = write_errors[0] if write_errors else result["writeConcernErrors"][0]
    return (f"batch op errors occurred: {len(write_errors)} write error(s), "
            f"{len(result['writeConcernErrors'])} write concern error(s); first: "
            f"{first.get('errmsg')} (code {first.get('code')}, operation "
            f"{first.get('index', '?')}); {result['nInserted']} inserted, "
            f"{result['nMatched']} matched, {result['nModified']} modified, "
            f"{result['nRemoved']} removed, {result['nUpserted']} upserted")
