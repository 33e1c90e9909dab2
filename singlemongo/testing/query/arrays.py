"""Query conditions over arrays, as MongoDB applies them: the operators on one field apply
independently, so ``{"instock.qty": {"$gt": 10, "$lte": 20}}`` matches a document where one
element of ``instock`` is over 10 and another (or the same) is at most 20 (MongoDB's "Query
an Array of Embedded Documents"). The engine required one element to satisfy them all, as
``$elemMatch`` does."""
from mongomock_ng import filtering

KEEP_TOGETHER = frozenset({"$regex", "$options"})  # one condition in two fields


def split(search_filter):
    """The filter with each dotted field's operators as separate conditions of an $and."""
    if not isinstance(search_filter, dict) or not any(
            "." in key and _several(value) for key, value in search_filter.items()):
        return search_filter
    out, conditions = {}, []
    for key, value in search_filter.items():
        if "." in key and not key.startswith("$") and _several(value):
            together = {op: v for op, v in value.items() if op in KEEP_TOGETHER}
            conditions.extend({key: {op: v}} for op, v in value.items() if op not in together)
            if together:
                conditions.append({key: together})
        else:
            out[key] = value
    out["$and"] = [*out.get("$and", ()), *conditions]
    return out


def _several(value):
    """Several conditions: ``$regex`` with its ``$options`` is one (splitting it into an $and
    of itself recursed without end)."""
    return isinstance(value, dict) and all(isinstance(k, str) and k.startswith("$")
                                           for k in value) and \
        len(set(value) - KEEP_TOGETHER) + bool(set(value) & KEEP_TOGETHER) > 1


def apply():
    """Wrap the engine's filter (idempotent: called once by conformance)."""
    original = filtering._Filterer.apply

    def apply_split(self, search_filter, document, user_vars=None):
        return original(self, split(search_filter), document, user_vars)
    filtering._Filterer.apply = apply_split
