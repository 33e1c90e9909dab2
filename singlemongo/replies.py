"""Reading a server's reply: the one reading of ``ok``, and for each shape of reply the driver
consumes, the type and range of every field it reads, checked in one place before any is used.

A reply is a success only when ``ok`` is a number other than 0 (MongoDB sends 1.0; PyMongo reads
it so): no ``ok`` at all, ``ok: null``, a list or the string "0" is a failure. A reply that
says ok but whose fields are not what its shape needs (a ``firstBatch`` that is a string, a
``writeErrors`` index outside the batch) is a MalformedReply (``reply_errors.py``) naming the field and the value,
never a KeyError or TypeError from deep inside, and never a result made of it. Pure: it reads
a dict and raises.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from operator import countOf
TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Any, Callable, Optional



def is_ok(reply: Any) -> bool:
    """Whether ``reply`` says it succeeded: ``ok`` a number other than 0 (True is 1)."""
    # type() first: an ABC's isinstance is a Python call, and every reply passes here.
    ok = reply.get("ok") if type(reply) is dict or isinstance(reply, Mapping) else None
    if type(ok) is float:  # what servers send; NaN is not ok (NaN != 0 would say it is)
        return ok != 0 and ok == ok
    if type(ok) is int:  # (True is a bool: the general rule below)
        return ok != 0
    return isinstance(ok, (int, float)) and not (isinstance(ok, float) and math.isnan(ok)) \
        and ok != 0


def failed(reply: Mapping[str, Any]) -> bool:
    """Whether a reply reports an error: not ok, or a write concern error with ok."""
    return not is_ok(reply) or "writeConcernError" in reply


def _is_topology_version(value: Any) -> bool:
    return isinstance(value, dict) and type(value.get("processId")).__name__ == "ObjectId" \
        and _integer(value.get("counter"))


# The error fields the driver reads, and what each must be; a field of another type is
# dropped (errmsg is kept as text) so that a lying server gives a typed error, not a TypeError.
_ERROR_FIELDS = {
    "code": lambda v: _integer(v),
    "codeName": lambda v: isinstance(v, str),
    "errorLabels": lambda v: isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v),
    "topologyVersion": _is_topology_version,
}


def _sane_fields(doc: Mapping[str, Any]) -> dict[str, Any]:
    doc = dict(doc)
    for name, valid in _ERROR_FIELDS.items():
        if name in doc and not valid(doc[name]):
            del doc[name]
    if "errmsg" in doc and not isinstance(doc["errmsg"], str):
        doc["errmsg"] = repr(doc["errmsg"])[:200]
    return doc


def sanitize(reply: Mapping[str, Any]) -> Mapping[str, Any]:
    """A failed reply whose error fields have the types the driver reads (a reply that does
    not say ok says so in its errmsg). The writeErrors of a reply that says ok are the "write"
    shape's (``check``)."""
    if not failed(reply):
        return reply
    reply = _sane_fields(reply)
    if not is_ok(reply) and reply.get("ok") not in (0, 0.0, False) and "errmsg" not in reply:
        reply["errmsg"] = f"the reply does not say ok (ok: {reply.get('ok', 'missing')!r:.40})"
    if "writeConcernError" in reply:
        wce = reply["writeConcernError"]
        reply["writeConcernError"] = _sane_fields(wce) if isinstance(wce, dict) else {
            "errmsg": f"malformed writeConcernError {wce!r:.200}"}
    if isinstance(reply.get("writeErrors"), list):
        reply["writeErrors"] = [_sane_fields(e) if isinstance(e, Mapping) else e
                                for e in reply["writeErrors"]]
    return reply


# ----- what a field may be ---------------------------------------------------------------

class Rule:
    """A field of a reply shape: its dotted ``path`` below the reply, what it must be
    (``valid``, said as ``expected``), and whether it must be there. A plain class: a
    NamedTuple builds its class with eval (0.5 M instructions of a one-off), a record costs
    0.1 M more than this."""

    __slots__ = ("path", "parts", "valid", "expected", "required")

    def __init__(self, path: str, valid: Callable[[Any, Optional[int]], bool], expected: str,
                 required: bool = True) -> None:
        self.path, self.valid = path, valid  # valid(value, the batch's size or None)
        self.parts = tuple(path.split("."))  # split once: every reply reads its shape's rules
        self.expected, self.required = expected, required


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(value: Any, _size: Optional[int]) -> bool:
    return (type(value) is int or _integer(value)) and value >= 0


def _cursor_id(value: Any, _size: Optional[int]) -> bool:
    return _integer(value)


def _documents(value: Any, _size: Optional[int]) -> bool:
    # By the types present, not document by document: a batch of 100,000 has one or two.
    # Counting dicts first is one pass in C without a set (the usual document class).
    return isinstance(value, list) and (countOf(map(type, value), dict) == len(value) or all(
        kind is dict or issubclass(kind, Mapping) for kind in set(map(type, value))))


def _document(value: Any, _size: Optional[int]) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def _document_or_null(value: Any, _size: Optional[int]) -> bool:
    return value is None or isinstance(value, Mapping)


def _string(value: Any, _size: Optional[int]) -> bool:
    return isinstance(value, str)


def _array(value: Any, _size: Optional[int]) -> bool:
    return isinstance(value, list)


def _in_batch(index: Any, size: Optional[int]) -> bool:
    return (type(index) is int or _integer(index)) and index >= 0 and (
        size is None or index < size)


def _upserted(value: Any, size: Optional[int]) -> bool:
    # A loop with type() first, no call per entry: a bulk write of upserts has one entry each.
    if not isinstance(value, list):
        return False
    for u in value:
        if type(u) is not dict and not isinstance(u, Mapping):
            return False
        index: Any = u.get("index")
        if not (type(index) is int or _integer(index)) or index < 0 or (
                size is not None and index >= size) or "_id" not in u:
            return False
    return True


def _write_errors(value: Any, size: Optional[int]) -> bool:
    return isinstance(value, list) and all(
        isinstance(e, Mapping) and _in_batch(e.get("index"), size) and _integer(e.get("code"))
        for e in value)


def _named_indexes(value: Any, _size: Optional[int]) -> bool:
    return isinstance(value, list) and all(isinstance(i, Mapping) and isinstance(
        i.get("name"), str) for i in value)


def _databases(value: Any, _size: Optional[int]) -> bool:
    return isinstance(value, list) and all(isinstance(d, Mapping) and isinstance(
        d.get("name"), str) for d in value)


IN_BATCH = "a list of {index, ...} with each index an integer in 0..{last} of this batch"

# The shapes, each field the driver reads with what it must be (the commands' reply pages of
# MongoDB's manual).
SHAPES: dict[str, tuple[Rule, ...]] = {
    # find, aggregate, listCollections, listIndexes, ...: "firstBatch"; getMore: "nextBatch"
    "firstBatch": (Rule("cursor", _document, "a document"),
                   Rule("cursor.id", _cursor_id, "an integer (a long)"),
                   Rule("cursor.firstBatch", _documents, "an array of documents"),
                   Rule("cursor.ns", _string, "a string", required=False)),
    "nextBatch": (Rule("cursor", _document, "a document"),
                  Rule("cursor.id", _cursor_id, "an integer (a long)"),
                  Rule("cursor.nextBatch", _documents, "an array of documents"),
                  Rule("cursor.ns", _string, "a string", required=False)),
    # insert, update, delete
    "write": (Rule("n", _count, "a count (an integer >= 0)", required=False),
              Rule("nModified", _count, "a count (an integer >= 0)", required=False),
              Rule("upserted", _upserted, IN_BATCH, required=False),
              Rule("writeErrors", _write_errors, IN_BATCH + ", with an integer code",
                   required=False)),
    # MongoDB 8.0's bulkWrite: its results cursor and summary counts
    "bulkWrite": (Rule("cursor", _document, "a document"),
                  Rule("cursor.id", _cursor_id, "an integer (a long)"),
                  Rule("cursor.firstBatch", _documents, "an array of documents"),
                  *(Rule(name, _count, "a count (an integer >= 0)") for name in (
                      "nErrors", "nInserted", "nUpserted", "nMatched", "nModified",
                      "nDeleted"))),
    "count": (Rule("n", _count, "a count (an integer >= 0)"),),
    "distinct": (Rule("values", _array, "an array"),),
    "findAndModify": (Rule("value", _document_or_null, "a document or null", required=False),),
    "listDatabases": (Rule("databases", _databases, "an array of documents with a name"),),
    "createSearchIndexes": (Rule("indexesCreated", _named_indexes,
                                 "an array of index documents with a name"),),
}

_MISSING = object()


def _at(reply: Mapping[str, Any], parts: tuple[str, ...]) -> Any:
    value: Any = reply
    for part in parts:
        if not (type(value) is dict or isinstance(value, Mapping)) or part not in value:
            return _MISSING
        value = value[part]
    return value


def check(shape: str, reply: Mapping[str, Any], command: str,
          batch_size: Optional[int] = None, address: Any = None) -> Mapping[str, Any]:
    """``reply`` if every field ``shape`` reads is what it must be; else MalformedReply naming
    the first field that is not (``batch_size``: the number of statements sent, the range of
    a writeErrors or upserted index)."""
    for rule in SHAPES[shape]:
        value = _at(reply, rule.parts)
        if value is _MISSING:
            if rule.required:
                raise _malformed(command, rule, "is missing", reply, batch_size, address)
            continue
        if not rule.valid(value, batch_size):
            raise _malformed(command, rule, f"is {value!r:.80} ({type(value).__name__})",
                             reply, batch_size, address)
    return reply


def _malformed(command: str, rule: Rule, what: str, reply: Mapping[str, Any],
               batch_size: Optional[int], address: Any) -> Exception:
    expected = rule.expected.replace("{last}", str(max((batch_size or 1) - 1, 0)))
    from singlemongo.sdam.address import format_address
    where = f" from {format_address(address)}" if address is not None else ""
    from singlemongo.reply_errors import MalformedReply  # loaded with the first failure, as the others
    return MalformedReply(f"the reply to {command}{where} is malformed: {rule.path} {what}, "
                          f"expected {expected}; nothing of it was used", None, dict(reply),
                          address=address)
