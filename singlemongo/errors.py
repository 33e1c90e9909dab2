"""Exceptions and warnings raised by singlemongo.

Every error message names what was tried and the offending value; passwords are redacted by
the code that builds the message (see ``singlemongo.redact``), never here.
"""


class SingleMongoError(Exception):
    """Base class of every error singlemongo raises. ``timeout`` is True when a timeout caused
    it (client-side operations timeout: timeoutMS, a socket or selection timeout, MaxTimeMSExpired)."""

    timeout = False


class ConfigurationError(SingleMongoError, ValueError):
    """A connection string, option or read preference is invalid."""


class InvalidURI(ConfigurationError):
    """The connection string cannot be parsed."""


class SingleMongoWarning(UserWarning):
    """Something in the configuration was ignored; the message says what and why."""


class ServerSelectionError(SingleMongoError):
    """No suitable server could be selected; the message describes every server tried."""


class IncompatibleWireVersionError(ServerSelectionError):
    """A server's wire version range does not overlap the driver's."""


class ConnectionFailure(SingleMongoError):
    """A network error talking to a server."""

    def __init__(self, message, address=None, timeout=False, labels=()):
        super().__init__(message)
        self.address = address
        self.timeout = timeout
        self.error_labels = tuple(labels)

    def has_error_label(self, label):
        return label in self.error_labels


class NetworkTimeout(ConnectionFailure):
    """A socket operation timed out."""

    def __init__(self, message, address=None, labels=()):
        super().__init__(message, address=address, timeout=True, labels=labels)


class ProtocolError(ConnectionFailure):
    """A reply did not follow the wire protocol; the connection that carried it is closed."""


class DNSError(ConfigurationError):
    """A mongodb+srv lookup failed or returned records the rules forbid."""


class OperationFailure(SingleMongoError):
    """The server answered a command with an error."""

    def __init__(self, message, code=None, details=None, address=None):
        super().__init__(message)
        self.code = code
        self.details = details or {}
        self.address = address

    @property
    def code_name(self):
        return self.details.get("codeName")

    @property
    def error_labels(self):
        return tuple(self.details.get("errorLabels", ()))

    def has_error_label(self, label):
        return label in self.error_labels


class WriteError(OperationFailure):
    """A single write failed (the server's writeErrors entry is in ``details``)."""


class DuplicateKeyError(WriteError):
    """A write violated a unique index (code 11000)."""


class WriteConcernError(OperationFailure):
    """The write happened but its write concern was not satisfied."""


class BulkWriteError(OperationFailure):
    """A batch of writes failed; ``details`` has writeErrors, nInserted and friends."""


class ExecutionTimeout(OperationFailure):
    """The server stopped the operation at its time limit (code 50, MaxTimeMSExpired)."""

    timeout = True


class CursorNotFound(OperationFailure):
    """The cursor is gone on the server, or the connection that opened it was lost."""


class InvalidOperation(SingleMongoError):
    """The operation cannot be performed in this state (a closed client or cursor)."""


class InvalidDocument(SingleMongoError, ValueError):
    """A document cannot be sent: too large, a bad key, or not a mapping."""
