"""Aggregation expressions a MongoDB 7.0 server has and the engine lacks: ``$setField``,
``$unsetField`` (fields whose names hold dots or start with ``$``) and ``$rand``; and
``$getField`` with an ``input`` expression (the engine took an expression object literally)."""
import random

from mongomock_ng import aggregate as mm_aggregate

from .codes import CommandError

ADDED = ("$setField", "$unsetField", "$rand")
_ENGINE_FIELD_OPERATOR = mm_aggregate._Parser._handle_field_operator
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


def apply():
    for name in ADDED:
        if name not in mm_aggregate.field_operators:
            mm_aggregate.field_operators.append(name)
    mm_aggregate._Parser._handle_field_operator = handle_field_operator
