"""Reading a reply: whether it failed, the typed error it stands for, and whether the
retryable reads and writes specs allow a retry after it."""
from ..errors import (ConnectionFailure, CursorNotFound, DuplicateKeyError, ExecutionTimeout,
                      NotPrimaryError, OperationFailure, WriteConcernError, WTimeoutError)
from ..sdam.address import format_address

# Retryable writes spec (pre-4.4 servers, without labels) and retryable reads spec.
RETRYABLE_CODES = frozenset({11600, 11602, 10107, 13435, 13436, 189, 91, 7, 6, 89, 9001, 262})
RETRYABLE_READ_CODES = RETRYABLE_CODES | {134}
ERROR_CLASSES = {43: CursorNotFound, 50: ExecutionTimeout, 11000: DuplicateKeyError}
# Errors that mean "not the primary (any more)": NotPrimaryError, an AutoReconnect, as PyMongo
# raises them, so that ``except ConnectionFailure`` catches a stepdown.
NOT_PRIMARY_CODES = frozenset({10107, 13435, 10058, 11600, 11602, 13436, 189, 91})
NOT_PRIMARY_MESSAGES = ("not master", "node is recovering")


def failed(reply):
    return reply.get("ok") in (0, 0.0, False) or "writeConcernError" in reply


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _is_topology_version(value):
    return isinstance(value, dict) and type(value.get("processId")).__name__ == "ObjectId" \
        and _is_int(value.get("counter"))


# The error fields the driver reads, and what each must be; a field of another type is
# dropped (errmsg is kept as text) so that a lying server gives a typed error, not a TypeError.
_ERROR_FIELDS = {
    "code": _is_int,
    "codeName": lambda v: isinstance(v, str),
    "errorLabels": lambda v: isinstance(v, (list, tuple)) and all(isinstance(x, str) for x in v),
    "topologyVersion": _is_topology_version,
}


def _sane_fields(doc):
    doc = dict(doc)
    for name, valid in _ERROR_FIELDS.items():
        if name in doc and not valid(doc[name]):
            del doc[name]
    if "errmsg" in doc and not isinstance(doc["errmsg"], str):
        doc["errmsg"] = repr(doc["errmsg"])[:200]
    return doc


def sanitize(reply):
    """A failed reply whose error fields have the types the driver reads; writeErrors it cannot
    read are an OperationFailure rather than a write reported as done."""
    if not (failed(reply) or "writeErrors" in reply):
        return reply
    reply = _sane_fields(reply)
    if "writeConcernError" in reply:
        wce = reply["writeConcernError"]
        reply["writeConcernError"] = _sane_fields(wce) if isinstance(wce, dict) else {
            "errmsg": f"malformed writeConcernError {wce!r:.200}"}
    if "writeErrors" in reply:
        errors = reply["writeErrors"]
        if not isinstance(errors, list) or not all(
                isinstance(e, dict) and _is_int(e.get("index")) and e["index"] >= 0
                for e in errors):
            return {"ok": 0, "errmsg": f"the server replied with malformed writeErrors "
                                       f"{errors!r:.200}: the writes' outcome is unknown"}
        reply["writeErrors"] = [_sane_fields(e) for e in errors]
    return reply


def is_not_primary(code, message):
    if code is not None:
        return code in NOT_PRIMARY_CODES
    return any(needle in (message or "") for needle in NOT_PRIMARY_MESSAGES)


def error_from_reply(reply, address):
    """The typed error a failed reply stands for (the reply is its ``details``)."""
    if reply.get("ok") in (0, 0.0, False):
        code = reply.get("code")
        message = (f"command failed on {format_address(address)}: "
                   f"{reply.get('errmsg', 'unknown error')} (code {code}"
                   f"{', ' + reply['codeName'] if reply.get('codeName') else ''})")
        if is_not_primary(code, reply.get("errmsg")):
            return NotPrimaryError(message, reply, address)
        return ERROR_CLASSES.get(code, OperationFailure)(message, code, reply, address)
    wce = reply["writeConcernError"]
    # PyMongo's details: the writeConcernError document, with the reply's labels.
    details = dict(wce)
    labels = list(wce.get("errorLabels", ())) + list(reply.get("errorLabels", ()))
    if labels:
        details["errorLabels"] = labels
    timed_out = (wce.get("errInfo") or {}).get("wtimeout") if isinstance(
        wce.get("errInfo"), dict) else False
    error = (WTimeoutError if timed_out else WriteConcernError)(
        f"write concern error on {format_address(address)}: {wce.get('errmsg', '')} "
        f"(code {wce.get('code')})", wce.get("code"), details, address)
    error.reply = reply  # the whole reply (n, writeErrors, ...) for bulk results
    return error


def from_server(error):
    """True for an error the server replied with (its code and labels decide retries), as
    opposed to a network error."""
    return isinstance(error, (OperationFailure, NotPrimaryError))


def is_retryable(error, kind, max_wire_version):
    if kind is None:
        return False
    if isinstance(error, ConnectionFailure) and not isinstance(error, NotPrimaryError):
        return True
    if not from_server(error):
        return False
    if kind == "write":
        if error.has_error_label("RetryableWriteError"):
            return True
        return max_wire_version < 9 and error.code in RETRYABLE_CODES
    return error.code in RETRYABLE_READ_CODES
