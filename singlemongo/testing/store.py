"""A small in-memory store behind the simulated deployment, so CRUD tests make real round
trips: inserted documents come back from find, updates and deletes change them, cursors page
with getMore (only on the server that opened them), and a retried write with the same
lsid and txnNumber is answered from its first execution, as a real server does.
"""
import copy
import itertools

from bson import ObjectId

from .matching import apply_update, matches, project, sort_docs

DEFAULT_BATCH = 101


def _error(code, name, message):
    return {"ok": 0, "code": code, "codeName": name, "errmsg": message}


class Store:
    def __init__(self):
        self.data = {}      # (db, collection) -> list of documents
        self.unique = {}    # (db, collection) -> list of unique key tuples
        self.indexes = {}   # (db, collection) -> list of index documents
        self.cursors = {}
        self.executed = {}  # (lsid, txnNumber) -> reply, for retryable writes
        self.executions = 0  # write commands actually executed (not answered from cache)
        self._ids = itertools.count(1000)

    def install(self, deployment):
        for name in ("insert", "update", "delete", "find", "getMore", "killCursors",
                     "findAndModify", "count", "distinct", "aggregate", "createIndexes",
                     "listIndexes", "drop", "dropDatabase", "listCollections",
                     "listDatabases", "create"):
            deployment.commands[name] = self._wrap(getattr(self, "cmd_" + name.lower()))
        return self

    def _wrap(self, fn):
        def handler(server, cmd, state):
            key = None
            if "txnNumber" in cmd and "lsid" in cmd:
                key = (bytes(cmd["lsid"]["id"]), cmd["txnNumber"])
                if key in self.executed:
                    return self.executed[key]
            reply = fn(server, cmd)
            if key is not None:
                self.executed[key] = reply
            return reply
        return handler

    def coll(self, cmd, name_key):
        return self.data.setdefault((cmd["$db"], cmd[name_key]), [])

    # ----- writes ------------------------------------------------------------------------

    def _violates(self, ns, docs, doc, skip=None):
        for keys in [("_id",)] + self.unique.get(ns, []):
            value = tuple(doc.get(k) for k in keys)
            for other in docs:
                if other is not skip and tuple(other.get(k) for k in keys) == value:
                    return keys
        return None

    def cmd_insert(self, server, cmd):
        self.executions += 1
        ns = (cmd["$db"], cmd["insert"])
        docs = self.data.setdefault(ns, [])
        n, errors = 0, []
        for i, doc in enumerate(cmd.get("documents", [])):
            doc = copy.deepcopy(doc)
            doc.setdefault("_id", ObjectId())
            keys = self._violates(ns, docs, doc)
            if keys:
                errors.append({"index": i, "code": 11000, "errmsg": (
                    f"E11000 duplicate key error collection: {ns[0]}.{ns[1]} index: "
                    f"{'_'.join(keys)}_1 dup key: {{ {keys[0]}: {doc.get(keys[0])!r} }}"),
                    "keyPattern": {k: 1 for k in keys}, "keyValue": {k: doc.get(k) for k in keys}})
                if cmd.get("ordered", True):
                    break
                continue
            docs.append(doc)
            n += 1
        reply = {"ok": 1, "n": n}
        if errors:
            reply["writeErrors"] = errors
        return reply

    def cmd_update(self, server, cmd):
        self.executions += 1
        ns = (cmd["$db"], cmd["update"])
        docs = self.data.setdefault(ns, [])
        n = modified = 0
        upserted = []
        for i, spec in enumerate(cmd.get("updates", [])):
            hits = [d for d in docs if matches(d, spec.get("q"))]
            if not spec.get("multi"):
                hits = hits[:1]
            for doc in hits:
                new = apply_update(doc, spec["u"])
                n += 1
                if new != doc:
                    modified += 1
                    docs[docs.index(doc)] = new
            if not hits and spec.get("upsert"):
                base = {k: v for k, v in (spec.get("q") or {}).items() if not k.startswith("$")
                        and not isinstance(v, dict)}
                new = apply_update(base, spec["u"], inserting=True)
                new.setdefault("_id", ObjectId())
                docs.append(new)
                upserted.append({"index": i, "_id": new["_id"]})
                n += 1
        reply = {"ok": 1, "n": n, "nModified": modified}
        if upserted:
            reply["upserted"] = upserted
        return reply

    def cmd_delete(self, server, cmd):
        self.executions += 1
        ns = (cmd["$db"], cmd["delete"])
        docs = self.data.setdefault(ns, [])
        n = 0
        for spec in cmd.get("deletes", []):
            hits = [d for d in docs if matches(d, spec.get("q"))]
            if spec.get("limit", 0) == 1:
                hits = hits[:1]
            for doc in hits:
                docs.remove(doc)
                n += 1
        return {"ok": 1, "n": n}

    def cmd_findandmodify(self, server, cmd):
        self.executions += 1
        docs = self.coll(cmd, "findAndModify")
        hits = sort_docs([d for d in docs if matches(d, cmd.get("query"))], cmd.get("sort"))
        doc = hits[0] if hits else None
        last = {"n": 0, "updatedExisting": False}
        if cmd.get("remove"):
            if doc is not None:
                docs.remove(doc)
                last["n"] = 1
            value = doc
        elif doc is not None:
            new = apply_update(doc, cmd["update"])
            docs[docs.index(doc)] = new
            last.update(n=1, updatedExisting=True)
            value = new if cmd.get("new") else doc
        elif cmd.get("upsert"):
            new = apply_update({k: v for k, v in (cmd.get("query") or {}).items()
                                if not k.startswith("$")}, cmd["update"], inserting=True)
            new.setdefault("_id", ObjectId())
            docs.append(new)
            last.update(n=1, upserted=new["_id"])
            value = new if cmd.get("new") else None
        else:
            value = None
        if value is not None and cmd.get("fields"):
            value = project(value, cmd["fields"])
        return {"ok": 1, "value": value, "lastErrorObject": last}

    # ----- reads and cursors -------------------------------------------------------------

    def _cursor_reply(self, server, cmd, ns, docs, batch_size, single=False):
        first = docs if batch_size is None else docs[:batch_size]
        rest = [] if batch_size is None or single else docs[batch_size:]
        cursor_id = 0
        if rest:
            cursor_id = next(self._ids)
            self.cursors[cursor_id] = {"ns": ns, "docs": rest, "server": server.address}
        return {"ok": 1, "cursor": {"id": cursor_id, "ns": f"{ns[0]}.{ns[1]}",
                                    "firstBatch": first}}

    def cmd_find(self, server, cmd):
        ns = (cmd["$db"], cmd["find"])
        docs = sort_docs([d for d in self.data.get(ns, []) if matches(d, cmd.get("filter"))],
                         cmd.get("sort"))
        docs = docs[cmd.get("skip", 0):]
        limit = abs(cmd.get("limit", 0))
        if limit:
            docs = docs[:limit]
        docs = [project(copy.deepcopy(d), cmd.get("projection")) for d in docs]
        batch = cmd.get("batchSize", DEFAULT_BATCH)
        return self._cursor_reply(server, cmd, ns, docs, batch, cmd.get("singleBatch", False))

    def cmd_getmore(self, server, cmd):
        cursor = self.cursors.get(cmd["getMore"])
        if cursor is None or cursor["server"] != server.address:
            return _error(43, "CursorNotFound", f"cursor id {cmd['getMore']} not found")
        batch = cmd.get("batchSize") or len(cursor["docs"])
        out, cursor["docs"] = cursor["docs"][:batch], cursor["docs"][batch:]
        cursor_id = cmd["getMore"]
        if not cursor["docs"]:
            del self.cursors[cursor_id]
            cursor_id = 0
        ns = cursor["ns"]
        return {"ok": 1, "cursor": {"id": cursor_id, "ns": f"{ns[0]}.{ns[1]}", "nextBatch": out}}

    def cmd_killcursors(self, server, cmd):
        killed = [c for c in cmd.get("cursors", []) if self.cursors.pop(c, None) is not None]
        return {"ok": 1, "cursorsKilled": killed, "cursorsNotFound": [],
                "cursorsAlive": [], "cursorsUnknown": []}

    def cmd_count(self, server, cmd):
        docs = [d for d in self.data.get((cmd["$db"], cmd["count"]), [])
                if matches(d, cmd.get("query"))]
        return {"ok": 1, "n": len(docs)}

    def cmd_distinct(self, server, cmd):
        values = []
        for d in self.data.get((cmd["$db"], cmd["distinct"]), []):
            if matches(d, cmd.get("query")) and cmd["key"] in d and d[cmd["key"]] not in values:
                values.append(d[cmd["key"]])
        return {"ok": 1, "values": values}

    def cmd_aggregate(self, server, cmd):
        ns = (cmd["$db"], cmd["aggregate"])
        docs = copy.deepcopy(self.data.get(ns, []))
        for stage in cmd.get("pipeline", []):
            (name, arg), = stage.items()
            if name == "$match":
                docs = [d for d in docs if matches(d, arg)]
            elif name == "$sort":
                docs = sort_docs(docs, arg)
            elif name == "$skip":
                docs = docs[arg:]
            elif name == "$limit":
                docs = docs[:arg]
            elif name == "$project":
                docs = [project(d, arg) for d in docs]
            elif name == "$count":
                docs = [{arg: len(docs)}] if docs else []
            elif name == "$group":
                docs = _group(docs, arg)
            elif name in ("$out", "$merge"):
                target = arg if isinstance(arg, str) else arg.get("into", arg.get("coll"))
                self.data[(cmd["$db"], target)] = docs
                docs = []
            else:
                return _error(40324, "Location40324", f"Unrecognized pipeline stage name: '{name}'")
        batch = cmd.get("cursor", {}).get("batchSize", DEFAULT_BATCH)
        return self._cursor_reply(server, cmd, ns, docs, batch)

    # ----- catalog -----------------------------------------------------------------------

    def cmd_createindexes(self, server, cmd):
        ns = (cmd["$db"], cmd["createIndexes"])
        created = ns not in self.data
        self.data.setdefault(ns, [])
        existing = self.indexes.setdefault(ns, [{"v": 2, "key": {"_id": 1}, "name": "_id_"}])
        before = len(existing)
        for index in cmd.get("indexes", []):
            if all(i["name"] != index["name"] for i in existing):
                existing.append(dict(index, v=2))
                if index.get("unique"):
                    self.unique.setdefault(ns, []).append(tuple(index["key"]))
        return {"ok": 1, "createdCollectionAutomatically": created,
                "numIndexesBefore": before, "numIndexesAfter": len(existing)}

    def cmd_listindexes(self, server, cmd):
        ns = (cmd["$db"], cmd["listIndexes"])
        indexes = self.indexes.get(ns, [{"v": 2, "key": {"_id": 1}, "name": "_id_"}])
        return self._cursor_reply(server, cmd, ns, list(indexes), None)

    def cmd_create(self, server, cmd):
        self.data.setdefault((cmd["$db"], cmd["create"]), [])
        return {"ok": 1}

    def cmd_drop(self, server, cmd):
        ns = (cmd["$db"], cmd["drop"])
        if self.data.pop(ns, None) is None:
            return _error(26, "NamespaceNotFound", "ns not found")
        self.indexes.pop(ns, None)
        self.unique.pop(ns, None)
        return {"ok": 1, "ns": f"{ns[0]}.{ns[1]}"}

    def cmd_dropdatabase(self, server, cmd):
        for ns in [ns for ns in self.data if ns[0] == cmd["$db"]]:
            del self.data[ns]
        return {"ok": 1}

    def cmd_listcollections(self, server, cmd):
        names = sorted(c for d, c in self.data if d == cmd["$db"])
        docs = [{"name": n, "type": "collection"} for n in names]
        if cmd.get("nameOnly"):
            docs = [{"name": n, "type": "collection"} for n in names]
        return self._cursor_reply(server, cmd, (cmd["$db"], "$cmd.listCollections"), docs, None)

    def cmd_listdatabases(self, server, cmd):
        names = sorted({d for d, _ in self.data})
        return {"ok": 1, "databases": [{"name": n, "sizeOnDisk": 1, "empty": False}
                                       for n in names]}


def _group(docs, spec):
    groups = {}
    for d in docs:
        key_spec = spec["_id"]
        key = d.get(key_spec[1:]) if isinstance(key_spec, str) and key_spec.startswith("$") \
            else key_spec
        out = groups.setdefault(repr(key), {"_id": key})
        for field, acc in spec.items():
            if field == "_id":
                continue
            (op, arg), = acc.items()
            if op == "$sum":
                value = d.get(arg[1:], 0) if isinstance(arg, str) else arg
                out[field] = out.get(field, 0) + value
    return list(groups.values())
