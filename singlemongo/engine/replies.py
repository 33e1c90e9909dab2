"""Reading a reply: whether it failed, the typed error it stands for, and whether the
retryable reads and writes specs allow a retry after it."""
from ..errors import (ConnectionFailure, CursorNotFound, DuplicateKeyError, ExecutionTimeout,
                      OperationFailure, WriteConcernError)
from ..sdam.server_description import format_address

# Retryable writes spec (pre-4.4 servers, without labels) and retryable reads spec.
RETRYABLE_CODES = frozenset({11600, 11602, 10107, 13435, 13436, 189, 91, 7, 6, 89, 9001, 262})
RETRYABLE_READ_CODES = RETRYABLE_CODES | {134}
ERROR_CLASSES = {43: CursorNotFound, 50: ExecutionTimeout, 11000: DuplicateKeyError}


def failed(reply):
    return reply.get("ok") in (0, 0.0, False) or "writeConcernError" in reply


def error_from_reply(reply, address):
    if reply.get("ok") in (0, 0.0, False):
        code = reply.get("code")
        cls = ERROR_CLASSES.get(code, OperationFailure)
        return cls(f"command failed on {format_address(address)}: "
                   f"{reply.get('errmsg', 'unknown error')} (code {code}"
                   f"{', ' + reply['codeName'] if reply.get('codeName') else ''})",
                   code, reply, address)
    wce = reply["writeConcernError"]
    details = dict(reply)
    if "errorLabels" in wce:
        details["errorLabels"] = list(wce["errorLabels"]) + list(reply.get("errorLabels", ()))
    return WriteConcernError(f"write concern error on {format_address(address)}: "
                             f"{wce.get('errmsg', '')} (code {wce.get('code')})",
                             wce.get("code"), details, address)


def is_retryable(error, kind, max_wire_version):
    if kind is None:
        return False
    if isinstance(error, ConnectionFailure):
        return True
    if not isinstance(error, OperationFailure):
        return False
    if kind == "write":
        if error.has_error_label("RetryableWriteError"):
            return True
        return max_wire_version < 9 and error.code in RETRYABLE_CODES
    return error.code in RETRYABLE_READ_CODES
