"""Reading as a MongoDB server does: matching (with ``let``), BSON sort order, projection
(positional ``$`` included), hints that must name an index, and the read commands."""
import functools

import bson

from mongomock_ng import aggregate as mm_aggregate
from mongomock_ng import filtering

from singlemongo.testing.query import changes, checks, expressions, javascript, text, views
from singlemongo.testing.query.codes import ATLAS_ONLY, CommandError, duplicate_message

DEFAULT_BATCH = 101
_EMPTY_ARRAY = object()  # sorts before null ("Comparison/Sort Order")


def namespace(cmd, key):
    name = cmd.get(key)
    if not isinstance(name, str) or not name:
        raise CommandError(73, f"Invalid namespace specified for {key}: {name!r}")
    return cmd["$db"], name


def evaluate_let(cmd):
    """The command with its ``let`` variables evaluated once, as the server does before
    running (a variable may be any constant expression, ``$literal`` included)."""
    let = cmd.get("let")
    if not isinstance(let, dict):
        return cmd
    return dict(cmd, let={name: mm_aggregate._parse_expression(value, {})
                          for name, value in let.items()})


def collection_names(store, db):
    """Every collection of ``db``, ``system.profile`` included (the engine hides
    ``system.*`` names; a server lists them)."""
    return store.client[db]._get_created_collections()


def exists(store, ns):
    return ns[1] in collection_names(store, ns[0])


def check_hint(store, ns, hint):
    """A hint must name an existing index, by name or by key pattern (2 BadValue)."""
    if hint is None or not exists(store, ns):
        return
    if isinstance(hint, dict) and "$natural" in hint:
        return
    info = store.collection(*ns).index_information()
    if isinstance(hint, str):
        found = hint in info
    else:
        found = any(list(spec["key"]) == list(hint.items()) for spec in info.values())
    if not found:
        raise CommandError(2, "hint provided does not correspond to an existing index")


def select(store, ns, query, let=None, scores=False):
    """Documents matching ``query``, in natural order (copies); with ``scores``, a ``$text``
    query's matches carry their score (``text.SCORE``) for find's sort and projection."""
    query = query or {}
    if "$text" in query:
        spec, query = query["$text"], {k: v for k, v in query.items() if k != "$text"}
        indexes = [dict(i, key=dict(i["key"])) for i in
                   store.collection(*ns).index_information().values()] if exists(store, ns) else []
        matched = text.search(select(store, ns, query, let), spec, text.index_of(indexes))
        return matched if scores else [
            {k: v for k, v in d.items() if k != text.SCORE} for d in matched]
    checks.check_filter(query)
    checks.check_variables(query, let)
    coll = store.collection(*ns)
    if "$where" in query:
        script, query = query["$where"], {k: v for k, v in query.items() if k != "$where"}
        return javascript.where(script, select(store, ns, query, let))
    if views.view_of(store, ns) is not None:
        return [d for d in view_documents(store, ns)
                if filtering.filter_applies(query, d, user_vars=let)]
    if not let:
        return list(coll.find(query))
    return [d for d in coll.find() if filtering.filter_applies(query, d, user_vars=let)]


def _bson_cmp(a, b):
    return expressions.bson_order(a, b, lowest=_EMPTY_ARRAY)


def _sort_value(doc, key, direction):
    """An array sorts by its smallest element ascending, its largest descending."""
    value = filtering.resolve_key(key, doc)
    if value is filtering.NOTHING:
        return None
    if isinstance(value, list):
        if not value:
            return _EMPTY_ARRAY
        pick = min if direction > 0 else max
        return pick(value, key=functools.cmp_to_key(_bson_cmp))
    return value


def sort_documents(docs, sort):
    if not sort:
        return docs
    keys = list(sort.items())
    for key, direction in keys:
        if key == "$natural":
            return docs if direction > 0 else list(reversed(docs))
        if isinstance(direction, dict):
            raise CommandError(238, f"sorting by {direction} is not supported by the simulated server")
        if not isinstance(direction, (int, float)) or isinstance(direction, bool):
            raise CommandError(15974, f"Illegal key in $sort specification: {key}: "
                                      f"{direction!r}")
        if direction not in (1, -1):
            raise CommandError(15975, "$sort key ordering must be 1 (for ascending) or -1 "
                                      "(for descending)")

    def compare(a, b):
        for key, direction in keys:
            result = _bson_cmp(_sort_value(a, key, direction), _sort_value(b, key, direction))
            if result:
                return result * direction
        return 0
    return sorted(docs, key=functools.cmp_to_key(compare))


def positional_index(doc, query, array_path):
    """The first element of the array at ``array_path`` that the query's conditions on that
    array match: what ``$`` stands for in a projection or an update."""
    array = filtering.resolve_key(array_path, doc)
    if not isinstance(array, list):
        return None
    conditions = [(key[len(array_path) + 1:], cond) for key, cond in (query or {}).items()
                  if key == array_path or key.startswith(array_path + ".")]
    for i, element in enumerate(array):
        if all(_element_matches(element, rest, cond) for rest, cond in conditions):
            return i
    return None


def _element_matches(element, rest, cond):
    if not rest:
        if isinstance(cond, dict) and "$elemMatch" in cond:
            return filtering.filter_applies(cond["$elemMatch"], element) if isinstance(
                element, dict) else filtering.filter_applies({"v": cond["$elemMatch"]}, {"v": element})
        return filtering.filter_applies({"v": cond}, {"v": element})
    return isinstance(element, dict) and filtering.filter_applies({rest: cond}, element)


def check_projection(projection):
    """One projection includes or excludes ("Projection": only _id may be excluded from an
    inclusion): 31254 for an exclusion in an inclusion, 31253 for the other way round."""
    kinds = {}
    for field, value in projection.items():
        if field != "_id" and (isinstance(value, bool) or isinstance(value, (int, float))):
            kinds.setdefault(bool(value), field)
            if len(kinds) == 2:
                first_inclusive = next(iter(kinds))
                code, what = (31254, "exclusion") if first_inclusive else (31253, "inclusion")
                raise CommandError(code, f"Cannot do {what} on field {field} in "
                                         f"{'in' if first_inclusive else 'ex'}clusion projection")


def project(store, ns, docs, projection, query):
    if not projection:
        return docs
    projection = dict(projection)
    check_projection(projection)
    positional = [k for k in projection if k.endswith(".$")]
    for key in positional:
        projection[key[:-2]] = projection.pop(key)
    coll = store.collection(*ns)
    out = []
    for doc in docs:
        shown = coll._copy_only_fields(doc, dict(projection), dict)
        for key in positional:
            path = key[:-2]
            index = positional_index(doc, query, path)
            if index is None:
                raise CommandError(2, "Executor error during find command :: caused by :: "
                                      "positional operator '.$' couldn't find a matching "
                                      "element in the array")
            _set_path(shown, path, [filtering.resolve_key(path, doc)[index]])
        out.append(shown)
    return out


def _set_path(doc, path, value):
    *parents, last = path.split(".")
    for part in parents:
        doc = doc.setdefault(part, {})
    doc[last] = value


def pipeline_runner(store, db):
    """run(docs, pipeline): the engine's aggregation over given documents."""
    def run(docs, pipeline):
        return list(mm_aggregate.process_pipeline(docs, store.client[db], pipeline, None))
    return run


def view_documents(store, ns):
    """A view's documents: its pipeline run over its source."""
    return views.documents(store, ns, pipeline_runner(store, ns[0]))


def hinted_pattern(store, ns, hint):
    """The key pattern of the index a hint names (an index scan returns documents in its
    order), or None."""
    if hint is None or not exists(store, ns) or (isinstance(hint, dict) and "$natural" in hint):
        return None
    for name, spec in store.collection(*ns).index_information().items():
        pattern = dict(spec["key"])
        if hint == name or (isinstance(hint, dict) and list(hint.items()) == list(pattern.items())):
            return pattern if all(v in (1, -1) for v in pattern.values()) else None
    return None


def bounded(docs, pattern, low, high):
    """find's min (inclusive) and max (exclusive): bounds on the hinted index's keys, in its
    field order and direction."""
    if pattern is None:
        raise CommandError(51173, "When using min()/max() a hint of which index to use must "
                                  "be provided")
    for bound in (low, high):
        if bound is not None and list(bound) != list(pattern):
            raise CommandError(51174, "The index implied by min() and max() does not match "
                                      "the hint's key pattern")

    def compare(doc, bound):
        for field, direction in pattern.items():
            result = _bson_cmp(_sort_value(doc, field, direction), bound[field]) * direction
            if result:
                return result
        return 0
    return [d for d in docs if (low is None or compare(d, low) >= 0)
            and (high is None or compare(d, high) < 0)]


def find(store, server, cmd):
    ns = namespace(cmd, "find")
    check_hint(store, ns, cmd.get("hint"))
    tail = None
    if cmd.get("tailable") or cmd.get("awaitData"):
        from singlemongo.testing.query import tailable as tail  # it builds on this module
        tail.check(store, ns, cmd)
    query = cmd.get("filter") or {}
    docs = select(store, ns, query, cmd.get("let"), scores=True)
    pattern = hinted_pattern(store, ns, cmd.get("hint"))
    if "min" in cmd or "max" in cmd:
        docs = bounded(docs, pattern, cmd.get("min"), cmd.get("max"))
    docs = sort_documents(docs, text.sort_spec(cmd.get("sort")) or pattern)
    skip, limit = cmd.get("skip", 0) or 0, abs(cmd.get("limit", 0) or 0)
    if skip < 0:
        raise CommandError(51024, "BSON field 'skip' value must be >= 0")
    docs = docs[skip:]
    if limit:
        docs = docs[:limit]
    scores = [d.pop(text.SCORE, None) for d in docs]
    if cmd.get("returnKey"):
        docs = _index_keys(store, ns, docs, cmd)
    else:
        docs = project(store, ns, docs, text.without_meta(cmd.get("projection")), query)
        docs = text.add_scores(docs, scores, cmd.get("projection"))
        if cmd.get("showRecordId"):
            docs = [dict(d, **{"$recordId": bson.Int64(i + 1)}) for i, d in enumerate(docs)]
    batch = cmd.get("batchSize", DEFAULT_BATCH)
    if tail is not None:
        return tail.first_batch(store, server, ns, cmd, docs, batch)
    return store.cursor_reply(server, ns, docs, batch, cmd.get("singleBatch", False))


def _index_keys(store, ns, docs, cmd):
    """returnKey: each document's keys in the index the query uses (the hinted one, else one
    on the first field filtered or sorted on), or empty documents for a collection scan."""
    indexes = store.collection(*ns).index_information()
    hint = cmd.get("hint")
    fields = [*(cmd.get("filter") or {}), *(cmd.get("sort") or {})]
    key = None
    for name, spec in indexes.items():
        pattern = [k for k, _ in spec["key"]]
        if hint in (name, dict(spec["key"])) or (hint is None and pattern[0] in fields):
            key = pattern
            break
    return [{k: d[k] for k in key or () if k in d} for d in docs]


def count(store, server, cmd):
    ns = namespace(cmd, "count")
    check_hint(store, ns, cmd.get("hint"))
    docs = select(store, ns, cmd.get("query"))[cmd.get("skip", 0) or 0:]
    limit = abs(cmd.get("limit", 0) or 0)
    return {"ok": 1, "n": len(docs[:limit] if limit else docs)}


def distinct(store, server, cmd):
    ns = namespace(cmd, "distinct")
    check_hint(store, ns, cmd.get("hint"))
    key = cmd.get("key")
    if not isinstance(key, str):
        raise CommandError(14, "BSON field 'distinct.key' is the wrong type, expected type string")
    values = []
    for doc in select(store, ns, cmd.get("query")):
        for found in filtering.iter_key_candidates(key, doc):
            for value in (found if isinstance(found, list) else [found]):
                if value is not filtering.NOTHING and not any(
                        filtering.operator_eq(value, seen) for seen in values):
                    values.append(value)
    return {"ok": 1, "values": sorted(values, key=functools.cmp_to_key(_bson_cmp))}


def _source(store, server, cmd, pipeline):
    """The documents a pipeline starts from, and the stages left to run: a database-level
    aggregate may begin with $documents, $listLocalSessions (this connection's session) or,
    on admin, $currentOp (this operation: a server runs one at a time)."""
    if cmd.get("aggregate") != 1:
        ns = namespace(cmd, "aggregate")
        check_hint(store, ns, cmd.get("hint"))
        if any(isinstance(stage, dict) and "$listSearchIndexes" in stage for stage in pipeline):
            raise CommandError(115, ATLAS_ONLY)
        if pipeline and next(iter(pipeline[0]), None) == "$collStats":
            return ns, [_coll_stats(store, ns, pipeline[0]["$collStats"])], pipeline[1:]
        if views.view_of(store, ns) is not None:
            return ns, view_documents(store, ns), pipeline
        match = pipeline[0].get("$match") if pipeline and isinstance(pipeline[0], dict) else None
        if isinstance(match, dict) and "$text" in match:  # $text: in the first $match only
            return ns, select(store, ns, match), pipeline[1:]
        return ns, list(store.collection(*ns).find()), pipeline
    ns = (cmd["$db"], "$cmd.aggregate")
    first = next(iter(pipeline[0]), None) if pipeline else None
    if first == "$documents":
        docs = pipeline[0]["$documents"]
        if not isinstance(docs, list) or not all(isinstance(d, dict) for d in docs):
            raise CommandError(5858203, "an array of documents must be supplied to $documents")
        return ns, [dict(d) for d in docs], pipeline[1:]
    if first == "$currentOp":
        if cmd["$db"] != "admin":
            raise CommandError(73, "$currentOp must be run against the 'admin' database with "
                                   "{aggregate: 1}")
        from singlemongo.testing.tools import in_progress
        return ns, in_progress(server, cmd), pipeline[1:]
    if first == "$listLocalSessions":  # the sessions this server has seen, newest last
        return ns, [{"_id": dict(lsid)} for lsid in store.local_sessions(cmd)], pipeline[1:]
    return ns, [], pipeline


def _coll_stats(store, ns, spec):
    """The one document $collStats gives: its storageStats and count as asked."""
    coll = store.collection(*ns)
    docs, options = list(coll.find()), coll._store.options
    size = sum(len(bson.encode(d)) for d in docs)
    out = {"ns": f"{ns[0]}.{ns[1]}"}
    if isinstance(spec, dict) and "storageStats" in spec:
        out["storageStats"] = {
            "size": size, "count": len(docs), "avgObjSize": size // len(docs) if docs else 0,
            "storageSize": size, "nindexes": len(coll.index_information()),
            "totalIndexSize": 0, "capped": bool(options.get("capped"))}
        if options.get("capped"):
            out["storageStats"].update(maxSize=options["size"], max=options.get("max", 0))
    if isinstance(spec, dict) and "count" in spec:
        out["count"] = len(docs)
    return out


def _check_write_stage(cmd, pipeline):
    stage = next(iter(pipeline[-1])) if pipeline else None
    level = (cmd.get("readConcern") or {}).get("level")
    if stage in ("$out", "$merge") and level == "linearizable":
        raise CommandError(17, f"{stage} cannot be used with a 'linearizable' read concern "
                               f"level")
    return stage


def _merge_fail_on_match(store, cmd, docs, spec):
    """$merge with whenMatched 'fail' refuses a document whose _id is already there."""
    into = spec.get("into")
    db, name = (cmd["$db"], into) if isinstance(into, str) else (
        into.get("db", cmd["$db"]), into.get("coll"))
    target = store.collection(db, name)
    for doc in docs:
        if "_id" in doc and target.find_one({"_id": doc["_id"]}) is not None:
            raise CommandError(11000, duplicate_message({"keyPattern": {"_id": 1},
                                                         "keyValue": {"_id": doc["_id"]}}),
                               keyPattern={"_id": 1}, keyValue={"_id": doc["_id"]})


# The aggregate command's fields (MongoDB's IDL for it, and the generic arguments every
# command takes): another is refused as the server refuses it (40415).
AGGREGATE_FIELDS = frozenset({
    "aggregate", "pipeline", "explain", "allowDiskUse", "cursor", "maxTimeMS",
    "bypassDocumentValidation", "readConcern", "writeConcern", "collation", "hint", "let",
    "comment", "rawData", "lsid", "txnNumber", "startTransaction", "autocommit", "stmtId",
    "apiVersion", "apiStrict", "apiDeprecationErrors", "isMapReduceCommand", "exchange",
    "collectionUUID", "fromMongos", "fromRouter", "needsMerge", "mergeByPBRT",
    "encryptionInformation", "maxTimeMSOpOnly", "readOnce"})


def aggregate(store, server, cmd):
    unknown = next((k for k in cmd if not k.startswith("$") and k not in AGGREGATE_FIELDS),
                   None)
    if unknown is not None:
        raise CommandError(40415, f"BSON field 'aggregate.{unknown}' is an unknown field.")
    pipeline = cmd.get("pipeline")
    checks.check_pipeline(pipeline)
    if "cursor" not in cmd and not cmd.get("explain"):
        raise CommandError(9, "The 'cursor' option is required, except for aggregate with the "
                              "explain argument")
    stage = _check_write_stage(cmd, pipeline)
    if pipeline and isinstance(pipeline[0], dict) and "$changeStream" in pipeline[0]:
        return changes.open_stream(store, server, cmd, pipeline,
                                   pipeline_runner(store, cmd["$db"]))
    ns, docs, pipeline = _source(store, server, cmd, pipeline)
    if stage == "$merge" and isinstance(pipeline[-1]["$merge"], dict) and \
            pipeline[-1]["$merge"].get("whenMatched") == "fail":
        _merge_fail_on_match(store, cmd, list(mm_aggregate.process_pipeline(
            docs, store.client[cmd["$db"]], pipeline[:-1], None, user_vars=cmd.get("let"))),
            pipeline[-1]["$merge"])
    result = list(mm_aggregate.process_pipeline(docs, store.client[cmd["$db"]], pipeline, None,
                                                user_vars=cmd.get("let")))
    if stage in ("$out", "$merge"):
        result = []
    batch = (cmd.get("cursor") or {}).get("batchSize", DEFAULT_BATCH)
    return store.cursor_reply(server, ns, result, batch)


COMMANDS = {"find": find, "count": count, "distinct": distinct, "aggregate": aggregate,
            "getMore": lambda store, server, cmd: store.get_more(server, cmd),
            "killCursors": lambda store, server, cmd: store.kill_cursors(server, cmd)}
