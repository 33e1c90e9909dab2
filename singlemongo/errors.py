"""Exceptions and warnings raised by singlemongo, in PyMongo's hierarchy and with its names,
so that existing ``except`` clauses keep working:

    PyMongoError (alias SingleMongoError)
      ConnectionFailure
        AutoReconnect
          NetworkTimeout, NotPrimaryError, ServerSelectionTimeoutError (alias
          ServerSelectionError)
        ProtocolError (a ConnectionFailure here: the connection that carried it is closed)
      ConfigurationError (also a ValueError)
        InvalidURI, DNSError, IncompatibleWireVersionError
      OperationFailure
        WriteError > DuplicateKeyError, WriteConcernError > WTimeoutError, BulkWriteError,
        CursorNotFound, ExecutionTimeout
      InvalidOperation, InvalidName, CollectionInvalid
    InvalidDocument (a bson.errors.InvalidDocument and a PyMongoError) > DocumentTooLarge

Every message names what was tried and the offending value; passwords are redacted by the
code that builds the message (see ``options/uri.py``), never here.

The end of the module reads a server's reply: whether it failed, the typed error it stands for,
and whether the retryable reads and writes specs allow a retry after it.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from bson.errors import InvalidDocument as _BSONInvalidDocument

from .sdam.address import format_address

_Address = Any


class PyMongoError(Exception):
    """Base class of every error singlemongo raises. ``timeout`` is True when a timeout caused
    it (client-side operations timeout: timeoutMS, a socket or selection timeout,
    MaxTimeMSExpired)."""

    timeout: bool = False

    def __init__(self, message: str = "", error_labels: Optional[Iterable[str]] = None) -> None:
        super().__init__(message)
        self._message = message
        self.error_labels: tuple[str, ...] = tuple(error_labels or ())

    def has_error_label(self, label: str) -> bool:
        """True if the server (or the driver) labelled this error ``label``."""
        return label in self.error_labels


SingleMongoError = PyMongoError


class SingleMongoWarning(UserWarning):
    """Something in the configuration was ignored; the message says what and why."""


class ConfigurationError(PyMongoError, ValueError):
    """A connection string, option or read preference is invalid."""


class ConfigurationTypeError(ConfigurationError, TypeError):
    """An option given a value of the wrong Python type (also a TypeError, as PyMongo raises
    for one)."""


class InvalidURI(ConfigurationError):
    """The connection string cannot be parsed."""


class DNSError(ConfigurationError):
    """A mongodb+srv lookup failed or returned records the rules forbid."""


class IncompatibleWireVersionError(ConfigurationError):
    """A server's wire version range does not overlap the driver's (PyMongo raises a
    ConfigurationError for this too)."""


class ConnectionFailure(PyMongoError):
    """A network error talking to a server. ``address`` is the server's, if known."""

    def __init__(self, message: str = "", address: _Address = None, timeout: bool = False,
                 labels: Iterable[str] = (),
                 errors: Union[Mapping[str, Any], Sequence[Any], None] = None) -> None:
        super().__init__(message, labels)
        self.address = address
        self.timeout = timeout
        self.errors = errors
        self.details = errors


class AutoReconnect(ConnectionFailure):
    """The operation failed on the network (or the server is not primary any more); a later
    attempt, after the driver rediscovers the deployment, may succeed."""


class NetworkTimeout(AutoReconnect):
    """A socket operation timed out."""

    def __init__(self, message: str = "", address: _Address = None,
                 labels: Iterable[str] = (),
                 errors: Union[Mapping[str, Any], Sequence[Any], None] = None) -> None:
        super().__init__(message, address=address, timeout=True, labels=labels, errors=errors)


class NotPrimaryError(AutoReconnect):
    """The server is not (or no longer) the primary, or is recovering or shutting down
    (10107, 13435, 10058, 11600, 11602, 13436, 189, 91). ``details`` is its reply."""

    def __init__(self, message: str = "", errors: Optional[Mapping[str, Any]] = None,
                 address: _Address = None) -> None:
        details = dict(errors or {})
        super().__init__(message, address=address, labels=details.get("errorLabels") or (),
                         errors=details)

    @property
    def code(self) -> Optional[int]:
        """The server's error code."""
        code = self.details.get("code") if isinstance(self.details, Mapping) else None
        return code if isinstance(code, int) else None


class ServerSelectionTimeoutError(AutoReconnect):
    """No suitable server could be selected; the message describes every server tried, the
    topology type, the time used against the budget and a hint."""


ServerSelectionError = ServerSelectionTimeoutError


class ProtocolError(ConnectionFailure):
    """A reply did not follow the wire protocol; the connection that carried it is closed."""


class WaitQueueTimeoutError(ConnectionFailure):
    """A thread waited too long for another thread's operation on the same client to finish
    (a client runs one operation at a time: PyMongo's wait for a pooled connection)."""


class OperationFailure(PyMongoError):
    """The server answered a command with an error: ``code``, ``code_name``, ``details`` (the
    reply) and ``error_labels``."""

    def __init__(self, error: str, code: Optional[int] = None,
                 details: Optional[Mapping[str, Any]] = None, address: _Address = None,
                 max_wire_version: Optional[int] = None) -> None:
        details = details if details is not None else {}
        labels = details.get("errorLabels") if isinstance(details, Mapping) else None
        super().__init__(error, labels if isinstance(labels, (list, tuple)) else ())
        self.code = code
        self.details: Optional[Mapping[str, Any]] = details  # typed as PyMongo's
        self.address = address
        self.max_wire_version = max_wire_version

    @property
    def code_name(self) -> Optional[str]:
        """The server's name for the code (``codeName``), if it sent one."""
        name = self.details.get("codeName") if isinstance(self.details, Mapping) else None
        return name if isinstance(name, str) else None

    @property
    def timeout(self) -> bool:  # type: ignore[override]
        return self.code == 50


class WriteError(OperationFailure):
    """A single write failed (the server's writeErrors entry is in ``details``)."""


class DuplicateKeyError(WriteError):
    """A write violated a unique index (code 11000)."""


class WriteConcernError(OperationFailure):
    """The write happened but its write concern was not satisfied. ``details`` is the
    server's ``writeConcernError`` document (with the reply's ``errorLabels``), as PyMongo's."""

    reply: Optional[Mapping[str, Any]] = None  # the whole reply it came in, when known


class WTimeoutError(WriteConcernError):
    """The write concern timed out (wtimeout)."""


class BulkWriteError(OperationFailure):
    """A bulk write (or insert_many) failed; ``details`` has writeErrors, writeConcernErrors,
    nInserted, nUpserted, nMatched, nModified, nRemoved and upserted, as in PyMongo."""

    details: Mapping[str, Any]  # never None (PyMongo types it so too)

    def __init__(self, results: Mapping[str, Any], message: str = "batch op errors occurred",
                 address: _Address = None) -> None:
        super().__init__(message, 65, results, address)


class ExecutionTimeout(OperationFailure):
    """The server stopped the operation at its time limit (code 50, MaxTimeMSExpired)."""


class CursorNotFound(OperationFailure):
    """The cursor is gone on the server, or the connection that opened it was lost."""


class InvalidOperation(PyMongoError):
    """The operation cannot be performed in this state (a closed client, a used cursor)."""


class InvalidName(PyMongoError):
    """A database or collection name is not valid."""


class CollectionInvalid(PyMongoError):
    """A collection cannot be created (it exists) or validated."""


class InvalidDocument(_BSONInvalidDocument, PyMongoError):
    """A document cannot be sent: too large, a bad key, or not a mapping. It is also a
    ``bson.errors.InvalidDocument``, as PyMongo's are."""

    def __init__(self, message: str, document: Any = None) -> None:
        PyMongoError.__init__(self, message)
        self._document = document

    @property
    def document(self) -> Any:
        """The document that could not be sent, if known."""
        return self._document


class DocumentTooLarge(InvalidDocument):
    """A document (or a command) is larger than the server accepts (maxBsonObjectSize)."""


# The exceptions (pymongo.errors); the reply reading below is the driver's own.
__all__ = ["PyMongoError", "SingleMongoError", "SingleMongoWarning", "ConfigurationError",
           "ConfigurationTypeError", "InvalidURI", "DNSError", "IncompatibleWireVersionError",
           "ConnectionFailure", "AutoReconnect", "NetworkTimeout", "NotPrimaryError",
           "ServerSelectionTimeoutError", "ServerSelectionError", "ProtocolError",
           "WaitQueueTimeoutError", "OperationFailure", "WriteError", "DuplicateKeyError",
           "WriteConcernError", "WTimeoutError", "BulkWriteError", "ExecutionTimeout",
           "CursorNotFound", "InvalidOperation", "InvalidName", "CollectionInvalid",
           "InvalidDocument", "DocumentTooLarge"]

# ----- reading a reply ----------------------------------------------------------------------

# Retryable writes spec (pre-4.4 servers, without labels) and retryable reads spec.
RETRYABLE_CODES = frozenset({11600, 11602, 10107, 13435, 13436, 189, 91, 7, 6, 89, 9001, 262})
RETRYABLE_READ_CODES = RETRYABLE_CODES | {134}
ERROR_CLASSES = {43: CursorNotFound, 50: ExecutionTimeout, 11000: DuplicateKeyError}
# Errors that mean "not the primary (any more)": NotPrimaryError, an AutoReconnect, as PyMongo
# raises them, so that ``except ConnectionFailure`` catches a stepdown.
NOT_PRIMARY_CODES = frozenset({10107, 13435, 10058, 11600, 11602, 13436, 189, 91})
NOT_PRIMARY_MESSAGES = ("not master", "node is recovering")


def failed(reply):
    """Whether a reply reports an error: ok 0, or a write concern error with ok 1."""
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
    """Whether an error means "not the primary (any more)" (by code, or by message when the
    reply has no code)."""
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
