"""Where an update operator may go in a document, as MongoDB decides before it changes
anything ("Update Operators"; the server's PathNotViable, 28).

An operator that creates what is missing ($set, $inc, $push, ...) cannot go through a value
that is neither an embedded document nor an array (null, a string, a number), nor name a
field of an array: MongoDB refuses with 28, "Cannot create field 'f' in element {d: null}".
An operator that only removes or shrinks ($unset, $pop, $pull, $pullAll) finds nothing
there and does nothing: it never creates the fields on its path either (the engine made an
empty document of each). $setOnInsert does nothing to a document that is not inserted. The query engine behind the simulator failed on both (a TypeError,
answered as InternalError). Found by running the simulator beside FerretDB (tests/ferretdb).
"""
from mongomock_ng.helpers import NOTHING

from singlemongo.testing.query.codes import WriteFailure

REMOVING = frozenset({"$unset", "$pop", "$pull", "$pullAll"})
UNCHECKED = frozenset({"$setOnInsert"})  # applied to a new document only, where all is free


def _blocked(doc, path):
    """(field, parent name, parent value) where ``path`` stops being creatable in ``doc``,
    or None when every step is a document, an array index, or not there yet."""
    current, name = doc, None
    for part in path.split("."):
        if isinstance(current, dict):
            if part not in current:
                return None
            current, name = current[part], part
        elif isinstance(current, list):
            if not part.isdigit():
                return part, name, current
            if int(part) >= len(current):
                return None
            current, name = current[int(part)], part
        else:
            return part, name, current
    return None


def value_at(doc, path):
    """The value at a dotted path, or NOTHING (a missing field)."""
    for part in path.split("."):
        if isinstance(doc, dict) and part in doc:
            doc = doc[part]
        elif isinstance(doc, list) and part.isdigit() and int(part) < len(doc):
            doc = doc[int(part)]
        else:
            return NOTHING
    return doc


def _shown(value):
    if value is None:
        return "null"
    return repr(value)


def viable(doc, update):
    """``update`` with what removing operators cannot reach left out; WriteFailure 28 for a
    creating operator whose path is blocked."""
    if not isinstance(update, dict) or not any(k.startswith("$") for k in update):
        return update  # a pipeline or a replacement document
    out = {}
    for op, fields in update.items():
        if not isinstance(fields, dict) or op in UNCHECKED:
            out[op] = fields
            continue
        kept = {}
        for path, value in fields.items():
            blocked = None if "$" in path else _blocked(doc, path)
            if op in REMOVING and "$" not in path:
                if value_at(doc, path) is not NOTHING:
                    kept[path] = value
            elif blocked is None:
                kept[path] = value
            else:
                field, parent, found = blocked
                raise WriteFailure(28, f"Cannot create field '{field}' in element "
                                       f"{{{parent}: {_shown(found)}}}")
            moved = _blocked(doc, value) if op == "$rename" and isinstance(value, str) else None
            if moved is not None:
                raise WriteFailure(28, f"Cannot create field '{moved[0]}' in element "
                                       f"{{{moved[1]}: {_shown(moved[2])}}}")
        if kept or op not in REMOVING:
            out[op] = kept
    return out or {"$set": {}}  # an update that reaches nothing changes nothing
