"""Result objects of write operations, with the fields PyMongo users expect."""
from .records import dataclass, field
from typing import Any, List, Optional


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
        return self.raw_result.get("n", 0) - len(self.raw_result.get("upserted", ()))

    @property
    def modified_count(self):
        return self.raw_result.get("nModified", 0)

    @property
    def upserted_id(self) -> Optional[Any]:
        upserted = self.raw_result.get("upserted")
        return upserted[0]["_id"] if upserted else None


@dataclass(frozen=True)
class DeleteResult:
    raw_result: dict = field(repr=False)
    acknowledged: bool = True

    @property
    def deleted_count(self):
        return self.raw_result.get("n", 0)
