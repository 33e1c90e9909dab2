"""Checks a MongoDB server makes before running a command, with the codes it answers.

The query engine behind the simulated server is forgiving where MongoDB is not: unknown
operators, conflicting update paths, unknown pipeline stages and a ``$group`` without ``_id``
are refused here, before anything runs, with MongoDB's codes and messages.
"""
from collections.abc import Mapping

from singlemongo.testing.query.codes import CommandError

QUERY_OPERATORS = frozenset({
    "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$not", "$exists", "$type",
    "$mod", "$regex", "$options", "$elemMatch", "$size", "$all", "$geoWithin", "$within",
    "$geoIntersects", "$near", "$nearSphere", "$bitsAllSet", "$bitsAnySet", "$bitsAllClear",
    "$bitsAnyClear", "$minDistance", "$maxDistance", "$geometry", "$box", "$center",
    "$centerSphere", "$polygon"})
TOP_LEVEL_OPERATORS = frozenset({"$and", "$or", "$nor", "$expr", "$text", "$comment",
                                 "$jsonSchema", "$where", "$sampleRate"})
UPDATE_OPERATORS = frozenset({"$currentDate", "$inc", "$min", "$max", "$mul", "$rename", "$set",
                              "$setOnInsert", "$unset", "$addToSet", "$pop", "$pull", "$push",
                              "$pullAll", "$bit"})
PIPELINE_STAGES = frozenset({
    "$addFields", "$bucket", "$bucketAuto", "$changeStream", "$changeStreamSplitLargeEvent",
    "$collStats", "$count",
    "$currentOp", "$densify", "$documents", "$facet", "$fill", "$geoNear", "$graphLookup",
    "$group", "$indexStats", "$limit", "$listLocalSessions", "$listSessions",
    "$listSearchIndexes", "$lookup", "$match", "$merge", "$out", "$planCacheStats", "$project",
    "$redact", "$replaceRoot", "$replaceWith", "$sample", "$search", "$searchMeta", "$set",
    "$setWindowFields", "$skip", "$sort", "$sortByCount", "$unionWith", "$unset", "$unwind",
    "$vectorSearch"})
UPDATE_PIPELINE_STAGES = frozenset({"$addFields", "$set", "$project", "$unset", "$replaceRoot",
                                    "$replaceWith"})


def check_filter(query, where="filter", nested=False):
    """Refuse unknown operators (2 BadValue), and $where below the top level (the simulated
    server runs it on whole documents only)."""
    if query is None:
        return
    if not isinstance(query, Mapping):
        raise CommandError(2, f"{where} must be an object")
    for key, value in query.items():
        if key.startswith("$"):
            if key not in TOP_LEVEL_OPERATORS:
                raise CommandError(2, f"unknown top level operator: {key}. If you have a field "
                                      f"name that starts with a '$' symbol, consider using "
                                      f"$getField or $setField.")
            if key == "$where" and nested:
                raise CommandError(2, "the simulated server runs $where at the top level of a "
                                      "filter only, not inside $and, $or or $nor")
            if key in ("$and", "$or", "$nor"):
                if not isinstance(value, list) or not value:
                    raise CommandError(2, "$and/$or/$nor must be a nonempty array")
                for part in value:
                    check_filter(part, where, nested=True)
            continue
        _check_condition(value, where)


def _check_condition(value, where):
    if not isinstance(value, Mapping) or not value or not next(iter(value)).startswith("$"):
        return
    for op, arg in value.items():
        if op not in QUERY_OPERATORS:
            raise CommandError(2, f"unknown operator: {op}")
        if op == "$not":
            if isinstance(arg, Mapping):
                _check_condition(arg, where)
        elif op in ("$in", "$nin", "$all") and not isinstance(arg, list):
            raise CommandError(2, f"{op} needs an array")


def _paths(update):
    for op, fields in update.items():
        if not isinstance(fields, Mapping):
            raise CommandError(9, f"Modifiers operate on fields but we found type "
                                  f"{type(fields).__name__} instead. For example: "
                                  f"{{$mod: {{<field>: ...}}}} not {{{op}: {fields!r}}}")
        for path in fields:
            yield path
            if op == "$rename":
                yield fields[path]


def _conflicts(a, b):
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def check_update(update):
    """Operators known (9 FailedToParse), no two paths in conflict (40)."""
    if isinstance(update, list):
        check_pipeline(update, UPDATE_PIPELINE_STAGES)
        return
    if not isinstance(update, Mapping):
        raise CommandError(9, "Update argument must be either an object or an array")
    if not any(k.startswith("$") for k in update):
        return  # a replacement document
    for op in update:
        if op not in UPDATE_OPERATORS:
            raise CommandError(9, f"Unknown modifier: {op}. Expected a valid update modifier "
                                  f"or pipeline-style update specified as an array")
    seen = []
    for path in _paths(update):
        for other in seen:
            if _conflicts(path, other):
                raise CommandError(40, f"Updating the path '{path}' would create a conflict "
                                       f"at '{other.split('.')[0] if path != other else path}'")
        seen.append(path)


def check_pipeline(pipeline, allowed=PIPELINE_STAGES):
    """Stage names known (40324), one field per stage, $group has _id, $out/$merge last."""
    if not isinstance(pipeline, list):
        raise CommandError(14, "'pipeline' option must be specified as an array")
    for i, stage in enumerate(pipeline):
        if not isinstance(stage, Mapping) or len(stage) != 1:
            raise CommandError(40323, "A pipeline stage specification object must contain "
                                      "exactly one field.")
        (name, arg), = stage.items()
        if name not in PIPELINE_STAGES:
            raise CommandError(40324, f"Unrecognized pipeline stage name: '{name}'")
        if name not in allowed:
            raise CommandError(72, f"{name} is not allowed to be used within an update")
        if name == "$group" and (not isinstance(arg, Mapping) or "_id" not in arg):
            raise CommandError(15955, "a group specification must include an _id")
        if name in ("$out", "$merge") and i != len(pipeline) - 1:
            raise CommandError(40601, f"{name} can only be the final stage in the pipeline")
        if name == "$match":
            if not isinstance(arg, Mapping):  # the "$match" page: a query document
                raise CommandError(15959, "the match filter must be an expression in an object")
            check_filter(arg, "$match")
        if name == "$facet" and isinstance(arg, Mapping):
            for sub in arg.values():
                check_pipeline(sub)


# Variables every expression may read ("Aggregation Variables"), and those an operator binds.
SYSTEM_VARIABLES = frozenset({"ROOT", "CURRENT", "NOW", "CLUSTER_TIME", "REMOVE", "DESCEND",
                              "PRUNE", "KEEP", "SEARCH_META", "USER_ROLES", "IS_MR"})


def _bound_and_used(node, bound, used):
    if isinstance(node, str) and node.startswith("$$"):
        used.add(node[2:].split(".", 1)[0])
    elif isinstance(node, list):
        for item in node:
            _bound_and_used(item, bound, used)
    elif isinstance(node, Mapping):
        if isinstance(node.get("vars"), Mapping):  # $let
            bound.update(node["vars"])
        if isinstance(node.get("as"), str):  # $map, $filter
            bound.add(node["as"])
        if "$reduce" in node:
            bound.update(("this", "value"))
        for value in node.values():
            _bound_and_used(value, bound, used)


def check_variables(query, let):
    """An ``$expr`` reading a variable nobody defined fails (17276), as on a server (the
    query engine would read it as missing)."""
    if not isinstance(query, Mapping):
        return
    for key, value in query.items():
        if key in ("$and", "$or", "$nor") and isinstance(value, list):
            for part in value:
                check_variables(part, let)
        elif key == "$expr":
            bound, used = set(SYSTEM_VARIABLES) | set(let or ()), set()
            _bound_and_used(value, bound, used)
            missing = sorted(used - bound)
            if missing:
                raise CommandError(17276, f"Use of undefined variable: {missing[0]}")
