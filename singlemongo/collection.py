"""Collection: CRUD, aggregation and indexes, each categorised as the server selection spec
says (writes go to the primary; reads use the read preference of the call, collection,
database or client, most specific first)."""
import functools

from bson import ObjectId

from .cursor import Cursor
from .wire.documents import check_document, check_update
from .errors import (BulkWriteError, DuplicateKeyError, InvalidDocument, OperationFailure,
                     WriteError)
from .engine.operation import Request, execute
from .results import DeleteResult, InsertManyResult, InsertOneResult, UpdateResult
from .selection.read_preference import ReadPreference
from .selection.selector import READ, WRITE, Criteria

DEFAULT_MAX_WRITE_BATCH = 100_000
_MESSAGE_HEADROOM = 16 * 1024


# Legacy query modifiers and the find command fields they stand for (PyMongo's unwrapping).
LEGACY_MODIFIERS = {"$query": "filter", "$orderby": "sort", "$hint": "hint",
                    "$comment": "comment", "$maxScan": "maxScan", "$maxTimeMS": "maxTimeMS",
                    "$max": "max", "$min": "min", "$returnKey": "returnKey",
                    "$showRecordId": "showRecordId", "$showDiskLoc": "showRecordId",
                    "$snapshot": "snapshot"}


class ReturnDocument:
    BEFORE = False
    AFTER = True


def _as_read_preference(value):
    if value is None or isinstance(value, ReadPreference):
        return value
    return ReadPreference(value)


def index_keys(keys):
    if isinstance(keys, str):
        return {keys: 1}
    if isinstance(keys, dict):
        return dict(keys)
    return {k: d for k, d in keys}


def index_name(keys):
    return "_".join(f"{k}_{d}" for k, d in index_keys(keys).items())


def _projection(projection):
    if isinstance(projection, (list, tuple)):
        return {p: 1 for p in projection}
    return dict(projection)


def _raise_write_errors(reply, address):
    errors = reply.get("writeErrors")
    if not errors:
        return
    first = errors[0]
    cls = DuplicateKeyError if first.get("code") == 11000 else WriteError
    raise cls(f"write failed: {first.get('errmsg')} (code {first.get('code')})",
              first.get("code"), dict(first), address)


def _one_deadline(method):
    """timeoutMS covers the whole call: the limits lookup (which may scan and connect) and
    every command the call sends share one deadline."""
    @functools.wraps(method)
    def within_timeout(self, *args, **kwargs):
        with self.database.client._topology.timeout_scope():
            return method(self, *args, **kwargs)
    return within_timeout


class Collection:
    def __init__(self, database, name, read_preference=None):
        if not isinstance(name, str) or not name or "$" in name or name.startswith(".") \
                or "\x00" in name:
            raise InvalidDocument(f"invalid collection name {name!r}")
        self.database = database
        self.name = name
        self._read_preference = _as_read_preference(read_preference)

    def __repr__(self):
        return f"Collection({self.full_name!r})"

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return Collection(self.database, f"{self.name}.{name}", self._read_preference)

    def __getitem__(self, name):
        return Collection(self.database, f"{self.name}.{name}", self._read_preference)

    @property
    def full_name(self):
        return f"{self.database.name}.{self.name}"

    @property
    def read_preference(self):
        return self._read_preference or self.database.read_preference

    def with_options(self, read_preference=None):
        return Collection(self.database, self.name, read_preference or self._read_preference)

    # ----- plumbing ----------------------------------------------------------------------

    @property
    def _options(self):
        return self.database.client.options

    def _write_concern(self, cmd):
        o = self._options
        wc = {k: v for k, v in (("w", o.w), ("wtimeout", o.wtimeout_ms), ("j", o.journal))
              if v is not None}
        if wc:
            cmd["writeConcern"] = wc
        return cmd

    def _read_concern(self, cmd):
        if self._options.read_concern_level is not None:
            cmd["readConcern"] = {"level": self._options.read_concern_level}
        return cmd

    def _criteria(self, read_preference):
        return Criteria(READ, _as_read_preference(read_preference) or self.read_preference)

    @property
    def _acknowledged(self):
        return self._options.w != 0

    def _write(self, cmd, sequences=(), retry="write"):
        """Run a write; with w: 0 it is sent unacknowledged (moreToCome, no reply)."""
        outcome = execute(self.database.client._topology, Request(
            self.database.name, self._write_concern(cmd), Criteria(WRITE), False, retry,
            sequences, unacknowledged=not self._acknowledged))
        return outcome.reply, outcome.server

    def _read(self, cmd, read_preference=None):
        return execute(self.database.client._topology, Request(
            self.database.name, self._read_concern(cmd), self._criteria(read_preference),
            True, "read")).reply

    def _limits(self):
        """(maxBsonObjectSize, maxMessageSizeBytes, maxWriteBatchSize) of the server the write
        will go to, from its handshake (selecting and connecting first, as the write would)."""
        return self.database.client._topology.server_limits(Criteria(WRITE))

    # ----- reads -------------------------------------------------------------------------

    def find(self, filter=None, projection=None, sort=None, skip=0, limit=0, batch_size=0,
             hint=None, max_time_ms=None, read_preference=None):
        cmd = {"find": self.name, "filter": dict(filter or {})}
        if "$query" in cmd["filter"]:  # a legacy query with modifiers, unwrapped as PyMongo does
            cmd.update((LEGACY_MODIFIERS.get(k, k), v) for k, v in cmd.pop("filter").items())
            if not isinstance(cmd.get("filter"), dict):
                raise InvalidDocument(f"$query must be a document, not {cmd.get('filter')!r}")
        if projection is not None:
            cmd["projection"] = _projection(projection)
        if sort is not None:
            cmd["sort"] = index_keys(sort)
        if skip:
            cmd["skip"] = skip
        if hint:
            cmd["hint"] = hint if isinstance(hint, str) else index_keys(hint)
        if max_time_ms:
            cmd["maxTimeMS"] = max_time_ms
        if limit:
            cmd["limit"] = abs(limit)
            if limit < 0:
                cmd["singleBatch"] = True
        if batch_size:
            cmd["batchSize"] = batch_size
        return Cursor(self, self._read_concern(cmd), self._criteria(read_preference),
                      limit=limit, batch_size=batch_size)

    def find_one(self, filter=None, *args, **kwargs):
        if filter is not None and not isinstance(filter, dict):
            filter = {"_id": filter}
        kwargs["limit"] = -1
        for doc in self.find(filter, *args, **kwargs):
            return doc
        return None

    def count_documents(self, filter=None, skip=0, limit=0, read_preference=None):
        pipeline = [{"$match": dict(filter or {})}]
        if skip:
            pipeline.append({"$skip": skip})
        if limit:
            pipeline.append({"$limit": limit})
        pipeline.append({"$group": {"_id": 1, "n": {"$sum": 1}}})
        docs = list(self.aggregate(pipeline, read_preference=read_preference))
        return docs[0]["n"] if docs else 0

    def estimated_document_count(self, read_preference=None):
        return int(self._read({"count": self.name}, read_preference)["n"])

    def distinct(self, key, filter=None, read_preference=None):
        cmd = {"distinct": self.name, "key": key, "query": dict(filter or {})}
        return self._read(cmd, read_preference)["values"]

    def aggregate(self, pipeline, batch_size=0, read_preference=None):
        pipeline = list(pipeline)
        cmd = {"aggregate": self.name, "pipeline": pipeline,
               "cursor": {"batchSize": batch_size} if batch_size else {}}
        writes = bool(pipeline) and any(s in pipeline[-1] for s in ("$out", "$merge"))
        if writes:  # $out / $merge must run on the primary, with the write concern
            return Cursor(self, self._write_concern(cmd), Criteria(WRITE), retry=None,
                          is_read=False)
        return Cursor(self, self._read_concern(cmd), self._criteria(read_preference),
                      batch_size=batch_size)

    # ----- writes ------------------------------------------------------------------------

    @_one_deadline
    def insert_one(self, document):
        check_document(document, "insert_one document", replacement=True)  # before any I/O
        if "_id" not in document:
            document["_id"] = ObjectId()
        check_document(document, "insert_one document", self._limits()[0], replacement=True)
        reply, server = self._write({"insert": self.name, "ordered": True},
                                    (("documents", [document]),))
        _raise_write_errors(reply, server.address)
        return InsertOneResult(document["_id"], self._acknowledged)

    def _batches(self, docs):
        max_bson, max_message, max_count = self._limits()
        batch, size = [], 0
        for i, doc in enumerate(docs):
            doc_size = check_document(doc, f"insert_many document {i}", max_bson,
                                      replacement=True)
            if batch and (len(batch) >= max_count or
                          size + doc_size > max_message - _MESSAGE_HEADROOM):
                yield batch
                batch, size = [], 0
            batch.append(doc)
            size += doc_size
        if batch:
            yield batch

    @_one_deadline
    def insert_many(self, documents, ordered=True):
        docs = list(documents)
        if not docs:
            raise InvalidDocument("insert_many needs at least one document")
        for doc in docs:
            if isinstance(doc, dict) and "_id" not in doc:
                doc["_id"] = ObjectId()
        batches = list(self._batches(docs))
        inserted, errors, offset = 0, [], 0
        for batch in batches:
            reply, _ = self._write({"insert": self.name, "ordered": ordered},
                                   (("documents", batch),))
            inserted += reply.get("n", 0)
            for err in reply.get("writeErrors", ()):
                errors.append(dict(err, index=err["index"] + offset))
            offset += len(batch)
            if errors and ordered:
                break
        if errors:
            raise BulkWriteError({"writeErrors": errors, "nInserted": inserted},
                                 f"insert_many: {len(errors)} write error(s), {inserted} of "
                                 f"{len(docs)} documents inserted; first: "
                                 f"{errors[0].get('errmsg')}")
        return InsertManyResult([d["_id"] for d in docs], self._acknowledged)

    def _update(self, filter, update, multi, upsert):
        spec = {"q": dict(filter or {}), "u": update, "multi": multi, "upsert": upsert}
        reply, server = self._write({"update": self.name, "updates": [spec], "ordered": True},
                                    retry=None if multi else "write")
        _raise_write_errors(reply, server.address)
        return UpdateResult(reply, self._acknowledged)

    def update_one(self, filter, update, upsert=False):
        check_update(update)
        return self._update(filter, update, False, upsert)

    def update_many(self, filter, update, upsert=False):
        check_update(update)
        return self._update(filter, update, True, upsert)

    @_one_deadline
    def replace_one(self, filter, replacement, upsert=False):
        check_document(replacement, "replacement", self._limits()[0], replacement=True)
        return self._update(filter, replacement, False, upsert)

    def _delete(self, filter, limit):
        reply, server = self._write({"delete": self.name, "ordered": True, "deletes": [
            {"q": dict(filter or {}), "limit": limit}]}, retry="write" if limit else None)
        _raise_write_errors(reply, server.address)
        return DeleteResult(reply, self._acknowledged)

    def delete_one(self, filter):
        return self._delete(filter, 1)

    def delete_many(self, filter):
        return self._delete(filter, 0)

    def _find_and_modify(self, filter, projection, sort, **fields):
        cmd = {"findAndModify": self.name, "query": dict(filter or {})}
        if projection is not None:
            cmd["fields"] = _projection(projection)
        if sort is not None:
            cmd["sort"] = index_keys(sort)
        cmd.update(fields)
        reply, _ = self._write(cmd)
        return reply.get("value")

    def find_one_and_update(self, filter, update, projection=None, sort=None, upsert=False,
                            return_document=ReturnDocument.BEFORE):
        check_update(update)
        return self._find_and_modify(filter, projection, sort, update=update, upsert=upsert,
                                     new=bool(return_document))

    @_one_deadline
    def find_one_and_replace(self, filter, replacement, projection=None, sort=None,
                             upsert=False, return_document=ReturnDocument.BEFORE):
        check_document(replacement, "replacement", self._limits()[0], replacement=True)
        return self._find_and_modify(filter, projection, sort, update=replacement,
                                     upsert=upsert, new=bool(return_document))

    def find_one_and_delete(self, filter, projection=None, sort=None):
        return self._find_and_modify(filter, projection, sort, remove=True)

    # ----- indexes and the collection itself ----------------------------------------------

    def create_indexes(self, indexes):
        specs = []
        for index in indexes:
            index = dict(index)
            index["key"] = index_keys(index["key"])
            index.setdefault("name", index_name(index["key"]))
            specs.append(index)
        self._write({"createIndexes": self.name, "indexes": specs}, retry=None)
        return [s["name"] for s in specs]

    def create_index(self, keys, unique=False, name=None):
        spec = {"key": index_keys(keys)}
        if unique:
            spec["unique"] = True
        if name:
            spec["name"] = name
        return self.create_indexes([spec])[0]

    def drop(self):
        try:
            self._write({"drop": self.name}, retry=None)
        except OperationFailure as exc:
            if exc.code != 26:  # NamespaceNotFound: dropping a missing collection is fine
                raise
