"""The ``mapReduce`` command (drivers dropped their helpers; applications and mongoengine
still send it): ``query``, ``sort`` and ``limit`` choose the input, the JavaScript runs in
``javascript.py``, and ``out`` returns the results inline or writes them to a collection
(``replace``, ``merge``, ``reduce``) as MongoDB 7.0 does, ordered by ``_id``."""
import functools

from singlemongo.testing.query import javascript
from singlemongo.testing.query.codes import CommandError
from singlemongo.testing.query.reads import _bson_cmp, namespace, select, sort_documents

MODES = ("replace", "merge", "reduce")


def _target(cmd):
    """(mode, db, collection) of ``out``, or None for inline."""
    out = cmd.get("out")
    if isinstance(out, dict) and out.get("inline"):
        return None
    if isinstance(out, str):
        out = {"replace": out}
    modes = [m for m in MODES if isinstance(out, dict) and m in out]
    if len(modes) != 1 or not isinstance(out[modes[0]], str):
        raise CommandError(9, f"'out' must be {{inline: 1}}, a collection name, or one of "
                              f"{list(MODES)} naming one, not {out!r}")
    return modes[0], out.get("db", cmd["$db"]), out[modes[0]]


def _reduced_with(cmd, old, new):
    """out: {reduce}: a result already there reduced with the new one for its key."""
    pair = [{"k": old["_id"], "v": old["value"]}, {"k": new["_id"], "v": new["value"]}]
    return javascript.map_reduce("function () { emit(this.k, this.v); }", cmd["reduce"],
                                 cmd.get("finalize"), pair, cmd.get("scope"))[0]


def map_reduce(store, server, cmd):
    ns = namespace(cmd, "mapReduce")
    target = _target(cmd)
    docs = sort_documents(select(store, ns, cmd.get("query")), cmd.get("sort"))
    if cmd.get("limit"):
        docs = docs[:cmd["limit"]]
    results = javascript.map_reduce(cmd.get("map"), cmd.get("reduce"), cmd.get("finalize"),
                                    docs, cmd.get("scope"))
    results.sort(key=functools.cmp_to_key(lambda a, b: _bson_cmp(a["_id"], b["_id"])))
    if target is None:
        return {"results": results, "ok": 1}
    mode, db, name = target
    collection = store.collection(db, name)
    if mode == "replace":
        collection.delete_many({})
    for doc in results:
        old = collection.find_one({"_id": doc["_id"]}) if mode == "reduce" else None
        if old is not None:
            doc = _reduced_with(cmd, old, doc)
        collection.replace_one({"_id": doc["_id"]}, doc, upsert=True)
    out = cmd["out"]
    return {"result": {"db": db, "collection": name} if isinstance(out, dict) and "db" in out
            else name, "ok": 1}


COMMANDS = {"mapReduce": map_reduce}
