"""The errors that refuse what a program asked for, rather than report what a server did:
a connection string or option (InvalidURI, ConfigurationTypeError; DNSError for a
mongodb+srv lookup; SingleMongoWarning for an option ignored), a deployment the driver cannot
talk to (IncompatibleWireVersionError), a name or a document (InvalidName, CollectionInvalid,
InvalidDocument, DocumentTooLarge), a second thread (WaitQueueTimeoutError); and PyMongo's
errors of what singlemongo does not offer (EncryptionError, EncryptedCollectionError), never
raised, for code that imports or catches them.

Loaded with the first one raised (a one-off that succeeds never creates them: an exception
class costs about 130,000 instructions to create, some 40 us). They are
``singlemongo.errors``' (PyMongo's ``pymongo.errors``), served from there and named so by
``__module__`` (``errors._serve``).
"""
from __future__ import annotations

from typing import Any, Mapping

from bson.errors import InvalidDocument as _BSONInvalidDocument

from singlemongo.errors import ConfigurationError, ConnectionFailure, OperationFailure, PyMongoError, _serve


class SingleMongoWarning(UserWarning):
    """Something in the configuration was ignored; the message says what and why."""


class ConfigurationTypeError(ConfigurationError, TypeError):
    """An option given a value of the wrong Python type (also a TypeError, as PyMongo raises
    for one)."""


class ConfigurationFileNotFoundError(ConfigurationError, FileNotFoundError):
    """A file an option names (tlsCAFile, tlsCertificateKeyFile, tlsCRLFile) does not exist:
    also the FileNotFoundError PyMongo raises for it, with ``errno`` and ``filename``."""

    def __init__(self, message: str, filename: str) -> None:
        import errno
        ConfigurationError.__init__(self, message)
        self.errno, self.strerror, self.filename = errno.ENOENT, message, filename

    def __str__(self) -> str:
        return str(self.strerror)


class InvalidURI(ConfigurationError):
    """The connection string cannot be parsed."""


class DNSError(ConfigurationError):
    """A mongodb+srv lookup failed or returned records the rules forbid."""


class IncompatibleWireVersionError(ConfigurationError):
    """A server's wire version range does not overlap the driver's (PyMongo raises a
    ConfigurationError for this too)."""


class WaitQueueTimeoutError(ConnectionFailure):
    """A thread waited too long for another thread's operation on the same client to finish
    (a client runs one operation at a time: PyMongo's wait for a pooled connection)."""


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


# What singlemongo does not offer (client-side encryption) has PyMongo's
# error classes all the same, never raised here: code that imports or catches them runs.


class EncryptionError(PyMongoError):
    """Client-side encryption failed (PyMongo's; singlemongo offers no encryption and never
    raises it). ``cause`` is the exception it wraps."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self._cause = cause

    @property
    def cause(self) -> Exception:
        """The exception that made encryption or decryption fail."""
        return self._cause

    @property
    def timeout(self) -> bool:  # type: ignore[override]
        """Whether the wrapped error was a timeout."""
        return isinstance(self._cause, PyMongoError) and self._cause.timeout


class EncryptedCollectionError(EncryptionError):
    """Creating a collection with ``encrypted_fields`` failed (PyMongo's; never raised
    here)."""

    def __init__(self, cause: Exception, encrypted_fields: Mapping[str, Any]) -> None:
        super().__init__(cause)
        self._encrypted_fields = encrypted_fields

    @property
    def encrypted_fields(self) -> Mapping[str, Any]:
        """The encrypted_fields document, with the data keys known to have been created."""
        return self._encrypted_fields


_serve(SingleMongoWarning, ConfigurationTypeError, ConfigurationFileNotFoundError, InvalidURI, DNSError,
       IncompatibleWireVersionError, WaitQueueTimeoutError, InvalidName, CollectionInvalid,
       InvalidDocument, DocumentTooLarge, EncryptionError, EncryptedCollectionError)
