"""Change streams in the simulated server: an event log of every write, and the cursors of
``$changeStream`` aggregates reading it (change streams spec, as a 7.0 replica set serves it).

The log starts with the first ``$changeStream`` a deployment serves (recording compares
each write's collection before and after it, which costs nothing until a stream exists).
Each event has a resume token (``{"_data": hex}``: its position, and whether it is an event,
an invalidate or a batch's high-water mark), the cluster time of its write and its wall time.
A collection's stream ends with ``invalidate`` after a drop or rename of its collection, a
database's after ``dropDatabase``. Writes inside a transaction are not recorded.
"""
import copy
import datetime
import uuid

import bson
from mongomock_ng.helpers import hashdict

from singlemongo.testing.query import change_catalog as catalog, change_split, update_description
from singlemongo.testing.query.codes import CommandError

WRITES = frozenset({"insert", "update", "delete", "findAndModify"})
CATALOG = frozenset({"create", "createIndexes", "dropIndexes", "collMod", "drop",
                     "renameCollection", "dropDatabase", "shardCollection"})
# Commands that create a collection that does not exist yet (a create event first).
IMPLICIT_CREATE = WRITES | {"create", "createIndexes"}
CREATE_OPTIONS = frozenset({"viewOn", "pipeline", "capped", "size", "max", "collation",
                            "validator", "clusteredIndex", "timeseries",
                            "changeStreamPreAndPostImages", "expireAfterSeconds"})
EVENT, INVALIDATE, MARK = 1, 2, 0  # what a resume token stands for
INTERNAL_DBS = frozenset({"admin", "config", "local"})
STAGE_FIELDS = frozenset({"fullDocument", "fullDocumentBeforeChange", "resumeAfter",
                          "startAfter", "startAtOperationTime", "allChangesForCluster",
                          "showExpandedEvents"})


def token(seq, kind=EVENT):
    return {"_data": f"82{seq:016X}{kind:02X}"}


def position(resume_token):
    """(seq, kind) of a token this log issued; CommandError 260 for any other."""
    data = resume_token.get("_data") if isinstance(resume_token, dict) else None
    try:
        assert isinstance(data, str) and len(data) == 20 and data.startswith("82")
        return int(data[2:18], 16), int(data[18:], 16)
    except (AssertionError, ValueError):
        raise CommandError(260, f"Invalid resume token: {resume_token!r}") from None


class ChangeLog:
    """Every write since the first change stream, in order (the store's lock guards it)."""

    def __init__(self, store):
        self.store = store
        self.events = []  # (seq, event without _id)
        self.watching = False
        self.uuids = {}  # (db, coll) -> its collection UUID, as events report it
        self._uuid_count = 0

    @property
    def last(self):
        return self.events[-1][0] if self.events else 0

    def record(self, ns, kind, **fields):
        seq = self.last + 1
        event = {"operationType": kind, "clusterTime": self.store.transactions.tick(),
                 "wallTime": datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None),
                 "ns": {"db": ns[0], "coll": ns[1]} if ns[1] else {"db": ns[0]}, **fields}
        if ns[1]:
            event["_uuid"] = self.uuid(ns)
        self.events.append((seq, event))

    def uuid(self, ns):
        """A collection's UUID (a counter: the log is the same from run to run)."""
        if ns not in self.uuids:
            self._uuid_count += 1
            self.uuids[ns] = bson.Binary(uuid.UUID(int=self._uuid_count).bytes, 4)
        return self.uuids[ns]

    # ----- recording ---------------------------------------------------------------------

    def capture(self, name, cmd, run):
        """Run a command of the store's own data (not a transaction's), recording what it
        changed: collections created, documents written, the catalog changed."""
        if not self.watching or (name not in WRITES and name not in CATALOG):
            return run()
        db, coll_name = cmd.get("$db"), cmd.get(name)
        ns = (db, coll_name) if isinstance(coll_name, str) else None
        existed = self._collections(db)
        # An insert whose documents carry their _id (every driver's) is recorded from them;
        # other writes compare the collection before and after (O(documents) a write).
        inserting = name == "insert" and ns is not None and _ids_given(cmd)
        before = self._snapshot(ns) if name in WRITES and ns and not inserting else None
        prior = self._catalog_before(name, cmd)
        reply = run()
        if not reply.get("ok"):
            return reply
        if name in IMPLICIT_CREATE:
            for created in sorted(self._collections(db) - existed):
                self._created((db, created), cmd if name == "create" else {})
        if inserting:
            self._inserted(ns, cmd, reply)
        elif before is not None:
            self._documents(ns, name, cmd, before, self._snapshot(ns))
        else:
            catalog.record(self, name, cmd, prior)
        return reply

    def _inserted(self, ns, cmd, reply):
        """The insert events of the documents an insert stored, in its order: all but those
        with a write error, and for an ordered insert none after its first error."""
        failed = {e.get("index") for e in reply.get("writeErrors") or ()}
        ordered = cmd.get("ordered", True) is not False
        documents = self.store.collection(*ns)._store  # by _id (a dict _id hashed)
        for i, doc in enumerate(cmd["documents"]):
            if i in failed:
                if ordered:
                    break
                continue
            key = hashdict(doc["_id"]) if isinstance(doc["_id"], dict) else doc["_id"]
            try:
                stored = documents[key] if key in documents else None
            except TypeError:  # an _id the store cannot hash: it was refused, not stored
                stored = None
            if stored is not None:
                stored = copy.deepcopy(stored)
                self.record(ns, "insert", documentKey={"_id": stored["_id"]},
                            fullDocument=stored, _post=stored)

    def _collections(self, db):
        return set(self.store.client[db]._get_created_collections()) if isinstance(db, str) \
            else set()

    def _catalog_before(self, name, cmd):
        """What a catalog event needs to know from before its command ran."""
        if name == "dropDatabase":
            return sorted(self._collections(cmd["$db"]))
        if name == "renameCollection" and isinstance(cmd.get("to"), str):
            target = tuple(cmd["to"].split(".", 1))
            return self.uuid(target) if target[1] in self._collections(target[0]) \
                else None
        if name == "dropIndexes":
            return catalog.indexes(self.store, (cmd["$db"], cmd.get("dropIndexes")))
        return None

    def _created(self, ns, cmd):
        options = {k: v for k, v in cmd.items() if k in CREATE_OPTIONS}
        if "viewOn" not in options:
            options["idIndex"] = {"v": 2, "key": {"_id": 1}, "name": "_id_"}
        self.uuids.pop(ns, None)
        self.record(ns, "create", _expanded=True, operationDescription=options)

    def _documents(self, ns, name, cmd, before, after):
        replacement = _is_replacement(name, cmd)
        for key, doc in after.items():
            old = before.get(key)
            if old is None:
                self.record(ns, "insert", documentKey={"_id": doc["_id"]}, fullDocument=doc,
                            _post=doc)
            elif old != doc:
                fields = {"documentKey": {"_id": doc["_id"]}, "_pre": old, "_post": doc}
                if replacement:
                    self.record(ns, "replace", fullDocument=doc, **fields)
                else:
                    described = update_description.describe(old, doc, expanded=True)
                    self.record(ns, "update", _disambiguated=described.pop(
                        "disambiguatedPaths"), updateDescription=described, **fields)
        for key, old in before.items():
            if key not in after:
                self.record(ns, "delete", documentKey={"_id": old["_id"]}, _pre=old)

    def _snapshot(self, ns):
        if ns[1] not in self._collections(ns[0]):
            return {}
        return {_key(d["_id"]): copy.deepcopy(d) for d in self.store.collection(*ns).find()}


def _ids_given(cmd):
    documents = cmd.get("documents")
    return isinstance(documents, list) and all(
        isinstance(d, dict) and "_id" in d for d in documents)


def _key(value):
    return repr(value)


def _is_replacement(name, cmd):
    if name == "update":
        return all(isinstance(s.get("u"), dict) and s["u"] and
                   not next(iter(s["u"])).startswith("$") for s in cmd.get("updates", []))
    if name == "findAndModify":
        change = cmd.get("update")
        return isinstance(change, dict) and bool(change) and not next(iter(change)).startswith("$")
    return False


class ChangeCursor:
    """A ``$changeStream`` cursor: its scope, its position in the log and its options."""

    def __init__(self, ns, scope, seq, pipeline, options, server):
        self.ns, self.scope, self.seq = ns, scope, seq
        self.pipeline, self.options, self.server = pipeline, options, server
        self.split = False  # $changeStreamSplitLargeEvent

    def visible(self, event):
        """Whether the stream reports this event, and whether it then invalidates."""
        ns, kind = event["ns"], event["operationType"]
        if event.get("_expanded") and not self.options.get("showExpandedEvents"):
            return False, False
        if self.scope == "cluster":
            return ns["db"] not in INTERNAL_DBS, False
        db, coll = self.ns
        if ns["db"] != db:
            return False, False
        if self.scope == "database":
            return True, kind == "dropDatabase"
        if ns.get("coll") != coll:
            return False, False
        return True, kind in ("drop", "rename")


def open_stream(store, server, cmd, pipeline, run_pipeline):
    """The reply to an aggregate whose first stage is ``$changeStream``."""
    spec = pipeline[0]["$changeStream"]
    if not isinstance(spec, dict):
        raise CommandError(14, "the $changeStream stage takes a document")
    unknown = set(spec) - STAGE_FIELDS
    if unknown:
        raise CommandError(40415, f"BSON field '$changeStream.{sorted(unknown)[0]}' is an "
                                  f"unknown field.")
    _check_choice(spec, "fullDocument", ("default", "updateLookup", "whenAvailable", "required"))
    _check_choice(spec, "fullDocumentBeforeChange", ("off", "whenAvailable", "required"))
    if getattr(server, "role", None) == "standalone":
        raise CommandError(40573, "The $changeStream stage is only supported on replica sets")
    level = (cmd.get("readConcern") or {}).get("level")
    if level not in (None, "majority"):
        raise CommandError(72, f"$changeStream does not support read concern level {level!r}: "
                               f"only 'majority'")
    rest, split = change_split.take_stage(pipeline[1:])
    db, target = cmd["$db"], cmd.get("aggregate")
    if target == 1:
        scope = "cluster" if spec.get("allChangesForCluster") else "database"
        if scope == "cluster" and db != "admin":
            raise CommandError(73, "$changeStream with allChangesForCluster must run on admin")
        ns = (db, None)
    else:
        scope, ns = "collection", (db, target)
    log = store.changes
    log.watching = True
    cursor = ChangeCursor(ns, scope, _start(log, spec), rest, spec, server.address)
    cursor.split = split
    batch_size = (cmd.get("cursor") or {}).get("batchSize")
    batch, pbrt, ended = next_batch(store, cursor, batch_size, run_pipeline)
    cursor_id = 0 if ended else next(store._cursor_ids)
    if cursor_id:
        store.cursors[cursor_id] = cursor
    shown = f"{db}.{target}" if scope == "collection" else f"{db}.$cmd.aggregate"
    return {"ok": 1, "cursor": {"id": cursor_id, "ns": shown, "firstBatch": batch,
                                "postBatchResumeToken": pbrt}}


def _check_choice(spec, field, choices):
    if field in spec and spec[field] not in choices:
        raise CommandError(2, f"'{field}' must be one of {choices}, not {spec[field]!r}")


def _start(log, spec):
    """The log position the stream starts after."""
    if "resumeAfter" in spec or "startAfter" in spec:
        given = spec.get("startAfter", spec.get("resumeAfter"))
        seq, kind = position(given)
        if kind == INVALIDATE and "startAfter" not in spec:
            raise CommandError(260, "cannot resume a stream after its invalidate event; "
                                    "use startAfter")
        if seq > log.last:
            raise CommandError(280, "cannot resume stream; the resume token was not found")
        return seq
    if "startAtOperationTime" in spec:
        ts = spec["startAtOperationTime"]
        return max((seq for seq, event in log.events if event["clusterTime"] < ts), default=0)
    return log.last


def next_batch(store, cursor, limit, run_pipeline):
    """(documents, postBatchResumeToken, whether the stream ended) from the cursor's
    position, at most ``limit`` documents."""
    out, examined, last_emitted = [], cursor.seq, None
    for seq, event in store.changes.events:
        if seq <= cursor.seq:
            continue
        if limit and len(out) >= limit:
            break
        examined = seq
        shown, invalidates = cursor.visible(event)
        if not shown:
            continue
        doc = _shaped(store, cursor, seq, event)
        result = run_pipeline([doc], cursor.pipeline) if cursor.pipeline else [doc]
        for item in result:
            if item.get("_id") != doc["_id"]:
                raise CommandError(280, "Encountered an event whose _id field, which contains "
                                        "the resume token, was modified by the pipeline",
                                   errorLabels=["NonResumableChangeStreamError"])
            out.extend(change_split.fragments(item, lambda i: token(
                seq, change_split.FRAGMENT + i)) if cursor.split else [item])
            last_emitted = seq
        if invalidates:
            out.append({"_id": token(seq, INVALIDATE), "operationType": "invalidate",
                        "clusterTime": event["clusterTime"], "wallTime": event["wallTime"]})
            cursor.seq = seq
            return out, token(seq, INVALIDATE), True
    cursor.seq = examined
    pbrt = token(examined) if last_emitted == examined else token(examined, MARK)
    return out, pbrt, False


def pending(store, cursor):
    """Whether a getMore would find an event (an awaitData getMore waits until then)."""
    for seq, event in reversed(store.changes.events):  # only the events after its position
        if seq <= cursor.seq:
            return False
        if cursor.visible(event)[0]:
            return True
    return False


def _shaped(store, cursor, seq, event):
    """The event as the stream's options show it."""
    doc = {"_id": token(seq)}
    doc.update((k, copy.deepcopy(v)) for k, v in event.items() if not k.startswith("_"))
    kind, ns = event["operationType"], event["ns"]
    if cursor.options.get("showExpandedEvents"):
        _expanded_fields(doc, event)
    images = _images_enabled(store, ns)
    full = cursor.options.get("fullDocument", "default")
    if kind == "update" and full == "updateLookup":
        found = list(store.collection(ns["db"], ns["coll"]).find(event["documentKey"]))
        doc["fullDocument"] = found[0] if found else None
    elif kind == "update" and full in ("whenAvailable", "required"):
        doc["fullDocument"] = _image(event, "_post", images, full)
    before = cursor.options.get("fullDocumentBeforeChange", "off")
    if kind in ("update", "replace", "delete") and before != "off":
        doc["fullDocumentBeforeChange"] = _image(event, "_pre", images, before)
    return doc


def _expanded_fields(doc, event):
    """What a stream showing expanded events adds to every event (showExpandedEvents)."""
    if "_uuid" in event:
        doc["collectionUUID"] = event["_uuid"]
    if "_description" in event:
        doc["operationDescription"] = copy.deepcopy(event["_description"])
    if "_disambiguated" in event:
        doc["updateDescription"]["disambiguatedPaths"] = copy.deepcopy(event["_disambiguated"])


def _images_enabled(store, ns):
    if "coll" not in ns or ns["coll"] not in \
            store.client[ns["db"]]._get_created_collections():
        return False
    options = getattr(store.collection(ns["db"], ns["coll"])._store, "options", None) or {}
    return bool((options.get("changeStreamPreAndPostImages") or {}).get("enabled"))


def _image(event, which, enabled, mode):
    if enabled:
        return copy.deepcopy(event.get(which))
    if mode == "required":
        raise CommandError(47, f"Change stream was configured to require a "
                               f"{'post' if which == '_post' else 'pre'}-image for all update, "
                               f"delete and replace events, but none was found (the "
                               f"collection does not have changeStreamPreAndPostImages enabled)")
    return None


def get_more(store, cursor_id, cursor, cmd, run_pipeline):
    """A getMore of a change stream: its next events (an empty batch keeps it open)."""
    batch, pbrt, ended = next_batch(store, cursor, cmd.get("batchSize"), run_pipeline)
    if ended:
        store.cursors.pop(cursor_id, None)
    shown = f"{cursor.ns[0]}.{cursor.ns[1]}" if cursor.scope == "collection" else \
        f"{cursor.ns[0]}.$cmd.aggregate"
    return {"ok": 1, "cursor": {"id": 0 if ended else cursor_id, "ns": shown,
                                "nextBatch": batch, "postBatchResumeToken": pbrt}}
