"""WriteConcern (as ``pymongo.write_concern``): how many members must acknowledge a write."""
from __future__ import annotations

from typing import Any, Optional, Union

from singlemongo.arguments import validate_boolean  # noqa: F401  # PyMongo's module offers it too
from singlemongo.errors import ConfigurationError


class WriteConcern:
    """``WriteConcern(w=None, wtimeout=None, j=None, fsync=None)``; all None is the server's
    default. ``w=0`` is unacknowledged: the write is sent with moreToCome and its result says
    ``acknowledged=False``. Raises TypeError or ValueError for a bad value and
    ConfigurationError for an invalid combination, as PyMongo does."""

    __slots__ = ("_document", "_acknowledged")

    def __init__(self, w: Union[int, str, None] = None, wtimeout: Optional[int] = None,
                 j: Optional[bool] = None, fsync: Optional[bool] = None) -> None:
        # PyMongo's checks, exception types and messages.
        doc: dict[str, Any] = {}
        if wtimeout is not None:
            if not isinstance(wtimeout, int):
                raise TypeError(f"wtimeout must be an integer, not {type(wtimeout)}")
            if wtimeout < 0:
                raise ValueError("wtimeout cannot be less than 0")
            doc["wtimeout"] = wtimeout
        for name, value in (("j", j), ("fsync", fsync)):
            if value is not None:
                if not isinstance(value, bool):
                    raise TypeError(f"{name} must be True or False, was: {name}={value}")
                doc[name] = value
        if j and fsync:
            raise ConfigurationError("Can't set both j and fsync at the same time")
        if w == 0 and j is True:
            raise ConfigurationError("Cannot set w to 0 and j to True")
        if w is not None:
            if isinstance(w, int):
                if w < 0:
                    raise ValueError("w cannot be less than 0")
            elif not isinstance(w, str):
                raise TypeError(f"w must be an integer or string, not {type(w)}")
            doc["w"] = w
        self._document = doc
        self._acknowledged = not (isinstance(w, int) and w == 0)

    @property
    def document(self) -> dict[str, Any]:
        """The ``writeConcern`` document (empty for the server's default)."""
        return dict(self._document)

    @property
    def acknowledged(self) -> bool:
        """False only for ``w=0``."""
        return self._acknowledged

    @property
    def is_server_default(self) -> bool:
        """True when nothing was set: the driver sends no writeConcern."""
        return not self._document

    def __repr__(self) -> str:
        return "WriteConcern({})".format(", ".join(f"{k}={v!r}" for k, v in
                                                     self._document.items()))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, WriteConcern):
            return self._document == other._document
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash(tuple(sorted((k, str(v)) for k, v in self._document.items())))


DEFAULT_WRITE_CONCERN = WriteConcern()
