"""``explain`` as a MongoDB 7.0 server answers it (classic engine): the ``queryPlanner`` with
the winning plan a simple planner picks, and ``executionStats`` counted by running the query.

The planner: a hinted index wins; else the index whose leading keys the filter constrains
most (equality or range), else one that gives the sort; else a collection scan. ``_id``
equality is IDHACK. Writes (update, delete, findAndModify) are planned, never run, as on a
server. An aggregate with ``explain: true`` answers the same way for its leading ``$match``
and ``$sort``.
"""
import time

from singlemongo.testing.query import partial, reads
from singlemongo.testing.query.codes import CommandError
from singlemongo.testing.query.reads import namespace

VERBOSITIES = ("queryPlanner", "executionStats", "allPlansExecution")
# Explained command -> (the key naming its collection, its filter, the stage above the scan).
EXPLAINABLE = {
    "find": ("find", "filter", None), "count": ("count", "query", "COUNT"),
    "distinct": ("distinct", "query", None), "aggregate": ("aggregate", None, None),
    "delete": ("delete", None, "DELETE"), "update": ("update", None, "UPDATE"),
    "findAndModify": ("findAndModify", "query", None),
}


def _index_for(store, ns, query, sort, hint):
    """(index name, key pattern) the query would use, or None for a collection scan."""
    if not reads.exists(store, ns):
        return None
    indexes = store.collection(*ns).index_information()
    for name, spec in indexes.items():
        if hint in (name, dict(spec["key"])) or (isinstance(hint, dict) and
                                                 list(hint.items()) == list(spec["key"])):
            return name, dict(spec["key"])
    fields = set(query or ())
    best, score = None, 0
    for name, spec in indexes.items():
        if "partialFilterExpression" in spec and not partial.implied(
                query, spec["partialFilterExpression"]):
            continue
        keys = [k for k, _ in spec["key"]]
        matched = 0
        for key in keys:
            if key not in fields:
                break
            matched += 1
        if matched > score:
            best, score = (name, dict(spec["key"])), matched
    if best is None and sort:
        first = next(iter(sort))
        best = next(((n, dict(s["key"])) for n, s in indexes.items()
                     if s["key"][0][0] == first), None)
    return best


def plan(store, ns, query, sort=None, hint=None, limit=0, projection=None, top=None):
    """The winning plan: stages from the scan up (FETCH, SORT, PROJECTION, LIMIT, top)."""
    query = query or {}
    chosen = _index_for(store, ns, query, sort, hint)
    if chosen is not None and chosen[0] == "_id_" and set(query) == {"_id"} and \
            not isinstance(query["_id"], dict):
        stage = {"stage": "IDHACK"}
    elif chosen is not None:
        name, key = chosen
        is_partial = "partialFilterExpression" in store.collection(*ns).index_information()[name]
        stage = {"stage": "FETCH", "inputStage": {
            "stage": "IXSCAN", "keyPattern": key, "indexName": name, "isMultiKey": False,
            "isPartial": is_partial, "direction": "forward",
            "indexBounds": {k: ["[MinKey, MaxKey]"] for k in key}}}
        rest = {k: v for k, v in query.items() if k not in key}
        if rest:
            stage["filter"] = rest
    else:
        stage = {"stage": "COLLSCAN", "direction": "forward"}
        if query:
            stage["filter"] = query
    if sort and (chosen is None or next(iter(sort)) != next(iter(chosen[1]))):
        stage = {"stage": "SORT", "sortPattern": dict(sort), "inputStage": stage}
    if projection:
        stage = {"stage": "PROJECTION_SIMPLE", "transformBy": dict(projection),
                 "inputStage": stage}
    if limit:
        stage = {"stage": "LIMIT", "limitAmount": abs(limit), "inputStage": stage}
    if top:
        stage = {"stage": top, "inputStage": stage}
    return stage


def _inner(cmd):
    inner = cmd.get("explain")
    if not isinstance(inner, dict) or not inner:
        raise CommandError(2, "explain takes the command to explain as a document")
    name = next(iter(inner))
    if name not in EXPLAINABLE:
        raise CommandError(2, f"Explain failed due to unknown command: {name}")
    verbosity = cmd.get("verbosity", "allPlansExecution")
    if verbosity not in VERBOSITIES:
        raise CommandError(2, f"verbosity string must be one of {list(VERBOSITIES)}, "
                              f"not {verbosity!r}")
    return name, dict(inner, **{"$db": cmd["$db"]}), verbosity


def _shape(name, inner):
    """(filter, sort, hint, limit, projection, top stage) of the explained command."""
    _, filter_key, top = EXPLAINABLE[name]
    if name == "aggregate":
        pipeline = inner.get("pipeline") or []
        first = pipeline[0] if pipeline and isinstance(pipeline[0], dict) else {}
        sort = next((s["$sort"] for s in pipeline if isinstance(s, dict) and "$sort" in s),
                    None)
        return first.get("$match"), sort, inner.get("hint"), 0, None, None
    if name in ("delete", "update"):
        statements = inner.get("deletes" if name == "delete" else "updates") or [{}]
        statement = statements[0] if isinstance(statements[0], dict) else {}
        return statement.get("q"), None, statement.get("hint"), 0, None, top
    return (inner.get(filter_key), inner.get("sort"), inner.get("hint"),
            inner.get("limit", 0) or 0, inner.get("projection"), top)


def explain(store, server, cmd):
    name, inner, verbosity = _inner(cmd)
    ns = namespace(inner, EXPLAINABLE[name][0]) if inner.get(name) != 1 else \
        (inner["$db"], "$cmd.aggregate")
    query, sort, hint, limit, projection, top = _shape(name, inner)
    reads.check_hint(store, ns, hint)
    winning = plan(store, ns, query, sort, hint, limit, projection, top)
    reply = {"explainVersion": "1", "queryPlanner": {
        "namespace": f"{ns[0]}.{ns[1]}", "indexFilterSet": False, "parsedQuery": query or {},
        "maxIndexedOrSolutionsReached": False, "maxIndexedAndSolutionsReached": False,
        "maxScansToExplodeReached": False, "winningPlan": winning, "rejectedPlans": []},
        "command": {k: v for k, v in inner.items() if k != "$db"},
        "serverInfo": {"host": server.host, "port": server.port, "version": "7.0.0"},
        "ok": 1}
    if verbosity != "queryPlanner":
        reply["executionStats"] = _stats(store, ns, name, query, sort, limit, winning)
    return reply


def _stats(store, ns, name, query, sort, limit, winning):
    started = time.monotonic()
    everything = reads.select(store, ns, None) if reads.exists(store, ns) else []
    matched = reads.select(store, ns, query) if everything else []
    returned = len(matched[:abs(limit)] if limit else matched)
    if name in ("count", "delete", "update"):
        returned = 0
    scan = winning
    while "inputStage" in scan and scan["stage"] not in ("FETCH", "IDHACK"):
        scan = scan["inputStage"]
    by_index = scan["stage"] in ("FETCH", "IDHACK")
    return {"executionSuccess": True, "nReturned": returned,
            "executionTimeMillis": int((time.monotonic() - started) * 1000),
            "totalKeysExamined": len(matched) if by_index else 0,
            "totalDocsExamined": len(matched) if by_index else len(everything),
            "executionStages": dict(winning, nReturned=returned)}


def aggregate(store, server, cmd):
    """``aggregate`` with ``explain: true`` answers with the plan of its leading stages;
    any other aggregate runs."""
    if not cmd.get("explain"):
        return reads.aggregate(store, server, cmd)
    return explain(store, server, {"$db": cmd["$db"], "verbosity": "queryPlanner",
                                   "explain": {k: v for k, v in cmd.items()
                                               if k not in ("explain", "$db", "cursor")}})


COMMANDS = {"explain": explain, "aggregate": aggregate}
