"""CommandCursor (as ``pymongo.command_cursor``): the cursor of a command that already ran,
its first batch in the reply. What it shares with find's cursor is server_cursor.py's: a
one-off find never makes this class.
"""
from __future__ import annotations

TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Any, Optional
    from singlemongo.collection import Collection
    from singlemongo.engine.request import Outcome

from singlemongo.base_object import _DocumentType, lazy_attributes
from singlemongo.server_cursor import _ServerCursor

# pymongo.command_cursor.RawBatchCommandCursor, loaded on first use.
__getattr__ = lazy_attributes(__name__, {"RawBatchCommandCursor": ".raw_batches"})


class CommandCursor(_ServerCursor[_DocumentType]):
    """The cursor of a command that already ran (aggregate, list_indexes, list_collections,
    list_databases): its first batch is here, getMore fetches the rest."""

    first_batch_size: Optional[int] = None  # the aggregate's cursor.batchSize, if fixed

    def __init__(self, collection: Collection[_DocumentType], outcome: Optional[Outcome],
                 batch_size: int = 0, comment: Any = None,
                 documents: Optional[list[Any]] = None,
                 max_await_time_ms: Optional[int] = None, session: Any = None) -> None:
        super().__init__(collection)
        self._explicit_session = session
        self.batch_size(batch_size or 0)
        self._comment = comment
        self._max_await_time_ms = max_await_time_ms
        if outcome is not None:
            self._live_within(outcome.deadline)
            self._take(outcome, "firstBatch")
        else:  # documents without a server cursor (listDatabases)
            self._id = 0
            self._buffer.extend(documents or ())
            self._retrieved = len(self._buffer)

    def batch_size(self, batch_size: int) -> CommandCursor[_DocumentType]:
        """The number of documents each getMore asks for (1 asks for 2, as PyMongo's: a
        legacy server closed a cursor whose batch was 1)."""
        if not isinstance(batch_size, int):
            raise TypeError(f"batch_size must be an integer, not {batch_size!r}")
        if batch_size < 0:
            raise ValueError("batch_size must be >= 0")
        self._batch_size = (batch_size == 1 and 2) or batch_size
        return self

    def __enter__(self) -> CommandCursor[_DocumentType]:
        return self

    def __repr__(self) -> str:
        return f"<CommandCursor on {self._collection.full_name}>"
