"""ReadConcern (as ``pymongo.read_concern``): the isolation level of reads."""
from __future__ import annotations

from typing import Any, Optional


class ReadConcern:
    """``ReadConcern(level=None)``: "local", "majority", "linearizable", "available",
    "snapshot", or None for the server's default (nothing is sent)."""

    __slots__ = ("_level",)

    def __init__(self, level: Optional[str] = None) -> None:
        if level is not None and not isinstance(level, str):
            raise TypeError(f"level must be a string or None, not {level!r}")
        self._level = level

    @property
    def level(self) -> Optional[str]:
        """The level, or None."""
        return self._level

    @property
    def ok_for_legacy(self) -> bool:
        """Whether the level may be sent to a server that predates read concern (local or none)."""
        return self._level is None or self._level == "local"

    @property
    def document(self) -> dict[str, Any]:
        """The ``readConcern`` document (empty for the server's default)."""
        return {"level": self._level} if self._level is not None else {}

    def __repr__(self) -> str:
        return f"ReadConcern({self._level})" if self._level is not None else "ReadConcern()"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ReadConcern):
            return self._level == other._level
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._level)


DEFAULT_READ_CONCERN = ReadConcern()
