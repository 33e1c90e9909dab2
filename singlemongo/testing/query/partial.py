"""Partial indexes: their filter is checked when the index is built, and the planner uses one
only for a query that implies its filter (MongoDB's "Partial Indexes", "Query Coverage").

Implication is decided per field, for equality and the four range operators, as the server's
simple cases are: ``{a: 1}`` and ``{a: {$lte: 1}}`` imply ``{a: {$lte: 1.5}}``; ``{a: {$lte:
1.6}}`` does not. Anything else is not implied (a collection scan), which never changes a
result, only the plan explain shows."""
from collections.abc import Mapping

from mongomock_ng import filtering

from singlemongo.testing.query.checks import check_filter
from singlemongo.testing.query.codes import CommandError

UPPER, LOWER = ("$lt", "$lte"), ("$gt", "$gte")


def check(expression):
    """Refuse a partialFilterExpression a server refuses (not an object, unknown operators,
    malformed $and)."""
    if not isinstance(expression, Mapping):
        raise CommandError(14, "BSON field 'partialFilterExpression' is the wrong type, "
                               "expected type 'object'")
    check_filter(expression, "partialFilterExpression")


def _conditions(spec):
    """{operator: value} of one field's condition."""
    if isinstance(spec, Mapping) and spec and all(str(k).startswith("$") for k in spec):
        return dict(spec)
    return {"$eq": spec}


def _implies(query_ops, wanted_op, wanted):
    for op, value in query_ops.items():
        if op == "$eq" and filtering.filter_applies({"v": {wanted_op: wanted}}, {"v": value}):
            return True
        try:
            if wanted_op in UPPER and op in UPPER and (
                    value < wanted or (value == wanted and (op == "$lt" or wanted_op == "$lte"))):
                return True
            if wanted_op in LOWER and op in LOWER and (
                    value > wanted or (value == wanted and (op == "$gt" or wanted_op == "$gte"))):
                return True
        except TypeError:  # values of different types: no implication
            continue
    return False


def implied(query, expression):
    """Whether every document ``query`` matches is in the partial index."""
    parts = expression.get("$and", [expression]) if set(expression) == {"$and"} else [expression]
    for part in parts:
        for field, spec in part.items():
            if field.startswith("$") or field not in (query or {}):
                return False
            query_ops = _conditions(query[field])
            if not all(_implies(query_ops, op, value)
                       for op, value in _conditions(spec).items()):
                return False
    return True
