"""An update event's ``updateDescription``, computed from the document before and after the
write (change streams spec, "UpdateDescription", as a 6.1+ server reports it).

Embedded documents present on both sides are described field by field, arrays element by
element (``"array.1"``); an array that lost its tail is in ``truncatedArrays``. A path whose
dotted form is ambiguous (a field name that is a number or holds a dot) is spelt out in
``disambiguatedPaths``, array indices as integers, when the stream shows expanded events.
"""


def describe(old, new, expanded=False):
    """The updateDescription of a change from ``old`` to ``new`` (two documents)."""
    out = {"updatedFields": {}, "removedFields": [], "truncatedArrays": []}
    paths = []
    _document(old, new, (), out, paths)
    if expanded:
        out["disambiguatedPaths"] = {
            _dotted(path): list(path) for path in paths if _ambiguous(path)}
    return out


def _dotted(path):
    return ".".join(str(part) for part in path)


def _ambiguous(path):
    return any(isinstance(part, str) and (part.isdigit() or "." in part) for part in path)


def _document(old, new, prefix, out, paths):
    for field, value in new.items():
        path = prefix + (field,)
        if field not in old:
            _updated(path, value, out, paths)
        elif old[field] != value or type(old[field]) is not type(value):
            _changed(old[field], value, path, out, paths)
    for field in old:
        if field not in new:
            path = prefix + (field,)
            out["removedFields"].append(_dotted(path))
            paths.append(path)


def _changed(old, new, path, out, paths):
    if isinstance(old, dict) and isinstance(new, dict):
        _document(old, new, path, out, paths)
    elif isinstance(old, list) and isinstance(new, list):
        _array(old, new, path, out, paths)
    else:
        _updated(path, new, out, paths)


def _array(old, new, path, out, paths):
    if len(new) < len(old):
        out["truncatedArrays"].append({"field": _dotted(path), "newSize": len(new)})
        paths.append(path)
    for i, value in enumerate(new):
        if i >= len(old):
            _updated(path + (i,), value, out, paths)
        elif old[i] != value or type(old[i]) is not type(value):
            _changed(old[i], value, path + (i,), out, paths)


def _updated(path, value, out, paths):
    out["updatedFields"][_dotted(path)] = value
    paths.append(path)
