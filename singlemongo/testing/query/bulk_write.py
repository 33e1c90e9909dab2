"""MongoDB 8.0's ``bulkWrite`` command (run on admin): writes across namespaces, each op run
as the insert, update or delete statement it stands for, with one result per op in a cursor
and the summary counts beside it (bulk write spec, "Handling the bulkWrite Server Response").
"""
from singlemongo.testing.query import writes
from singlemongo.testing.query.codes import CommandError, code_name

# The fields each kind of op may carry (an unknown one is the server's IDL error, 40415).
OP_FIELDS = {"insert": frozenset({"insert", "document"}),
             "update": frozenset({"update", "filter", "updateMods", "multi", "upsert",
                                  "arrayFilters", "hint", "collation", "sort"}),
             "delete": frozenset({"delete", "filter", "multi", "hint", "collation"})}
RESULTS_NS = ("admin", "$cmd.bulkWrite")


def _namespaces(cmd):
    """nsInfo as (db, collection) pairs, checked as the server checks them."""
    found = []
    for i, entry in enumerate(cmd.get("nsInfo") or ()):
        ns = entry.get("ns") if isinstance(entry, dict) else None
        db, dot, coll = ns.partition(".") if isinstance(ns, str) else ("", "", "")
        if not db or not dot or not coll:
            raise CommandError(73, f"Invalid namespace specified '{ns}' in nsInfo.{i}")
        found.append((db, coll))
    return found


def _statement(kind, op):
    """The insert document, update statement or delete statement ``op`` stands for."""
    unknown = next((k for k in op if k not in OP_FIELDS[kind]), None)
    if unknown is not None:
        raise CommandError(40415, f"BSON field 'bulkWrite.ops.{unknown}' is an unknown field.")
    if kind == "insert":
        return op.get("document")
    statement = {"q": op.get("filter") or {}}
    if kind == "update":
        statement["u"] = op.get("updateMods")
        statement.update((k, op[k]) for k in ("multi", "upsert", "arrayFilters", "sort")
                         if k in op)
    else:
        statement["limit"] = 0 if op.get("multi") else 1
    statement.update((k, op[k]) for k in ("hint", "collation") if k in op)
    return statement


def _run_op(store, server, cmd, namespaces, op):
    """The reply of the one-statement insert, update or delete that runs ``op``."""
    kind = next(iter(op), None) if isinstance(op, dict) else None
    if kind not in OP_FIELDS:
        raise CommandError(40415, f"BSON field 'bulkWrite.ops.{kind}' is an unknown field.")
    index = op[kind]
    if not isinstance(index, int) or isinstance(index, bool) or \
            not 0 <= index < len(namespaces):
        raise CommandError(2, f"BulkWrite ops entry {kind!r} has an invalid nsInfo index "
                              f"{index!r}")
    db, coll = namespaces[index]
    field = {"insert": "documents", "update": "updates", "delete": "deletes"}[kind]
    sub = {kind: coll, field: [_statement(kind, op)], "ordered": True, "$db": db}
    if "let" in cmd:
        sub["let"] = cmd["let"]
    if "bypassDocumentValidation" in cmd and kind != "delete":
        sub["bypassDocumentValidation"] = cmd["bypassDocumentValidation"]
    run = writes.COMMANDS[kind]
    recorded = getattr(store, "_recorded", None)  # a transaction's view records nothing
    if recorded is None:
        return run(store, server, sub)
    return recorded(store, kind, sub, lambda: run(store, server, sub))


def _entry(kind, index, reply):
    """The op's result document, and (inserted, matched, modified, upserted, deleted)."""
    errors = reply.get("writeErrors")
    if not reply.get("ok") or errors:
        error = errors[0] if errors else reply
        entry = {"ok": 0, "idx": index, "code": error.get("code"),
                 "codeName": error.get("codeName") or code_name(error.get("code")),
                 "errmsg": error.get("errmsg")}
        entry.update((k, error[k]) for k in ("errInfo", "keyPattern", "keyValue") if k in error)
        return entry, None
    n = reply.get("n", 0)
    if kind == "insert":
        return {"ok": 1, "idx": index, "n": n}, (n, 0, 0, 0, 0)
    if kind == "delete":
        return {"ok": 1, "idx": index, "n": n}, (0, 0, 0, 0, n)
    entry = {"ok": 1, "idx": index, "n": n, "nModified": reply.get("nModified", 0)}
    upserted = reply.get("upserted") or []
    if upserted:
        entry["upserted"] = {"_id": upserted[0]["_id"]}
    return entry, (0, n - len(upserted), reply.get("nModified", 0), len(upserted), 0)


def bulk_write(store, server, cmd):
    """Run the ops in order; an ordered bulk write stops at its first error."""
    if cmd["$db"] != "admin":
        raise CommandError(13, "bulkWrite may only be run against the admin database.")
    namespaces = _namespaces(cmd)
    ordered = cmd.get("ordered", True) is not False
    results, totals, errors = [], [0, 0, 0, 0, 0], 0
    for index, op in enumerate(cmd.get("ops") or ()):
        kind = next(iter(op), None) if isinstance(op, dict) else None
        try:
            reply = _run_op(store, server, cmd, namespaces, op)
        except CommandError as exc:
            reply = exc.reply()
        entry, counts = _entry(kind, index, reply)
        if counts is None:
            errors += 1
        else:
            totals = [a + b for a, b in zip(totals, counts)]
        if counts is None or not cmd.get("errorsOnly"):
            results.append(entry)
        if counts is None and ordered:
            break
    reply = store.cursor_reply(server, RESULTS_NS, results)
    reply.update(nErrors=errors, nInserted=totals[0], nMatched=totals[1],
                 nModified=totals[2], nUpserted=totals[3], nDeleted=totals[4])
    return reply


COMMANDS = {"bulkWrite": bulk_write}
