"""Writing as a MongoDB server does: insert, update, delete and findAndModify, statement by
statement, with per-document write errors, ordered or not.

Updates are applied document by document (matched here, written by ``_id``), which gives
``let``, the positional ``$`` and the type checks MongoDB makes before it changes anything.
"""
import numbers
import re

from bson import ObjectId, Regex
from bson import encode as bson_encode  # bound once: a test may patch bson.encode for its client
from mongomock_ng import aggregate as mm_aggregate
from mongomock_ng import filtering, helpers

from singlemongo.testing.query import checks, collation, collection_options, uniques, update_paths
from singlemongo.testing.query.update_paths import value_at
from singlemongo.testing.query.codes import CommandError, WriteFailure
from singlemongo.testing.query.reads import (check_hint, namespace, positional_index, project, select, sort_documents)

ARRAY_OPERATORS = ("$push", "$addToSet", "$pull", "$pullAll", "$pop")
NUMERIC_OPERATORS = ("$inc", "$mul")


def _statement_errors(statements, run, ordered):
    """Run each statement; collect write errors (stop at the first if ordered)."""
    errors = []
    for index, statement in enumerate(statements):
        try:
            run(statement)
        except Exception as exc:
            from singlemongo.testing.query.store import engine_error  # the error table lives with the store
            failure = engine_error(exc)
            if not isinstance(failure, WriteFailure):
                failure = WriteFailure(failure.code, failure.message, **failure.extra)
            errors.append(failure.entry(index))
            if ordered:
                break
    return errors


def _with_errors(reply, errors):
    if errors:
        reply["writeErrors"] = errors
    return reply


MAX_BSON_OBJECT_SIZE = 16 * 1024 * 1024  # what the simulated servers' hello announces


def check_size(doc, code, what):
    """A document the server would not store (over maxBsonObjectSize) is a write error."""
    size = len(bson_encode(doc))
    if size > MAX_BSON_OBJECT_SIZE:
        raise WriteFailure(code, f"{what}. size in bytes: {size}, max size: "
                                 f"{MAX_BSON_OBJECT_SIZE}")


def insert(store, server, cmd):
    ns = namespace(cmd, "insert")
    coll = store.collection(*ns)
    store.executions += 1
    inserted = []

    def run(doc):
        if not isinstance(doc, dict):
            raise WriteFailure(2, "a document to insert must be an object")
        if isinstance(doc.get("_id"), list):
            raise WriteFailure(53, "The '_id' value cannot be of type array")
        if isinstance(doc.get("_id"), (Regex, re.Pattern)):
            raise WriteFailure(2, "can't use a regex for _id")
        if isinstance(doc.get("_id"), dict) and any(k.startswith("$") for k in doc["_id"]):
            bad = next(k for k in doc["_id"] if k.startswith("$"))
            raise WriteFailure(53, f"_id fields may not contain '$'-prefixed fields: {bad} is "
                                   f"not valid for storage.")
        # mongod stores _id first, wherever the client put it.
        doc = {"_id": doc["_id"] if "_id" in doc else ObjectId(), **doc}
        check_size(doc, 2, "object to insert too large")
        if cmd.get("bypassDocumentValidation"):
            coll.insert_one(doc, bypass_document_validation=True)
        else:
            collection_options.insert(coll, doc, uniques.insert_document)
        inserted.append(doc["_id"])

    errors = _statement_errors(cmd.get("documents", []), run, cmd.get("ordered", True))
    return _with_errors({"ok": 1, "n": len(inserted)}, errors)


def _check_types(doc, update):
    """The checks MongoDB makes before changing a document: numbers for $inc/$mul (14
    TypeMismatch), arrays for the array operators (2 BadValue)."""
    if not isinstance(update, dict):
        return
    for op, fields in update.items():
        for path in fields if isinstance(fields, dict) else ():
            if "$" in path:
                continue
            current = value_at(doc, path)
            if current is filtering.NOTHING:
                continue
            if op in NUMERIC_OPERATORS and (isinstance(current, bool) or not isinstance(
                    current, numbers.Number)):
                raise WriteFailure(14, f"Cannot apply {op} to a value of non-numeric type. "
                                       f"{{_id: {doc.get('_id')!r}}} has the field '{path}' of "
                                       f"non-numeric type {_type_name(current)}")
            if op == "$pop" and not isinstance(current, list):  # pop_node: TypeMismatch
                raise WriteFailure(14, f"Path '{path}' contains an element of non-array type "
                                       f"'{_type_name(current)}'")
            if op in ARRAY_OPERATORS and not isinstance(current, list):
                raise WriteFailure(2, f"The field '{path}' must be an array but is of type "
                                      f"{_type_name(current)} in document "
                                      f"{{_id: {doc.get('_id')!r}}}")


def _type_name(value):
    return {str: "string", bool: "bool", int: "int", float: "double", dict: "object",
            list: "array", type(None): "null"}.get(type(value), type(value).__name__)


def _resolve_positional(doc, query, update):
    """Replace ``$`` in update paths with the index the query matched in that document."""
    if not isinstance(update, dict) or not any(
            ".$." in p or p.endswith(".$") for f in update.values() if isinstance(f, dict)
            for p in f):
        return update
    resolved = {}
    for op, fields in update.items():
        resolved[op] = {}
        for path, value in fields.items():
            if ".$." in path or path.endswith(".$"):
                array_path = path.split(".$")[0]
                index = positional_index(doc, query, array_path)
                if index is None:
                    raise WriteFailure(2, "The positional operator did not find the match "
                                          "needed from the query.")
                path = path.replace(f"{array_path}.$", f"{array_path}.{index}", 1)
            resolved[op][path] = value
    return resolved


def update_document(coll, doc, query, update, array_filters=None, let=None, bypass=False):
    """Apply one update to one document; whether it changed. ``bypass``: the command's
    bypassDocumentValidation."""
    update = update_paths.viable(doc, update)
    _check_types(doc, update)
    update = _resolve_positional(doc, query, update)
    if not isinstance(update, list) and not any(k.startswith("$") for k in update):
        check_size(dict(update, _id=doc["_id"]), 17419,
                   "Resulting document after update is larger than the maximum")
        if "_id" in update and update["_id"] != doc["_id"]:
            raise WriteFailure(66, "After applying the update, the (immutable) field '_id' "
                                   "was found to have been altered to _id: " + repr(update["_id"]))
        result = coll.replace_one({"_id": doc["_id"]}, update,
                                  bypass_document_validation=bypass)
    elif isinstance(update, list):
        return _pipeline_update(coll, doc, update, let, bypass)
    elif array_filters or _has_identifiers(update):
        result = coll.update_one({"_id": doc["_id"]}, _expand_identifiers(
            doc, update, _filters_by_identifier(array_filters or [])),
            bypass_document_validation=bypass)
    else:
        result = coll.update_one({"_id": doc["_id"]}, update, bypass_document_validation=bypass)
    return result.modified_count > 0


def _has_identifiers(update):
    return any("$[" in path for fields in update.values() if isinstance(fields, dict)
               for path in fields)


def _filters_by_identifier(array_filters):
    """arrayFilters as {identifier: [(path below the element, condition)]}."""
    by_name = {}
    for spec in array_filters:
        for key, cond in spec.items():
            name, _, rest = key.partition(".")
            by_name.setdefault(name, []).append((rest, cond))
    return by_name


def _element_passes(element, conditions):
    for rest, cond in conditions:
        if rest:
            if not (isinstance(element, dict) and filtering.filter_applies({rest: cond}, element)):
                return False
        elif not filtering.filter_applies({"v": cond}, {"v": element}):
            return False
    return True


def _concrete_paths(parts, value, filters):
    """Every path ``parts`` names in ``value``, each ``$[]`` and ``$[identifier]`` replaced
    by the indexes of the elements it selects ("The Filtered Positional Operator")."""
    if not parts:
        return [[]]
    head, rest = parts[0], parts[1:]
    if head.startswith("$[") and head.endswith("]"):
        name = head[2:-1]
        if not isinstance(value, list):
            return []
        if name and name not in filters:
            raise WriteFailure(2, f"No array filter found for identifier '{name}' in path")
        return [[str(i), *tail] for i, element in enumerate(value)
                if not name or _element_passes(element, filters[name])
                for tail in _concrete_paths(rest, element, filters)]
    inner = value_at(value, head) if isinstance(value, (dict, list)) else filtering.NOTHING
    return [[head, *tail] for tail in _concrete_paths(rest, inner, filters)]


def _expand_identifiers(doc, update, filters):
    expanded = {}
    for op, fields in update.items():
        expanded[op] = {}
        for path, value in fields.items():
            for parts in _concrete_paths(path.split("."), doc, filters):
                expanded[op][".".join(parts)] = value
    return {op: fields for op, fields in expanded.items() if fields} or {"$set": {}}


def _pipeline_update(coll, doc, pipeline, let, bypass=False):
    """An aggregation-pipeline update: the pipeline's output replaces the document, whose
    _id is kept when the output has none (MongoDB's "Updates with Aggregation Pipeline")."""
    current = coll.find_one({"_id": doc["_id"]})
    new, = mm_aggregate.process_pipeline([current], coll.database, pipeline, None,
                                         user_vars=let)
    if "_id" not in new:
        new = {"_id": current["_id"], **new}
    elif new["_id"] != current["_id"]:
        raise WriteFailure(66, "Performing an update on the path '_id' would modify the "
                               "immutable field '_id'")
    if new == current:
        return False
    if any(key.startswith("$") for key in new):
        # Since 5.0 a pipeline may write $-prefixed fields ($setField); the engine's
        # replace refuses them, so the new document is stored as the pipeline made it.
        coll._store[current["_id"]] = new
        return True
    coll.replace_one({"_id": current["_id"]}, new, bypass_document_validation=bypass)
    return True


def upsert(coll, query, update, array_filters=None, bypass=False):
    """Insert from the query's equality fields and the update; the new _id."""
    if isinstance(update, dict) and any(".$" in p for f in update.values()
                                        if isinstance(f, dict) for p in f):
        raise WriteFailure(2, "The positional operator did not find the match needed from "
                              "the query.")
    replacement = isinstance(update, dict) and not any(k.startswith("$") for k in update)
    if replacement:
        new_id = update["_id"] if "_id" in update else query.get("_id", ObjectId()) if not \
            isinstance(query.get("_id"), dict) else ObjectId()
        doc = {"_id": new_id, **update}  # _id first, as mongod stores it
        check_size(doc, 17419, "Resulting document after update is larger than the maximum")
        coll.insert_one(doc, bypass_document_validation=bypass)
        return doc["_id"]
    result = coll.update_one(query, update, upsert=True, array_filters=array_filters,
                             bypass_document_validation=bypass)
    wanted = query.get("_id", result.upserted_id)
    if isinstance(wanted, dict) and any(k.startswith("$") for k in wanted):
        wanted = result.upserted_id
    if wanted != result.upserted_id or wanted is None:  # the engine replaces a null _id
        doc = coll.find_one({"_id": result.upserted_id})
        coll.delete_one({"_id": result.upserted_id})
        doc["_id"] = wanted
        coll.insert_one(doc)
    return wanted


# The fields of an update statement an 8.0 server knows.
UPDATE_STATEMENT_FIELDS = frozenset({"q", "u", "c", "upsert", "multi", "arrayFilters", "hint",
                                     "collation", "upsertSupplied", "sampleId", "sort"})


def _parse_update_statements(statements):
    """What the server refuses before running any statement: a command-level error."""
    for spec in statements:
        if not isinstance(spec, dict):
            continue
        unknown = next((k for k in spec if k not in UPDATE_STATEMENT_FIELDS), None)
        if unknown is not None:
            raise CommandError(40415, f"BSON field 'update.updates.{unknown}' is an unknown "
                                      f"field.")
        if isinstance(spec.get("u"), list):
            checks.check_pipeline(spec["u"], checks.UPDATE_PIPELINE_STAGES)


def _update_statement(store, ns, spec, let, totals, bypass=False):
    query, update = spec.get("q") or {}, spec.get("u")
    checks.check_update(update)
    multi = spec.get("multi", False)
    if multi and isinstance(update, dict) and update and not any(
            k.startswith("$") for k in update):
        raise WriteFailure(9, "multi update is not supported for replacement-style update")
    check_hint(store, ns, spec.get("hint"))
    coll = store.collection(*ns)
    docs = select(store, ns, query, let)
    if not multi:  # 8.0: a single-document update takes the first in its sort order
        docs = sort_documents(docs, spec["sort"])[:1] if spec.get("sort") else docs[:1]
    for doc in docs:
        totals["n"] += 1
        if update_document(coll, doc, query, update, spec.get("arrayFilters"), let, bypass):
            totals["nModified"] += 1
    if not docs and spec.get("upsert"):
        new_id = upsert(coll, query, update, spec.get("arrayFilters"), bypass)
        totals["n"] += 1
        totals["upserted"].append({"index": totals["index"], "_id": new_id})


def update(store, server, cmd):
    ns = namespace(cmd, "update")
    store.executions += 1
    totals = {"n": 0, "nModified": 0, "upserted": [], "index": 0}
    _parse_update_statements(cmd.get("updates", []))

    def run(spec):
        try:
            with collation.applied(spec.get("collation")):
                _update_statement(store, ns, spec, cmd.get("let"), totals,
                                  bool(cmd.get("bypassDocumentValidation")))
        finally:
            totals["index"] += 1

    errors = _statement_errors(cmd.get("updates", []), run, cmd.get("ordered", True))
    reply = {"ok": 1, "n": totals["n"], "nModified": totals["nModified"]}
    if totals["upserted"]:
        reply["upserted"] = totals["upserted"]
    return _with_errors(reply, errors)


def delete(store, server, cmd):
    ns = namespace(cmd, "delete")
    store.executions += 1
    coll = store.collection(*ns)
    deleted = [0]

    def run(spec):
        check_hint(store, ns, spec.get("hint"))
        with collation.applied(spec.get("collation")):
            docs = select(store, ns, spec.get("q"), cmd.get("let"))
        if spec.get("limit", 0) == 1:
            docs = docs[:1]
        for doc in docs:  # by _id, in the store: an $in over every _id was quadratic
            key = doc["_id"]
            del coll._store[helpers.hashdict(key) if isinstance(key, dict) else key]
            deleted[0] += 1

    errors = _statement_errors(cmd.get("deletes", []), run, cmd.get("ordered", True))
    return _with_errors({"ok": 1, "n": deleted[0]}, errors)


def find_and_modify(store, server, cmd):
    ns = namespace(cmd, "findAndModify")
    store.executions += 1
    query, change = cmd.get("query") or {}, cmd.get("update")
    remove = bool(cmd.get("remove"))
    if remove == (change is not None):
        raise CommandError(9, "Either an update or remove=true must be specified")
    if remove and (cmd.get("new") or cmd.get("upsert")):
        raise CommandError(9, "Cannot specify both an update and remove=true")
    if not remove:
        checks.check_update(change)
    check_hint(store, ns, cmd.get("hint"))
    coll = store.collection(*ns)
    docs = sort_documents(select(store, ns, query, cmd.get("let")), cmd.get("sort"))
    last = {"n": 0}
    value = None
    if docs:
        before = docs[0]
        last["n"] = 1
        if remove:
            coll.delete_one({"_id": before["_id"]})
            value = before
        else:
            update_document(coll, before, query, change, cmd.get("arrayFilters"),
                            cmd.get("let"), bool(cmd.get("bypassDocumentValidation")))
            last["updatedExisting"] = True
            value = coll.find_one({"_id": before["_id"]}) if cmd.get("new") else before
    elif not remove:
        last["updatedExisting"] = False
        if cmd.get("upsert"):
            new_id = upsert(coll, query, change, cmd.get("arrayFilters"),
                            bool(cmd.get("bypassDocumentValidation")))
            last.update(n=1, upserted=new_id)
            if cmd.get("new"):
                value = coll.find_one({"_id": new_id})
    if value is not None and cmd.get("fields"):
        value = project(store, ns, [value], cmd["fields"], query)[0]
    return {"ok": 1, "value": value, "lastErrorObject": last}


COMMANDS = {"insert": insert, "update": update, "delete": delete,
            "findAndModify": find_and_modify}
