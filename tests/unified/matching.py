"""Evaluating matches (unified test format, "Evaluating Matches"): root documents may have
extra fields, nested ones may not; numbers compare by value across int, long and double;
``$$`` operators assert what equality cannot."""
import datetime
import numbers

from bson import Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from bson import json_util
from bson.dbref import DBRef



class MatchError(AssertionError):
    pass


MISSING = object()
# $$type names (the $type query operator's), as Python checks.
TYPE_CHECKS = {
    "double": lambda v: isinstance(v, float), "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list),
    "binData": lambda v: isinstance(v, (bytes, Binary)),
    "objectId": lambda v: isinstance(v, ObjectId), "bool": lambda v: isinstance(v, bool),
    "date": lambda v: isinstance(v, datetime.datetime), "null": lambda v: v is None,
    "regex": lambda v: isinstance(v, Regex), "javascript": lambda v: isinstance(v, Code),
    "int": lambda v: isinstance(v, int) and not isinstance(v, (bool, Int64)) and -2 ** 31 <= v < 2 ** 31,
    "long": lambda v: isinstance(v, Int64) or (isinstance(v, int) and not isinstance(v, bool)
                                               and not -2 ** 31 <= v < 2 ** 31),
    "timestamp": lambda v: isinstance(v, Timestamp), "decimal": lambda v: isinstance(v, Decimal128),
    "minKey": lambda v: isinstance(v, MinKey), "maxKey": lambda v: isinstance(v, MaxKey),
    "dbPointer": lambda v: isinstance(v, DBRef),
    # The "number" alias of $type: int, long, double and decimal.
    "number": lambda v: (isinstance(v, (numbers.Number, Decimal128))
                         and not isinstance(v, bool)),
}


def plain(value):
    """``value`` as plain BSON types (dicts, lists), its numeric types kept (canonical
    Extended JSON: an Int64 stays a long, as ``$$type: long`` checks; relaxed JSON made it an
    int)."""
    options = json_util.CANONICAL_JSON_OPTIONS
    return json_util.loads(json_util.dumps(value, json_options=options), json_options=options)


def _is_operator(value):
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)).startswith("$$")


def _number(value):
    return isinstance(value, (numbers.Number, Decimal128)) and not isinstance(value, bool)


def match(expected, actual, entities=None, root=True, path="$"):
    """Raise MatchError naming the path where ``actual`` departs from ``expected``."""
    if _is_operator(expected):
        _operator(expected, actual, entities, root, path)
        return
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            raise MatchError(f"{path}: expected a document, got {actual!r}")
        for key, value in expected.items():
            if _is_operator(value) and next(iter(value)) in ("$$exists", "$$unsetOrMatches"):
                _operator(value, actual.get(key, MISSING), entities, False, f"{path}.{key}")
                continue
            if key not in actual:
                raise MatchError(f"{path}.{key}: missing (expected {value!r})")
            match(value, actual[key], entities, False, f"{path}.{key}")
        if not root:
            extra = sorted(set(actual) - set(expected))
            if extra:
                raise MatchError(f"{path}: unexpected fields {extra}")
        return
    if isinstance(expected, list):
        if not isinstance(actual, list):
            raise MatchError(f"{path}: expected an array, got {actual!r}")
        if len(actual) != len(expected):
            raise MatchError(f"{path}: expected {len(expected)} elements, got {len(actual)}: "
                             f"{actual!r}")
        for i, (e, a) in enumerate(zip(expected, actual)):
            match(e, a, entities, False, f"{path}[{i}]")
        return
    _scalar(expected, actual, path)


def _scalar(expected, actual, path):
    if _number(expected) and _number(actual) and not isinstance(expected, Decimal128):
        if float(expected) != float(actual):
            raise MatchError(f"{path}: expected {expected!r}, got {actual!r}")
        return
    if type(expected) is not type(actual) and not (
            isinstance(expected, str) and isinstance(actual, str)) and not (
            isinstance(expected, (bytes, Binary)) and isinstance(actual, (bytes, Binary))):
        raise MatchError(f"{path}: expected {expected!r} ({type(expected).__name__}), got "
                         f"{actual!r} ({type(actual).__name__})")
    if isinstance(expected, datetime.datetime):
        expected, actual = (d.replace(tzinfo=None) for d in (expected, actual))
    if expected != actual:
        raise MatchError(f"{path}: expected {expected!r}, got {actual!r}")


def _operator(expected, actual, entities, root, path):
    (op, arg), = expected.items()
    if op == "$$exists":
        if (actual is not MISSING) != bool(arg):
            raise MatchError(f"{path}: expected {'present' if arg else 'absent'}, got "
                             f"{'absent' if actual is MISSING else repr(actual)}")
    elif op == "$$unsetOrMatches":
        if actual is not MISSING:
            match(arg, actual, entities, root, path)
    elif op == "$$type":
        names = arg if isinstance(arg, list) else [arg]
        if actual is MISSING or not any(TYPE_CHECKS[n](actual) for n in names):
            raise MatchError(f"{path}: expected type {arg}, got {actual!r}")
    elif op == "$$matchesEntity":
        match(entities.get(arg), actual, entities, root, path)
    elif op == "$$matchesHexBytes":
        if bytes(actual) != bytes.fromhex(arg):
            raise MatchError(f"{path}: expected bytes {arg}, got {actual!r}")
    elif op == "$$sessionLsid":
        lsid = entities.lsids[arg]
        if actual != lsid:
            raise MatchError(f"{path}: expected the lsid of {arg}, got {actual!r}")
    elif op == "$$lte":
        if actual is MISSING or not _number(actual) or float(actual) > float(arg):
            raise MatchError(f"{path}: expected <= {arg}, got {actual!r}")
    elif op == "$$matchAsDocument":
        if not isinstance(actual, str):
            raise MatchError(f"{path}: expected Extended JSON text, got {actual!r}")
        match(arg, json_util.loads(actual), entities, False, path)
    elif op == "$$matchAsRoot":
        match(arg, actual, entities, True, path)
    else:
        raise MatchError(f"{path}: unknown special operator {op}")


__all__ = ["MISSING", "MatchError", "match"]
