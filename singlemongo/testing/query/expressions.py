"""Aggregation expressions a MongoDB 7.0 server has and the engine lacks: ``$setField``,
``$unsetField`` (fields whose names hold dots or start with ``$``) and ``$rand``."""
import random

from mongomock_ng import aggregate as mm_aggregate

from .codes import CommandError

ADDED = ("$setField", "$unsetField", "$rand")
_ENGINE_FIELD_OPERATOR = mm_aggregate._Parser._handle_field_operator
REMOVE = "$$REMOVE"


def _set_field(parser, operator, spec):
    if not isinstance(spec, dict) or {"field", "input"} - set(spec) or \
            (operator == "$setField" and "value" not in spec):
        needed = "field, input and value" if operator == "$setField" else "field and input"
        raise CommandError(4161102, f"{operator} requires {needed}, got {spec!r}")
    field = parser.parse(spec["field"])
    if not isinstance(field, str):
        raise CommandError(4161106, f"{operator} requires 'field' to evaluate to a string, "
                                    f"not {field!r}")
    target = parser.parse(spec["input"])
    if target is None or target is mm_aggregate.NOTHING:
        return None
    if not isinstance(target, dict):
        raise CommandError(4161105, f"{operator} requires 'input' to evaluate to an object")
    out = dict(target)
    value = REMOVE if operator == "$unsetField" else spec["value"]
    if value == REMOVE:
        out.pop(field, None)
    else:
        out[field] = parser.parse(value)
    return out


def handle_field_operator(self, operator, values):
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
