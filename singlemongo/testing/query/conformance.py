"""Where mongomock-ng 7.11 (the pinned query engine) departs from MongoDB, put right (and one
place where it was quadratic).

Each fix names the MongoDB rule it restores and has a case in ``tests/query_battery.py`` or
``tests/test_simulator_*.py``. They touch the engine's operator tables, which is why the
engine's version is pinned exactly in the ``testing`` extra: a new version is taken on
purpose, after the battery passes on it. Everything the engine gets right is left to it.
"""
import datetime
import math
import numbers
import operator
import re
from collections.abc import Mapping

from bson import Code, DatetimeMS, Decimal128, MaxKey, MinKey, ObjectId, Regex, Timestamp
from mongomock_ng import aggregate as mm_aggregate
from mongomock_ng import collection as mm_collection
from mongomock_ng import filtering
from mongomock_ng import store as mm_store
from mongomock_ng.helpers import NOTHING

from singlemongo.testing.query import arrays, collation, expressions, geo, id_lookup, numeric, uniques
from singlemongo.testing.query.codes import WriteFailure

# $type: "Available Types" (aliases and numbers; "number" matches every numeric type).
_TYPES = {
    "double": (1, lambda v: isinstance(v, float)),
    "string": (2, lambda v: isinstance(v, str)),
    "object": (3, lambda v: isinstance(v, Mapping)),
    "array": (4, lambda v: isinstance(v, list)),
    "binData": (5, lambda v: isinstance(v, bytes)),
    "objectId": (7, lambda v: isinstance(v, ObjectId)),
    "bool": (8, lambda v: isinstance(v, bool)),
    "date": (9, lambda v: isinstance(v, (datetime.datetime, DatetimeMS))),
    "null": (10, lambda v: v is None),
    "regex": (11, lambda v: isinstance(v, (Regex, re.Pattern))),
    "int": (16, lambda v: _is_int(v) and -2 ** 31 <= v < 2 ** 31 and type(v).__name__ != "Int64"),
    "timestamp": (17, lambda v: isinstance(v, Timestamp)),
    "long": (18, lambda v: _is_int(v) and (type(v).__name__ == "Int64" or not -2 ** 31 <= v < 2 ** 31)),
    "decimal": (19, lambda v: isinstance(v, Decimal128)),
    "minKey": (-1, lambda v: isinstance(v, MinKey)),
    "maxKey": (127, lambda v: isinstance(v, MaxKey)),
}
_TYPES_BY_NUMBER = {number: test for number, test in _TYPES.values()}


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v):
    return isinstance(v, (numbers.Number, Decimal128)) and not isinstance(v, bool)


def _type_test(alias):
    if alias == "number":
        return _is_number
    if isinstance(alias, numbers.Number) and not isinstance(alias, bool) and alias in _TYPES_BY_NUMBER:
        return _TYPES_BY_NUMBER[alias]
    if isinstance(alias, str) and alias in _TYPES:
        return _TYPES[alias][1]
    raise WriteFailure(2, f"Unknown type name alias: {alias}")


def type_op(value, aliases):
    """$type: any listed type; an array matches if it or one of its elements has the type."""
    tests = [_type_test(a) for a in (aliases if isinstance(aliases, list) else [aliases])]
    if value is NOTHING:
        return False
    candidates = [value] + (list(value) if isinstance(value, list) else [])
    return any(test(v) for test in tests for v in candidates)


def type_name(value):
    """The aggregation $type of a value: its type's alias ("missing" for an absent field)."""
    if value is NOTHING:
        return "missing"
    if isinstance(value, Code):  # a str subclass: before "string"
        return "javascript" if value.scope is None else "javascriptWithScope"
    for alias, (_, test) in _TYPES.items():
        if test(value):
            return alias
    raise WriteFailure(238, f"$type of a {type(value).__name__} is not simulated")


_ENGINE_TYPE_OPERATOR = mm_aggregate._Parser._handle_type_operator


def handle_type_operator(parser, operator, values):
    """$type for every BSON type and $isNumber for Decimal128 (the engine knew six types)."""
    if operator not in ("$type", "$isNumber"):
        return _ENGINE_TYPE_OPERATOR(parser, operator, values)
    if isinstance(values, list):  # the argument list form: exactly one argument
        if len(values) != 1:
            raise WriteFailure(16020, f"Expression {operator} takes exactly 1 arguments. "
                                      f"{len(values)} were passed in.")
        values = values[0]
    value = parser.parse(values)
    return type_name(value) if operator == "$type" else _is_number(value)


def mod_op(value, arg):
    """$mod: [divisor, remainder]; arrays match on any element; non-numbers never match."""
    if not isinstance(arg, list) or len(arg) != 2:
        raise WriteFailure(2, "malformed mod, needs to be an array")
    divisor, remainder = arg
    if not _is_number(divisor) or divisor == 0:
        raise WriteFailure(2, "divisor cannot be 0")
    values = value if isinstance(value, list) else [value]
    # "Negative Dividend": the remainder keeps the dividend's sign (truncated division, as
    # C's %), where Python's % floors.
    return any(_is_number(v) and int(math.fmod(int(v), int(divisor))) == int(remainder)
               for v in values)


def _null_inclusive(engine_op):
    """$lte and $gte null match what {field: null} matches: null, a missing field, an array
    holding null ("Query for Null or Missing Fields"); the engine matched nothing."""
    def op(value, bound):
        if bound is None:
            return value is None or value is NOTHING or (
                isinstance(value, list) and any(v is None for v in value))
        return engine_op(value, bound)
    return op


def size_op(value, size):
    """$size: an array of exactly that many elements; a string, a document or a scalar never
    matches (the engine counted a document's fields and took any scalar for size 1)."""
    return isinstance(value, list) and len(value) == size


def operator_eq(doc_val, search_val):
    """Equality as BSON: true is not 1, and embedded documents compare field by field, in order."""
    if doc_val is NOTHING and search_val is None:
        return True
    if isinstance(doc_val, bool) != isinstance(search_val, bool):
        return False
    if isinstance(doc_val, Mapping) and isinstance(search_val, Mapping):
        return len(doc_val) == len(search_val) and all(
            k1 == k2 and operator_eq(v1, v2)
            for (k1, v1), (k2, v2) in zip(doc_val.items(), search_val.items()))
    if isinstance(doc_val, list) and isinstance(search_val, list):
        return len(doc_val) == len(search_val) and all(
            operator_eq(a, b) for a, b in zip(doc_val, search_val))
    return _ORIGINAL_EQ(*collation.compared(doc_val, search_val))


def mul_updater(doc, field_name, value, codec_options=None):
    """$mul: a missing field becomes 0; a non-number is refused (14 TypeMismatch)."""
    if isinstance(doc, list):
        field_name = int(field_name)
        current = doc[field_name] if field_name < len(doc) else NOTHING
        doc.extend([None] * (field_name + 1 - len(doc)))  # an index past the end pads with null
    else:
        current = doc.get(field_name, NOTHING)
    if not _is_number(value):
        raise WriteFailure(14, f"Cannot multiply with non-numeric argument: {{{field_name}: {value!r}}}")
    if current is NOTHING:
        doc[field_name] = type(value)(0)
    elif not _is_number(current):
        raise WriteFailure(14, f"Cannot apply $mul to a value of non-numeric type. "
                               f"{{_id: ?}} has the field '{field_name}' of non-numeric type "
                               f"{type(current).__name__}")
    else:
        doc[field_name] = current * value


def _bounded(keep_if):
    """$min and $max compare in BSON's order across types ("Comparison/Sort Order": a
    number is below a string, null below both); the engine compared Python values and
    failed on mixed types. ``keep_if(order)`` says when the stored value stays."""
    def updater(doc, field_name, value, codec_options=None):
        if isinstance(doc, list):  # an index past the end pads the array with null
            index = int(field_name)
            current = doc[index] if index < len(doc) else NOTHING
            doc.extend([None] * (index + 1 - len(doc)))
            field_name = index
        else:
            current = doc.get(field_name, NOTHING)
        if current is NOTHING or not keep_if(_order(current, value)):
            doc[field_name] = value
    return updater


def _order(a, b):
    """-1, 0 or 1: ``a`` against ``b`` in BSON's comparison order."""
    if filtering.bson_compare(operator.lt, a, b):
        return -1
    return 1 if filtering.bson_compare(operator.gt, a, b) else 0


def pop_updater(doc, field_name, value, codec_options=None):
    """$pop: a missing field is left as it is (the engine raised KeyError)."""
    if isinstance(doc, dict) and field_name not in doc and value in (1, -1):
        return
    _ORIGINAL_POP(doc, field_name, value, codec_options)


_ORIGINAL_POP = mm_collection._updaters["$pop"]
_ORIGINAL_EQ = filtering.operator_eq
_ENGINE_COMPARE = filtering.bson_compare
_ENGINE_COMPARE_TYPE = filtering._get_compare_type
_EPOCH = datetime.datetime(1970, 1, 1)


TIMESTAMP_ORDER = 47  # after dates (45), before regular expressions (50)


def compare_type(value):
    """A date outside Python's range (DatetimeMS) is a date, and a Timestamp sorts after
    dates ("Comparison/Sort Order"); the engine knew neither."""
    if isinstance(value, Timestamp):
        return TIMESTAMP_ORDER
    return _ENGINE_COMPARE_TYPE(_EPOCH if isinstance(value, DatetimeMS) else value)


def _millis(date):
    return int(date) if isinstance(date, DatetimeMS) else int(DatetimeMS(date))


def bson_compare(op, a, b, can_compare_types=True):
    """Dates compare by their milliseconds since the epoch, in Python's range or not;
    strings by the collation of the command running, if any."""
    if isinstance(a, str) and isinstance(b, str):
        return op(*collation.compared(a, b))
    if isinstance(a, DatetimeMS) or isinstance(b, DatetimeMS):
        dates = (datetime.datetime, DatetimeMS)
        if isinstance(a, dates) and isinstance(b, dates):
            return op(_millis(a), _millis(b))
    return _ENGINE_COMPARE(op, a, b, can_compare_types)


_ENGINE_SUBLIST = filtering._iter_key_candidates_sublist


_ENGINE_CANDIDATES = filtering.iter_key_candidates


def iter_key_candidates(key, doc):
    """A path that leads nowhere (through a string, a number, null or an empty array) reads a
    missing value ("Query for Null or Missing Fields"): null, $not, $ne and $exists: false
    match it. The engine found no value at all, so they did not."""
    return _ENGINE_CANDIDATES(key, doc) or [NOTHING]


def iter_key_candidates_sublist(key, doc):
    """An array index past the end (``"e.2"`` of a one-element array) reads a missing value,
    as a field that is not there does; the engine found no value at all, so ``$not`` and
    ``$exists: false`` could not match it."""
    found = _ENGINE_SUBLIST(key, doc)
    if not found and key.partition(".")[0].isdigit():
        return [NOTHING]
    return found


class ValidationFailure(WriteFailure, mm_collection.WriteError):
    """A validation failure the engine recognises as its own WriteError, so that it puts the
    document back as it was before the update (it kept the refused update otherwise)."""
    code = None  # a plain attribute here: the engine's error makes it a read-only property


def validate_against_validator(document, options):
    """Document validation fails with 121 and the errInfo a 5.0+ server gives
    (failingDocumentId, details), as a write error of the statement."""
    validator = options.get("validator")
    if not validator or options.get("validationLevel", "strict") == "off" or \
            options.get("validationAction", "error") == "warn":
        return
    if not filtering.filter_applies(validator, document):
        raise ValidationFailure(121, "Document failed validation", errInfo={
            "failingDocumentId": document.get("_id"),
            "details": {"operatorName": "$and", "specifiedAs": validator,
                        "reason": "the document does not match the validator"}})


def _nested_computed(spec):
    """$project: a computed field on a dotted path ({"ns.viewOn": "db.coll"}) sets a field of
    an embedded document, as {"ns": {"viewOn": ...}} does (the engine made a field named
    "ns.viewOn"). With one there, every dotted path is nested, inclusions too."""
    def computed(value):
        return value not in (0, 1, True, False) and not (
            isinstance(value, dict) and all(v in (0, 1) for v in value.values()))
    if not any(computed(v) and isinstance(k, str) and "." in k and not k.startswith("$")
               for k, v in spec.items()):
        return spec
    out = {}
    for field, value in spec.items():
        if isinstance(field, str) and "." in field and not field.startswith("$"):
            head, rest = field.split(".", 1)
            inner = out.get(head) if isinstance(out.get(head), dict) else {}
            out[head] = {**inner, **_nested_computed({rest: value})}
        else:
            out[field] = value
    return out


def _project_stage(engine_stage):
    def project(in_collection, database, options, user_vars):
        nested = _nested_computed(options) if isinstance(options, dict) else options
        return engine_stage(in_collection, database, nested, user_vars)
    return project


def _group_stage(engine_stage):
    """$group outputs a document per group of its input: none for no input, even with a
    constant _id (the engine made one group of nothing). Each is ``_id`` then the
    accumulators in the stage's order, as a server writes it (the engine put ``_id`` last)."""
    def group(in_collection, database, options, user_vars):
        in_collection = list(in_collection)
        if not in_collection:
            return []
        order = ["_id", *(k for k in options if k != "_id")] if isinstance(options, dict) else []
        return [{**{k: doc[k] for k in order if k in doc}, **doc}
                for doc in engine_stage(in_collection, database, options, user_vars)]
    return group


def _merge_stage(engine_stage):
    """$merge on _id (its default): a result without an _id gets a new ObjectId, as the server
    generates one (the engine refused the stage)."""
    def merge(in_collection, database, options, user_vars):
        on = options.get("on", "_id") if isinstance(options, dict) else "_id"
        if on in ("_id", ["_id"]):
            in_collection = [d if "_id" in d else {"_id": ObjectId(), **d} for d in in_collection]
        return engine_stage(in_collection, database, options, user_vars)
    return merge


def cursor_next(self):
    """The next document, found by its index: the engine re-sliced all its results for each one
    (quadratic; a find of 100,000 took minutes, so a bulk benchmark timed the simulator)."""
    index = self._skip + self._emitted
    results = self._compute_results()
    if index >= len(results) or (self._limit and self._emitted >= abs(self._limit)):
        raise StopIteration
    self._emitted += 1
    document_class = self.collection.codec_options.document_class
    return mm_collection._cast_document_class(results[index], document_class)


def _dropping_options(drop):
    """A dropped collection loses its options (its validator among them), as on a server:
    the engine kept them, so a validator outlived a drop and refused the next collection of
    that name's documents."""
    def drop_all(self):
        drop(self)
        self.options = {}
    return drop_all


def _created_by_writes(setitem):
    """A collection a write created exists until it is dropped, emptied or not, as on a
    server (the engine forgot a collection whose last document was deleted)."""
    def store(self, key, value):
        setitem(self, key, value)
        self._is_force_created = True
    return store


def apply():
    """Install the fixes (idempotent)."""
    if getattr(filtering, "_singlemongo_fixed", False):
        return
    filtering.operator_eq = operator_eq
    filtering.bson_compare = bson_compare
    filtering._get_compare_type = compare_type
    filtering._iter_key_candidates_sublist = iter_key_candidates_sublist
    filtering.iter_key_candidates = iter_key_candidates
    arrays.apply()
    filtering._filterer_inst = filtering._Filterer()  # rebuild its table with the new equality
    table = filtering._filterer_inst._operator_map
    table["$type"] = type_op
    table["$mod"] = mod_op
    table["$size"] = size_op
    table["$lte"] = _null_inclusive(table["$lte"])
    table["$gte"] = _null_inclusive(table["$gte"])
    geo.apply(table)
    handlers = mm_aggregate._PIPELINE_HANDLERS
    handlers["$project"] = _project_stage(handlers["$project"])
    handlers["$group"] = _group_stage(handlers["$group"])
    handlers["$merge"] = _merge_stage(handlers["$merge"])
    expressions.apply()
    mm_aggregate._Parser._handle_type_operator = handle_type_operator
    mm_collection._updaters["$mul"] = mul_updater
    mm_collection._updaters["$pop"] = pop_updater
    mm_collection._updaters["$min"] = _bounded(lambda order: order <= 0)
    mm_collection._updaters["$max"] = _bounded(lambda order: order >= 0)
    numeric.apply()
    mm_collection.validate_against_validator = validate_against_validator
    mm_collection.Cursor.__next__ = mm_collection.Cursor.next = cursor_next
    mm_store.CollectionStore.drop = _dropping_options(mm_store.CollectionStore.drop)
    mm_store.CollectionStore.__setitem__ = _created_by_writes(
        mm_store.CollectionStore.__setitem__)
    uniques.apply()
    id_lookup.apply()
    filtering._singlemongo_fixed = True
