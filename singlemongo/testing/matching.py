"""Query, update and projection semantics for the simulated store: a useful subset of
MongoDB's (equality and comparison operators, $in/$nin/$exists/$and/$or/$nor; $set, $unset,
$inc, $push, $setOnInsert; inclusion and exclusion projections; sorting)."""
import copy
import re

_MISSING = object()


def get_path(doc, path):
    value = doc
    for part in path.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


def set_path(doc, path, value):
    parts = path.split(".")
    for part in parts[:-1]:
        doc = doc.setdefault(part, {})
    doc[parts[-1]] = value


def unset_path(doc, path):
    parts = path.split(".")
    for part in parts[:-1]:
        doc = doc.get(part, {})
    if isinstance(doc, dict):
        doc.pop(parts[-1], None)


def _cmp_key(value):
    order = {type(None): 0, int: 1, float: 1, str: 2, dict: 3, list: 4, bool: 5}
    return (order.get(type(value), 6), value if not isinstance(value, (dict, list)) else str(value))


def _compare(op, value, target):
    if value is _MISSING or value is None:
        return False
    try:
        return {"$gt": value > target, "$gte": value >= target, "$lt": value < target,
                "$lte": value <= target}[op]
    except TypeError:
        return False


def _eq(value, target):
    if isinstance(value, list) and not isinstance(target, list):
        return target in value
    if value is _MISSING:
        return target is None
    return value == target


def _match_operator(value, op, arg):
    if op == "$eq":
        return _eq(value, arg)
    if op == "$ne":
        return not _eq(value, arg)
    if op in ("$gt", "$gte", "$lt", "$lte"):
        values = value if isinstance(value, list) else [value]
        return any(_compare(op, v, arg) for v in values)
    if op == "$in":
        return any(_eq(value, a) for a in arg)
    if op == "$nin":
        return not any(_eq(value, a) for a in arg)
    if op == "$exists":
        return (value is not _MISSING) == bool(arg)
    if op == "$regex":
        return isinstance(value, str) and re.search(arg, value) is not None
    if op == "$size":
        return isinstance(value, list) and len(value) == arg
    raise ValueError(f"unknown operator: {op}")


def matches(doc, query):
    for key, cond in (query or {}).items():
        if key == "$and":
            ok = all(matches(doc, q) for q in cond)
        elif key == "$or":
            ok = any(matches(doc, q) for q in cond)
        elif key == "$nor":
            ok = not any(matches(doc, q) for q in cond)
        else:
            value = get_path(doc, key)
            if isinstance(cond, dict) and cond and all(k.startswith("$") for k in cond):
                ok = all(_match_operator(value, op, arg) for op, arg in cond.items())
            else:
                ok = _eq(value, cond)
        if not ok:
            return False
    return True


def apply_update(doc, update, inserting=False):
    """Apply an update document (operators) or a replacement; returns the new document."""
    if not any(k.startswith("$") for k in update):
        new = copy.deepcopy(update)
        if "_id" in doc:
            new = {"_id": doc["_id"], **{k: v for k, v in new.items() if k != "_id"}}
        return new
    new = copy.deepcopy(doc)
    for op, fields in update.items():
        for path, arg in fields.items():
            if op == "$set" or (op == "$setOnInsert" and inserting):
                set_path(new, path, copy.deepcopy(arg))
            elif op == "$unset":
                unset_path(new, path)
            elif op == "$inc":
                current = get_path(new, path)
                set_path(new, path, (0 if current is _MISSING else current) + arg)
            elif op == "$push":
                current = get_path(new, path)
                set_path(new, path, ([] if current is _MISSING else list(current)) + [arg])
            elif op != "$setOnInsert":
                raise ValueError(f"unknown update operator: {op}")
    return new


def project(doc, projection):
    if not projection:
        return doc
    include = {k for k, v in projection.items() if v and k != "_id"}
    if include:
        out = {k: v for k, v in doc.items() if k in include}
        if projection.get("_id", 1) and "_id" in doc:
            out = {"_id": doc["_id"], **out}
        return out
    return {k: v for k, v in doc.items() if k not in projection}


def sort_docs(docs, sort):
    for key, direction in reversed(list((sort or {}).items())):
        docs = sorted(docs, key=lambda d: _cmp_key(None if get_path(d, key) is _MISSING
                                                    else get_path(d, key)),
                      reverse=direction < 0)
    return docs
