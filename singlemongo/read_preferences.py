"""Read preferences as PyMongo spells them (``pymongo.read_preferences``): ``ReadPreference.
SECONDARY``, ``Secondary(tag_sets=[{"dc": "ny"}], max_staleness=120)``, ...

Each is a view of the core's frozen ``selection.ReadPreference`` record,
which server selection uses; strings ("secondaryPreferred") are accepted wherever a read
preference is.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence, Union

from singlemongo.errors import ConfigurationError
from singlemongo.selection import ReadPreference as _Core

_MONGOS_MODES = ("primary", "primaryPreferred", "secondary", "secondaryPreferred", "nearest")
_MODES = ("PRIMARY", "PRIMARY_PREFERRED", "SECONDARY", "SECONDARY_PREFERRED", "NEAREST")
_TagSets = Optional[Sequence[Mapping[str, Any]]]
# PyMongo 4.12's words: hedged reads are deprecated in MongoDB 8.0.
_HEDGE_DEPRECATED = ("The read preference 'hedge' option is deprecated in PyMongo 4.12+ because "
                     "hedged reads are deprecated in MongoDB version 8.0+. Support for 'hedge' "
                     "will be removed in PyMongo 5.0.")


class _ServerMode:
    """A read preference: ``mode`` (0 to 4), ``mongos_mode``, ``document``, ``tag_sets``,
    ``max_staleness`` (-1: none) and ``hedge``."""

    __slots__ = ("_core",)
    _mode: int = 0

    def __init__(self, tag_sets: _TagSets = None, max_staleness: int = -1,
                 hedge: Optional[Mapping[str, Any]] = None) -> None:
        if tag_sets is not None and (isinstance(tag_sets, (str, Mapping)) or not all(
                isinstance(t, Mapping) for t in tag_sets)):
            raise TypeError(f"tag_sets must be a list of documents, not {tag_sets!r}")
        if tag_sets is not None and not list(tag_sets):  # PyMongo: [{}] is "any member"
            raise ValueError("tag_sets may not be empty (use [{}] for any member)")
        if isinstance(max_staleness, bool) or not isinstance(max_staleness, int):
            raise TypeError(f"max_staleness must be an integer, not {max_staleness!r}")
        if max_staleness == 0 or max_staleness < -1:
            raise ValueError(f"max_staleness must be -1 or a positive integer, not "
                             f"{max_staleness}")
        if hedge is not None and not isinstance(hedge, Mapping):
            raise TypeError(f"hedge must be a document, not {hedge!r}")
        if hedge is not None:
            import warnings
            warnings.warn(_HEDGE_DEPRECATED, DeprecationWarning, stacklevel=2)
        self._core = _Core(_MONGOS_MODES[self._mode],
                           tuple(dict(t) for t in tag_sets) if tag_sets else ({},),
                           None if max_staleness == -1 else max_staleness,
                           dict(hedge) if hedge is not None else None)

    @property
    def name(self) -> str:
        return type(self).__name__

    @property
    def mode(self) -> int:
        return self._mode

    @property
    def mongos_mode(self) -> str:
        return _MONGOS_MODES[self._mode]

    @property
    def document(self) -> dict[str, Any]:
        """The ``$readPreference`` document."""
        return self._core.document()

    @property
    def tag_sets(self) -> list[dict[str, Any]]:
        return [dict(t) for t in self._core.tag_sets]

    @property
    def max_staleness(self) -> int:
        staleness = self._core.max_staleness_seconds
        return -1 if staleness is None else staleness

    @property
    def hedge(self) -> Optional[dict[str, Any]]:
        return dict(self._core.hedge) if self._core.hedge is not None else None

    @property
    def min_wire_version(self) -> int:
        return 5 if self._core.max_staleness_seconds is not None else 0

    def __repr__(self) -> str:
        if self._mode == 0:
            return "Primary()"
        tags = self.tag_sets if any(self._core.tag_sets) else None
        return (f"{self.name}(tag_sets={tags!r}, max_staleness={self.max_staleness!r}, "
                f"hedge={self.hedge!r})")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _ServerMode):
            return self._core == other._core
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self._mode, repr(self._core)))


class Primary(_ServerMode):
    """Read from the primary only."""
    __slots__ = ()
    _mode = 0

    def __init__(self) -> None:
        super().__init__()


class PrimaryPreferred(_ServerMode):
    """The primary if there is one, else a secondary matching the tag sets."""
    __slots__ = ()
    _mode = 1


class Secondary(_ServerMode):
    """A secondary matching the tag sets."""
    __slots__ = ()
    _mode = 2


class SecondaryPreferred(_ServerMode):
    """A secondary matching the tag sets if there is one, else the primary."""
    __slots__ = ()
    _mode = 3


class Nearest(_ServerMode):
    """Any member within the latency window, matching the tag sets."""
    __slots__ = ()
    _mode = 4


_CLASSES = (Primary, PrimaryPreferred, Secondary, SecondaryPreferred, Nearest)


class ReadPreference:
    """The five modes without tag sets: ``ReadPreference.PRIMARY`` ... ``ReadPreference.NEAREST``."""
    PRIMARY = Primary()
    PRIMARY_PREFERRED = PrimaryPreferred()
    SECONDARY = Secondary()
    SECONDARY_PREFERRED = SecondaryPreferred()
    NEAREST = Nearest()


def from_core(core: _Core) -> _ServerMode:
    """The PyMongo-style object for a core read preference."""
    mode = _MONGOS_MODES.index(core.mode)
    if mode == 0:
        return ReadPreference.PRIMARY
    view = _CLASSES[mode].__new__(_CLASSES[mode])
    view._core = core
    return view


def to_core(value: Union[_ServerMode, _Core, str, Mapping[str, Any], None]) -> Optional[_Core]:
    """The core read preference for anything a user may pass (None stays None)."""
    if value is None or isinstance(value, _Core):
        return value
    if isinstance(value, _ServerMode):
        return value._core
    if isinstance(value, str):
        return _Core(value)
    if isinstance(value, Mapping):
        return _Core.from_document(value)
    raise ConfigurationError(f"read_preference must be a ReadPreference mode, a mode name or "
                             f"a document, not {value!r}")


_ServerModeType = _ServerMode


def make_read_preference(mode: int, tag_sets: _TagSets, max_staleness: int = -1
                         ) -> _ServerMode:
    """The read preference of mode number ``mode`` (0 primary ... 4 nearest), as PyMongo's."""
    if mode == 0:
        if tag_sets not in (None, [{}]):
            raise ConfigurationError("Read preference primary cannot be combined with tags")
        if max_staleness != -1:
            raise ConfigurationError("Read preference primary cannot be combined with "
                                     "maxStalenessSeconds")
        return Primary()
    return _CLASSES[mode](tag_sets, max_staleness)  # type: ignore[call-arg]


def read_pref_mode_from_name(name: str) -> int:
    """The mode number of a read preference name ("secondaryPreferred": 3)."""
    return _MONGOS_MODES.index(name)
