"""Result objects of write operations, with the fields PyMongo users expect. A result of an
unacknowledged write (w: 0) knows nothing of what the server did: its counts raise
InvalidOperation, as PyMongo's do."""
from typing import Any, List, Optional

from .errors import InvalidOperation
from .records import dataclass, field


def _acknowledged(result, what):
    if not result.acknowledged:
        raise InvalidOperation(f"{what} is not available for an unacknowledged write (w: 0): "
                               f"the server did not say what it did")


@dataclass(frozen=True)
class InsertOneResult:
    inserted_id: Any
    acknowledged: bool = True


@dataclass(frozen=True)
class InsertManyResult:
    inserted_ids: List[Any]
    acknowledged: bool = True


@dataclass(frozen=True)
class UpdateResult:
    raw_result: dict = field(repr=False)
    acknowledged: bool = True

    @property
    def matched_count(self):
        _acknowledged(self, "matched_count")
        return self.raw_result.get("n", 0) - len(self.raw_result.get("upserted", ()))

    @property
    def modified_count(self):
        _acknowledged(self, "modified_count")
        return self.raw_result.get("nModified", 0)

    @property
    def upserted_id(self) -> Optional[Any]:
        _acknowledged(self, "upserted_id")
        upserted = self.raw_result.get("upserted")
        return upserted[0]["_id"] if upserted else None


@dataclass(frozen=True)
class DeleteResult:
    raw_result: dict = field(repr=False)
    acknowledged: bool = True

    @property
    def deleted_count(self):
        _acknowledged(self, "deleted_count")
        return self.raw_result.get("n", 0)
