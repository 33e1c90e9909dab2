"""Read preferences (server selection spec, "Read Preference")."""
from ..records import dataclass, field
from typing import Optional, Tuple

from ..errors import ConfigurationError
from ..options.table import READ_PREFERENCE_MODES

_MODES_BY_LOWER = {m.lower(): m for m in READ_PREFERENCE_MODES}


@dataclass(frozen=True)
class ReadPreference:
    mode: str = "primary"
    tag_sets: Tuple[dict, ...] = field(default=({},))
    max_staleness_seconds: Optional[int] = None
    hedge: Optional[dict] = None

    def __post_init__(self):
        mode = _MODES_BY_LOWER.get(str(self.mode).lower())
        if mode is None:
            raise ConfigurationError(
                f"invalid read preference mode {self.mode!r}: expected one of "
                f"{', '.join(READ_PREFERENCE_MODES)}")
        object.__setattr__(self, "mode", mode)
        tags = tuple(dict(t) for t in (self.tag_sets if self.tag_sets is not None else ({},)))
        object.__setattr__(self, "tag_sets", tags)
        staleness = self.max_staleness_seconds
        if staleness is not None and staleness == -1:
            object.__setattr__(self, "max_staleness_seconds", None)
        elif staleness is not None and (isinstance(staleness, bool) or not isinstance(
                staleness, int) or staleness <= 0):
            raise ConfigurationError(
                f"invalid maxStalenessSeconds {staleness!r}: expected a positive integer or -1")
        if mode == "primary":
            if any(tags):
                raise ConfigurationError(
                    f"read preference mode 'primary' cannot be combined with tag sets {list(tags)}")
            if self.max_staleness_seconds is not None:
                raise ConfigurationError(
                    "read preference mode 'primary' cannot be combined with maxStalenessSeconds "
                    f"{self.max_staleness_seconds}")
            if self.hedge is not None:
                raise ConfigurationError("read preference mode 'primary' cannot be hedged")

    @classmethod
    def from_document(cls, doc):
        """From a ``{mode, tag_sets | tags, maxStalenessSeconds, hedge}`` document."""
        if doc is None:
            return cls()
        tags = doc.get("tag_sets", doc.get("tags"))
        return cls(doc.get("mode", "primary"), tuple(tags) if tags is not None else ({},),
                   doc.get("maxStalenessSeconds"), doc.get("hedge"))

    @property
    def is_primary(self):
        return self.mode == "primary"

    def document(self):
        """The ``$readPreference`` document ("Document structure")."""
        doc = {"mode": self.mode}
        if any(self.tag_sets):
            doc["tags"] = [dict(t) for t in self.tag_sets]
        if self.max_staleness_seconds is not None:
            doc["maxStalenessSeconds"] = self.max_staleness_seconds
        if self.hedge is not None:
            doc["hedge"] = dict(self.hedge)
        return doc

    def needs_document_for_op_query(self):
        """OP_QUERY to mongos: secondaryPreferred with only a mode travels as the flag alone."""
        if self.mode == "primary":
            return False
        if self.mode == "secondaryPreferred":
            return any(self.tag_sets) or self.max_staleness_seconds is not None or bool(self.hedge)
        return True

    def __str__(self):
        parts = [self.mode]
        if any(self.tag_sets):
            parts.append(f"tag sets {list(self.tag_sets)}")
        if self.max_staleness_seconds is not None:
            parts.append(f"maxStalenessSeconds {self.max_staleness_seconds}")
        if self.hedge is not None:
            parts.append(f"hedge {dict(self.hedge)}")
        return ", ".join(parts)


PRIMARY = ReadPreference()
