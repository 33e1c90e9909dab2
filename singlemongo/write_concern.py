"""WriteConcern (as ``pymongo.write_concern``): how many members must acknowledge a write."""
from __future__ import annotations

from typing import Any, Optional, Union

from .errors import ConfigurationError


class WriteConcern:
    """``WriteConcern(w=None, wtimeout=None, j=None, fsync=None)``; all None is the server's
    default. ``w=0`` is unacknowledged: the write is sent with moreToCome and its result says
    ``acknowledged=False``. Raises ConfigurationError for an invalid combination."""

    __slots__ = ("_document", "_acknowledged")

    def __init__(self, w: Union[int, str, None] = None, wtimeout: Optional[int] = None,
                 j: Optional[bool] = None, fsync: Optional[bool] = None) -> None:
        doc: dict[str, Any] = {}
        if wtimeout is not None:
            if isinstance(wtimeout, bool) or not isinstance(wtimeout, int) or wtimeout < 0:
                raise ConfigurationError(f"wtimeout must be a non-negative integer, not "
                                         f"{wtimeout!r}")
            doc["wtimeout"] = wtimeout
        for name, value in (("j", j), ("fsync", fsync)):
            if value is not None:
                if not isinstance(value, bool):
                    raise ConfigurationError(f"{name} must be True or False, not {value!r}")
                doc[name] = value
        if j and fsync:
            raise ConfigurationError("can't set both j and fsync at the same time")
        if w is not None:
            if isinstance(w, bool) or not isinstance(w, (int, str)) or (
                    isinstance(w, int) and w < 0):
                raise ConfigurationError(f"w must be a non-negative integer or a string, not "
                                         f"{w!r}")
            if w == 0 and (j or fsync):
                raise ConfigurationError("cannot set j or fsync with w=0: an unacknowledged "
                                         "write cannot be journaled")
            doc["w"] = w
        self._document = doc
        self._acknowledged = w != 0 or bool(j)

    @property
    def document(self) -> dict[str, Any]:
        """The ``writeConcern`` document (empty for the server's default)."""
        return dict(self._document)

    @property
    def acknowledged(self) -> bool:
        """False only for ``w=0`` (without j)."""
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
