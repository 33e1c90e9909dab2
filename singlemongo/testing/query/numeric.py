"""MongoDB's integer arithmetic for the query engine: a long (Int64) operand makes a long
result, and an int32 result that overflows becomes a long. The engine computes with Python
ints, which BSON encodes as int32 when they fit, so ``$inc`` of a long, ``$mul`` by one and
``$sum`` over longs came back as int32 (PyMongo's custom-type tests decode longs with a codec
of their own and saw another type)."""
from bson import Int64
from mongomock_ng import aggregate as mm_aggregate
from mongomock_ng import collection as mm_collection

INT32 = range(-2**31, 2**31)


def widened(result, *operands):
    """``result`` as the server types it from ``operands``."""
    if isinstance(result, int) and not isinstance(result, (bool, Int64)):
        if any(isinstance(o, Int64) for o in operands) or result not in INT32:
            return Int64(result)
    return result


def _updater(original):
    def update(doc, field_name, value, codec_options=None):
        key = int(field_name) if isinstance(doc, list) else field_name
        before = doc.get(key) if isinstance(doc, dict) else (
            doc[key] if key < len(doc) else None)
        original(doc, field_name, value, codec_options)
        doc[key] = widened(doc[key], before, value)
    return update


def _accumulator(original):
    def accumulate(values):
        flat = [v for value in values for v in (value if isinstance(value, list) else [value])]
        return widened(original(values), *flat)
    return accumulate


def apply():
    """Install the typing on $inc, $mul and $sum (idempotent: called once by conformance)."""
    for name in ("$inc", "$mul"):
        mm_collection._updaters[name] = _updater(mm_collection._updaters[name])
    groups = mm_aggregate._GROUPING_OPERATOR_MAP
    groups["$sum"] = _accumulator(groups["$sum"])
