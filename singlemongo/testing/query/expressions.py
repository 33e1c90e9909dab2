"""Aggregation expressions a MongoDB 7.0 server has and the engine lacks: ``$setField``,
``$unsetField`` (fields whose names hold dots or start with ``$``), ``$rand``, ``$cmp`` and
``$$NOW``; ``$getField`` with an ``input`` expression (the engine took an expression object
literally); and comparisons with a missing value, which sorts below null."""
import datetime
import operator
import random
import threading

from mongomock_ng import aggregate as mm_aggregate
from mongomock_ng import filtering
from mongomock_ng.helpers import NOTHING

from singlemongo.testing.query.codes import CommandError

ADDED = ("$setField", "$unsetField", "$rand")
_ENGINE_FIELD_OPERATOR = mm_aggregate._Parser._handle_field_operator
_ENGINE_BASIC_EXPRESSION = mm_aggregate._Parser._parse_basic_expression
REMOVE = "$$REMOVE"


# MongoDB's codes when 'field' is no string and when 'input' is no object.
_CODES = {"$getField": (3041704, 3041705), "$setField": (4161106, 4161105),
          "$unsetField": (4161106, 4161105)}


def _field_and_input(parser, operator, spec):
    """``field`` evaluated (a string) and ``input`` evaluated (an object; None when it is
    missing or null)."""
    field_code, input_code = _CODES[operator]
    field = parser.parse(spec["field"])
    if not isinstance(field, str):
        raise CommandError(field_code, f"{operator} requires 'field' to evaluate to a string, "
                                       f"not {field!r}")
    target = parser.parse(spec["input"])
    if target is None or target is mm_aggregate.NOTHING:
        return field, None
    if not isinstance(target, dict):
        raise CommandError(input_code, f"{operator} requires 'input' to evaluate to an object")
    return field, target


def _set_field(parser, operator, spec):
    if not isinstance(spec, dict) or {"field", "input"} - set(spec) or \
            (operator == "$setField" and "value" not in spec):
        needed = "field, input and value" if operator == "$setField" else "field and input"
        raise CommandError(4161102, f"{operator} requires {needed}, got {spec!r}")
    field, target = _field_and_input(parser, operator, spec)
    if target is None:
        return None
    out = dict(target)
    value = REMOVE if operator == "$unsetField" else spec["value"]
    if value == REMOVE:
        out.pop(field, None)
    else:
        out[field] = parser.parse(value)
    return out


def _get_field(parser, spec):
    """$getField's full form: ``input`` is any expression (missing or null gives null)."""
    if set(spec) - {"field", "input"} or "field" not in spec:
        raise CommandError(3041701, f"$getField takes field and input, got {spec!r}")
    field, target = _field_and_input(parser, "$getField", spec)
    return None if target is None else target.get(field)


def handle_field_operator(self, operator, values):
    if operator == "$getField" and isinstance(values, dict) and "input" in values:
        return _get_field(self, values)
    if operator in ("$setField", "$unsetField"):
        return _set_field(self, operator, values)
    if operator == "$rand":
        if values != {}:
            raise CommandError(10065, f"$rand takes an empty object, not {values!r}")
        return random.random()
    return _ENGINE_FIELD_OPERATOR(self, operator, values)


# ----- $$NOW --------------------------------------------------------------------------------

# The running command's $$NOW, per thread: two simulated deployments in one process run
# their commands at once, each on its own server thread.
_command = threading.local()


def command_started():
    """A new command: its ``$$NOW`` is taken when it first reads it."""
    _command.now = None


def now():
    """``$$NOW``: one time for the whole command, in milliseconds as a BSON date holds it."""
    if getattr(_command, "now", None) is None:
        moment = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
        _command.now = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
    return _command.now


def parse_basic_expression(self, expression):
    if expression == "$$NOW":
        return now()
    return _ENGINE_BASIC_EXPRESSION(self, expression)


# ----- comparisons ----------------------------------------------------------------------------

_TESTS = {"$lt": operator.lt, "$lte": operator.le, "$gt": operator.gt, "$gte": operator.ge}


def bson_order(a, b, lowest=NOTHING):
    """-1, 0 or 1 by the BSON comparison order; ``lowest`` (a missing value, whose canonical
    type is below null's) sorts below everything and equals only itself."""
    if a is lowest or b is lowest:
        return (a is not lowest) - (b is not lowest)
    try:
        if filtering.bson_compare(operator.lt, a, b):
            return -1
        return 1 if filtering.bson_compare(operator.gt, a, b) else 0
    except (TypeError, NotImplementedError):  # what the engine cannot order (regexes,
        return _python_order(a, b)               # timestamps): as Python orders them


def _python_order(a, b):
    if a == b:
        return 0
    try:
        return -1 if a < b else 1
    except TypeError:
        return -1 if repr(a) < repr(b) else 1


def handle_comparison_operator(self, name, values):
    if not isinstance(values, (list, tuple)) or len(values) != 2:
        count = len(values) if isinstance(values, (list, tuple)) else 1
        raise CommandError(16020, f"Expression {name} takes exactly 2 arguments. {count} "
                                  f"were passed in.")
    a, b = self.parse(values[0]), self.parse(values[1])
    if name in ("$eq", "$ne"):  # the engine's equality, but missing is not null
        equal = a == b if a is not NOTHING and b is not NOTHING else a is b
        return equal if name == "$eq" else not equal
    order = bson_order(a, b)
    return order if name == "$cmp" else _TESTS[name](order, 0)


def apply():
    mm_aggregate._Parser._parse_basic_expression = parse_basic_expression
    mm_aggregate._Parser._handle_comparison_operator = handle_comparison_operator
    for name in ADDED:
        if name not in mm_aggregate.field_operators:
            mm_aggregate.field_operators.append(name)
    mm_aggregate._Parser._handle_field_operator = handle_field_operator
