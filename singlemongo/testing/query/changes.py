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

from .codes import CommandError

WRITES = frozenset({"insert", "update", "delete", "findAndModify"})
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

    @property
    def last(self):
        return self.events[-1][0] if self.events else 0

    def record(self, ns, kind, **fields):
        seq = self.last + 1
        event = {"operationType": kind, "clusterTime": self.store.transactions.tick(),
                 "wallTime": datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None),
                 "ns": {"db": ns[0], "coll": ns[1]} if ns[1] else {"db": ns[0]}, **fields}
        self.events.append((seq, event))

    # ----- recording ---------------------------------------------------------------------

    def capture(self, target, name, cmd, run):
        """Run a write command, recording what it changed in its collection."""
        coll_name = cmd.get(name)
        if not self.watching or target is not self.store or not isinstance(coll_name, str):
            return run()
        ns = (cmd["$db"], coll_name)
        before = self._snapshot(ns)
        reply = run()
        after = self._snapshot(ns)
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
                    self.record(ns, "update", updateDescription=_describe(old, doc), **fields)
        for key, old in before.items():
            if key not in after:
                self.record(ns, "delete", documentKey={"_id": old["_id"]}, _pre=old)
        return reply

    def _snapshot(self, ns):
        if ns[1] not in self.store.client[ns[0]]._get_created_collections():
            return {}
        return {_key(d["_id"]): copy.deepcopy(d) for d in self.store.collection(*ns).find()}

    def catalog_change(self, name, cmd, reply):
        """drop, renameCollection and dropDatabase, once they succeeded."""
        if not self.watching or not reply.get("ok"):
            return
        if name == "drop":
            self.record((cmd["$db"], cmd["drop"]), "drop")
        elif name == "renameCollection":
            source, target = cmd["renameCollection"], cmd["to"]
            db, coll = source.split(".", 1)
            to_db, to_coll = target.split(".", 1)
            self.record((db, coll), "rename", to={"db": to_db, "coll": to_coll})
        elif name == "dropDatabase":
            self.record((cmd["$db"], None), "dropDatabase")

    def drop_database_events(self, db):
        """dropDatabase drops each collection first (each a drop event)."""
        if self.watching:
            for coll in sorted(self.store.client[db]._get_created_collections()):
                self.record((db, coll), "drop")


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


def _describe(old, new, prefix=""):
    """updateDescription: the fields set (dotted paths into embedded documents present on
    both sides) and removed."""
    updated, removed = {}, []
    for field, value in new.items():
        path = prefix + field
        if field not in old:
            updated[path] = value
        elif old[field] != value:
            if isinstance(value, dict) and isinstance(old[field], dict):
                inner = _describe(old[field], value, path + ".")
                updated.update(inner["updatedFields"])
                removed.extend(inner["removedFields"])
            else:
                updated[path] = value
    removed.extend(prefix + field for field in old if field not in new)
    return {"updatedFields": updated, "removedFields": removed, "truncatedArrays": []}


class ChangeCursor:
    """A ``$changeStream`` cursor: its scope, its position in the log and its options."""

    def __init__(self, ns, scope, seq, pipeline, options, server):
        self.ns, self.scope, self.seq = ns, scope, seq
        self.pipeline, self.options, self.server = pipeline, options, server

    def visible(self, event):
        """Whether the stream reports this event, and whether it then invalidates."""
        ns, kind = event["ns"], event["operationType"]
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
    cursor = ChangeCursor(ns, scope, _start(log, spec), pipeline[1:], spec, server.address)
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
                                        "the resume token, was modified by the pipeline")
            out.append(item)
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
