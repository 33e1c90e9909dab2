"""GridFS errors (as ``gridfs.errors``): each a PyMongoError, so ``except PyMongoError``
catches them too."""
from __future__ import annotations

from singlemongo.errors import PyMongoError


class GridFSError(PyMongoError):
    """Base class of the GridFS errors."""


class CorruptGridFile(GridFSError):
    """A file's chunks do not match its files document (missing, extra or truncated)."""


class NoFile(GridFSError):
    """No file matches the id, name or revision asked for."""


class FileExists(GridFSError):
    """A file with this ``_id`` already exists."""
