"""Exceptions and warnings raised by singlemongo, in PyMongo's hierarchy and with its names,
so that existing ``except`` clauses keep working::

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
        CursorNotFound, ExecutionTimeout, ClientBulkWriteException
      InvalidOperation, InvalidName, CollectionInvalid
      EncryptionError > EncryptedCollectionError (never raised: no encryption here)
    InvalidDocument (a bson.errors.InvalidDocument and a PyMongoError) > DocumentTooLarge

Every message names what was tried and the offending value; passwords are redacted by the
code that builds the message (see ``options/uri.py``), never here.

This module holds the trunk every layer raises or catches by name. The other classes load
with their first use and are served from here too (``from singlemongo.errors import
InvalidURI`` works as before): the errors a server's failure reply raises (NotPrimaryError,
WriteError, DuplicateKeyError, WriteConcernError, WTimeoutError, BulkWriteError,
ClientBulkWriteException, CursorNotFound, ExecutionTimeout), with the typed error a reply
stands for and the retry rules, are in ``reply_errors.py``; the errors that refuse a program's input (InvalidURI,
ConfigurationTypeError, DNSError, IncompatibleWireVersionError, WaitQueueTimeoutError,
InvalidName, CollectionInvalid, InvalidDocument, DocumentTooLarge, SingleMongoWarning) are in
``usage_errors.py``. A one-off that succeeds creates neither (an exception class costs about
130,000 instructions, some 40 us). Reading a reply (whether it failed, its fields) is
``replies.py``'s.
"""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional, Sequence, Union

_Address = Any

# Where each class that loads with its first use lives.
_LOADED_AT_FIRST_USE = {
    **dict.fromkeys(("NotPrimaryError", "WriteError", "DuplicateKeyError", "WriteConcernError",
                     "WTimeoutError", "BulkWriteError", "CursorNotFound", "ExecutionTimeout",
                     "MalformedReply", "ClientBulkWriteException"),
                    "reply_errors"),
    **dict.fromkeys(("SingleMongoWarning", "ConfigurationTypeError",
                     "ConfigurationFileNotFoundError", "InvalidURI", "DNSError",
                     "IncompatibleWireVersionError", "WaitQueueTimeoutError", "InvalidName",
                     "CollectionInvalid", "InvalidDocument", "DocumentTooLarge",
                     "EncryptionError", "EncryptedCollectionError"),
                    "usage_errors"),
}

if TYPE_CHECKING:
    from singlemongo.reply_errors import BulkWriteError as BulkWriteError
    from singlemongo.reply_errors import CursorNotFound as CursorNotFound
    from singlemongo.reply_errors import DuplicateKeyError as DuplicateKeyError
    from singlemongo.reply_errors import ExecutionTimeout as ExecutionTimeout
    from singlemongo.reply_errors import NotPrimaryError as NotPrimaryError
    from singlemongo.reply_errors import WriteConcernError as WriteConcernError
    from singlemongo.reply_errors import WriteError as WriteError
    from singlemongo.reply_errors import WTimeoutError as WTimeoutError
    from singlemongo.reply_errors import MalformedReply as MalformedReply
    from singlemongo.reply_errors import ClientBulkWriteException as ClientBulkWriteException
    from singlemongo.usage_errors import CollectionInvalid as CollectionInvalid
    from singlemongo.usage_errors import ConfigurationTypeError as ConfigurationTypeError
    from singlemongo.usage_errors import (
        ConfigurationFileNotFoundError as ConfigurationFileNotFoundError)
    from singlemongo.usage_errors import DNSError as DNSError
    from singlemongo.usage_errors import DocumentTooLarge as DocumentTooLarge
    from singlemongo.usage_errors import EncryptedCollectionError as EncryptedCollectionError
    from singlemongo.usage_errors import EncryptionError as EncryptionError
    from singlemongo.usage_errors import IncompatibleWireVersionError as IncompatibleWireVersionError
    from singlemongo.usage_errors import InvalidDocument as InvalidDocument
    from singlemongo.usage_errors import InvalidName as InvalidName
    from singlemongo.usage_errors import InvalidURI as InvalidURI
    from singlemongo.usage_errors import SingleMongoWarning as SingleMongoWarning
    from singlemongo.usage_errors import WaitQueueTimeoutError as WaitQueueTimeoutError


def _serve(*classes: type) -> None:
    """Make ``classes``, defined in a module that loads at first use, this module's for
    tracebacks, pickles and code written against ``pymongo.errors``."""
    for cls in classes:
        cls.__module__ = __name__


def __getattr__(name: str) -> Any:
    module = _LOADED_AT_FIRST_USE.get(name)  # pymongo.errors.DuplicateKeyError and the rest
    if module is None:
        raise AttributeError(f"module 'singlemongo.errors' has no attribute {name!r}")
    __import__(f"{__package__}.{module}")  # not importlib: a one-off need not load it
    value = globals()[name] = getattr(sys.modules[f"{__package__}.{module}"], name)
    return value


def __dir__() -> list[str]:
    """The module's names, with those that load at first use (completion in a shell)."""
    return sorted({*globals(), *_LOADED_AT_FIRST_USE})


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


class ConfigurationError(PyMongoError, ValueError):
    """A connection string, option or read preference is invalid."""


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


class ServerSelectionTimeoutError(AutoReconnect):
    """No suitable server could be selected; the message describes every server tried, the
    topology type, the time used against the budget and a hint."""


ServerSelectionError = ServerSelectionTimeoutError


class ProtocolError(ConnectionFailure):
    """A reply did not follow the wire protocol; the connection that carried it is closed."""


# An error the driver raises passes ``address=`` (None included); one a program constructs
# does not, and its message is PyMongo's ("..., full error: {details}").
PROGRAM_MADE: Any = object()


def full_error(message: str, details: Any, address: Any) -> str:
    """PyMongo's message of an error a program constructs with ``details``; the driver's
    own errors (``address`` given) keep singlemongo's message."""
    if address is PROGRAM_MADE and details is not None:
        return f"{message}, full error: {details}"
    return message


class OperationFailure(PyMongoError):
    """The server answered a command with an error: ``code``, ``code_name``, ``details`` (the
    reply) and ``error_labels``. Made by a program, ``OperationFailure(error, code,
    details, max_wire_version)`` reads as PyMongo's (``"error, full error: {details}"``)."""

    def __init__(self, error: str, code: Optional[int] = None,
                 details: Optional[Mapping[str, Any]] = None,
                 max_wire_version: Optional[int] = None, *, address: _Address = PROGRAM_MADE
                 ) -> None:
        labels = details.get("errorLabels") if isinstance(details, Mapping) else None
        super().__init__(full_error(error, details, address),
                         labels if isinstance(labels, (list, tuple)) else ())
        self.code = code
        self.details: Optional[Mapping[str, Any]] = details
        self.address = None if address is PROGRAM_MADE else address
        self.max_wire_version = max_wire_version

    def __reduce__(self) -> Any:
        # args hold the formatted message: rebuilt as the driver's, nothing appended twice.
        return _rebuild, (type(self), self.args, self.__dict__)

    @property
    def code_name(self) -> Optional[str]:
        """The server's name for the code (``codeName``), if it sent one."""
        name = self.details.get("codeName") if isinstance(self.details, Mapping) else None
        return name if isinstance(name, str) else None

    @property
    def timeout(self) -> bool:  # type: ignore[override]
        return self.code == 50


def _rebuild(cls: Any, args: tuple, state: dict) -> Any:
    """Unpickle an error with its message as it was (PyMongo's pickles keep theirs too)."""
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


def with_configured_timeouts(error: Any, timeout_s: Optional[float],
                             socket_timeout_ms: Optional[float],
                             connect_timeout_ms: Optional[float]) -> Any:
    """``error`` (a timeout: NetworkTimeout, or the server's MaxTimeMSExpired) with PyMongo's
    "(configured timeouts: ...)" after its message, which PyMongo's users grep for: timeoutMS
    when in force, else socketTimeoutMS, then connectTimeoutMS, each one set."""
    message = error.args[0] if error.args and isinstance(error.args[0], str) else None
    if message is None or "(configured timeouts:" in message or not error.timeout:
        return error
    named = (("socketTimeoutMS", None if timeout_s else socket_timeout_ms),
             ("timeoutMS", timeout_s * 1000 if timeout_s else None),
             ("connectTimeoutMS", connect_timeout_ms))
    # Whole milliseconds: a deadline made from what remained of a block reads as the block.
    shown = ", ".join(f"{name}: {float(round(ms))}ms" for name, ms in named if ms)
    if shown:
        error.args = (f"{message} (configured timeouts: {shown})",) + error.args[1:]
    return error


class InvalidOperation(PyMongoError):
    """The operation cannot be performed in this state (a closed client, a used cursor)."""


# The exceptions (pymongo.errors); the reply reading below is the driver's own.
__all__ = ["PyMongoError", "SingleMongoError", "SingleMongoWarning", "ConfigurationError",
           "ConfigurationTypeError", "InvalidURI", "DNSError", "IncompatibleWireVersionError",
           "ConnectionFailure", "AutoReconnect", "NetworkTimeout", "NotPrimaryError",
           "ServerSelectionTimeoutError", "ServerSelectionError", "ProtocolError",
           "WaitQueueTimeoutError", "OperationFailure", "WriteError", "DuplicateKeyError",
           "WriteConcernError", "WTimeoutError", "BulkWriteError", "ClientBulkWriteException",
           "ExecutionTimeout", "CursorNotFound", "InvalidOperation", "InvalidName", "CollectionInvalid",
           "InvalidDocument", "DocumentTooLarge"]
