"""What a server's failure reply means: the errors only a reply raises, the typed error a
failed reply stands for, and whether the retryable reads and writes specs allow the one retry
after an error. Loaded with the first failure (a one-off that succeeds never loads it); the
classes are also ``singlemongo.errors``' (PyMongo's ``pymongo.errors``), where ``__module__``
says they live. CursorNotFound is also raised for a cursor whose connection was lost.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional

from singlemongo.errors import (PROGRAM_MADE, _Address, AutoReconnect, ConnectionFailure,
                     OperationFailure, _rebuild, _serve, full_error)
from singlemongo.replies import is_ok
from singlemongo.sdam.address import format_address


class WriteConcernError(OperationFailure):
    """The write happened but its write concern was not satisfied. ``details`` is the
    server's ``writeConcernError`` document (with the reply's ``errorLabels``), as PyMongo's."""

    reply: Optional[Mapping[str, Any]] = None  # the whole reply it came in, when known


class CursorNotFound(OperationFailure):
    """The cursor is gone on the server, or the connection that opened it was lost."""


class NotPrimaryError(AutoReconnect):
    """The server is not (or no longer) the primary, or is recovering or shutting down
    (10107, 13435, 10058, 11600, 11602, 13436, 189, 91). ``details`` is its reply."""

    def __init__(self, message: str = "", errors: Optional[Mapping[str, Any]] = None, *,
                 address: _Address = PROGRAM_MADE) -> None:
        details = dict(errors or {})
        super().__init__(full_error(message, errors, address),
                         address=None if address is PROGRAM_MADE else address,
                         labels=details.get("errorLabels") or (), errors=details)

    def __reduce__(self) -> Any:
        return _rebuild, (type(self), self.args, self.__dict__)

    @property
    def code(self) -> Optional[int]:
        """The server's error code."""
        code = self.details.get("code") if isinstance(self.details, Mapping) else None
        return code if isinstance(code, int) else None


class WriteError(OperationFailure):
    """A single write failed (the server's writeErrors entry is in ``details``)."""


class DuplicateKeyError(WriteError):
    """A write violated a unique index (code 11000)."""


class WTimeoutError(WriteConcernError):
    """The write concern timed out (wtimeout)."""


class BulkWriteError(OperationFailure):
    """A bulk write (or insert_many) failed; ``details`` has writeErrors, writeConcernErrors,
    nInserted, nUpserted, nMatched, nModified, nRemoved and upserted, as in PyMongo."""

    details: Mapping[str, Any]  # never None (PyMongo types it so too)

    def __init__(self, results: Mapping[str, Any], message: str = "batch op errors occurred",
                 *, address: _Address = PROGRAM_MADE) -> None:
        super().__init__(message, 65, results, address=address)


class ClientBulkWriteException(OperationFailure):
    """A client-level bulk write (``MongoClient.bulk_write``) failed. ``details`` holds
    ``error`` (the top-level error that ended it, or None), ``writeErrors`` (each with the
    ``idx`` of its model and the ``op`` sent), ``writeConcernErrors`` and the counts of what
    succeeded before, as PyMongo's."""

    details: Mapping[str, Any]

    def __init__(self, results: Mapping[str, Any], verbose: bool,
                 message: str = "batch op errors occurred") -> None:
        super().__init__(message, 65, results)
        self.verbose = verbose

    def __reduce__(self) -> tuple[Any, Any]:
        return self.__class__, (self.details, self.verbose, self.args[0])

    def _detail(self, key: str, default: Any) -> Any:
        return self.details.get(key, default) if self.details is not None else default

    @property
    def error(self) -> Any:
        """The top-level error that ended the bulk write (a network error, a command
        error, a failed getMore), or None."""
        return self._detail("error", None)

    @property
    def write_concern_errors(self) -> Any:
        """The write concern errors of the bulk write's commands (one per command at most)."""
        return self._detail("writeConcernErrors", [])

    @property
    def write_errors(self) -> Any:
        """The errors of individual writes, in the order of their models (an ordered bulk
        write has at most one)."""
        return self._detail("writeErrors", [])

    @property
    def partial_result(self) -> Any:
        """A ClientBulkWriteResult of what succeeded before the error, or None when no
        write is known to have succeeded."""
        if not self._detail("anySuccessful", False):
            return None
        from singlemongo.results import ClientBulkWriteResult
        return ClientBulkWriteResult(dict(self.details), True, self.verbose)


class MalformedReply(OperationFailure):
    """A reply that says ok but does not have the shape its command's reply has; the message
    names the field and the value. Nothing of it was used (no result was made of it)."""


class ExecutionTimeout(OperationFailure):
    """The server stopped the operation at its time limit (code 50, MaxTimeMSExpired)."""


_serve(WriteConcernError, CursorNotFound, NotPrimaryError, WriteError, DuplicateKeyError,
       WTimeoutError, BulkWriteError, ExecutionTimeout, MalformedReply, ClientBulkWriteException)


# Retryable writes spec (pre-4.4 servers, without labels) and retryable reads spec.
RETRYABLE_CODES = frozenset({11600, 11602, 10107, 13435, 13436, 189, 91, 7, 6, 89, 9001, 262})
RETRYABLE_READ_CODES = RETRYABLE_CODES | {134}
ERROR_CLASSES = {43: CursorNotFound, 50: ExecutionTimeout, 11000: DuplicateKeyError}
# Errors that mean "not the primary (any more)": NotPrimaryError, an AutoReconnect, as PyMongo
# raises them, so that ``except ConnectionFailure`` catches a stepdown.
NOT_PRIMARY_CODES = frozenset({10107, 13435, 10058, 11600, 11602, 13436, 189, 91})
NOT_PRIMARY_MESSAGES = ("not master", "node is recovering")


def is_not_primary(code, message):
    """Whether an error means "not the primary (any more)" (by code, or by message when the
    reply has no code)."""
    if code is not None:
        return code in NOT_PRIMARY_CODES
    return any(needle in (message or "") for needle in NOT_PRIMARY_MESSAGES)


def error_from_reply(reply, address):
    """The typed error a failed reply stands for (the reply is its ``details``)."""
    if not is_ok(reply):
        code = reply.get("code")
        # The server's labels are in the message too, as in PyMongo's (its "full error"
        # shows them): programs grep it for RetryableError or SystemOverloadedError.
        labels = reply.get("errorLabels")
        labels = [label for label in labels if isinstance(label, str)] \
            if isinstance(labels, list) else []
        message = (f"command failed on {format_address(address)}: "
                   f"{reply.get('errmsg', 'unknown error')} (code {code}"
                   f"{', ' + reply['codeName'] if reply.get('codeName') else ''}"
                   f"{'; labels ' + ', '.join(labels) if labels else ''})")
        if is_not_primary(code, reply.get("errmsg")):
            return NotPrimaryError(message, reply, address=address)
        return ERROR_CLASSES.get(code, OperationFailure)(message, code, reply, address=address)
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
        f"(code {wce.get('code')})", wce.get("code"), details, address=address)
    error.reply = reply  # the whole reply (n, writeErrors, ...) for bulk results
    return error


def from_server(error):
    """True for an error the server replied with (its code and labels decide retries), as
    opposed to a network error."""
    return isinstance(error, (OperationFailure, NotPrimaryError))


def is_retryable(error, kind, max_wire_version):
    """Whether the retryable reads (``kind`` "read") or writes ("write") spec allows the one
    retry after ``error``."""
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
