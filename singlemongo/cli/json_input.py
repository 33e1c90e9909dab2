"""Reading what the user typed: Extended JSON of the shape a flag needs, at most 100 levels
deep (MongoDB's nesting limit), UTF-8 only. Every problem is a UsageError naming the flag and
what it got, never a traceback from the JSON or BSON libraries."""
from bson import json_util

MAX_DEPTH = 100  # MongoDB refuses documents nested deeper
SHAPES = {dict: "an object", list: "an array"}


class UsageError(Exception):
    """The user's input cannot be used; the message says which input and why."""


def _depth(text):
    """The deepest nesting of [ and { outside strings (a scan, so no recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def summary(exc):
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) <= 160 else text[:157] + "..."


def loads(text, what, shape=dict):
    """The value of ``text``; UsageError if it is not Extended JSON of ``shape`` (None: any)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{what} is not valid UTF-8") from None
    if _depth(text) > MAX_DEPTH:
        raise UsageError(f"{what} nests deeper than {MAX_DEPTH} levels, MongoDB's limit")
    try:
        value = json_util.loads(text)
    except Exception as exc:  # json_util raises ValueError, InvalidId, decimal errors, ...
        raise UsageError(f"{what} is not valid Extended JSON: {summary(exc)}") from None
    if shape is not None and not isinstance(value, shape):
        got = "null" if value is None else type(value).__name__
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise UsageError(f"{what} must be {SHAPES[shape]}, not {got} ({shown.strip()!r})")
    return value


def read_stdin(stdin):
    """stdin as text, decoded strictly as UTF-8."""
    raw = getattr(stdin, "buffer", None)
    if raw is None:
        return stdin.read()
    data = raw.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"stdin is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset "
                         f"{exc.start})") from None


def documents(stdin):
    """The documents on stdin: a JSON array of objects, or one object per line."""
    text = read_stdin(stdin).strip()
    if not text:
        raise UsageError("no documents given, and nothing on stdin")
    if text.startswith("["):
        docs = loads(text, "stdin", list)
        for i, doc in enumerate(docs):
            if not isinstance(doc, dict):
                raise UsageError(f"stdin: element {i} of the array must be an object")
        return docs
    return [loads(line, f"stdin line {i}") for i, line in enumerate(text.splitlines(), 1)
            if line.strip()]
