"""A collection's reads (as ``pymongo.collection``): find and find_one; the counts, distinct,
aggregate and raw batches are ``collection_queries.py``'s, loaded at their first use. A read
uses the read preference of the call, else of the collection, database or client (server
selection spec)."""
from __future__ import annotations

from collections.abc import Mapping
TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Any, Optional

from singlemongo.base_object import Generic, _DocumentType
from singlemongo.cursor import Cursor

if TYPE_CHECKING:
    from bson.codec_options import CodecOptions

    from singlemongo.collection import Collection


class ReadMethods(Generic[_DocumentType]):
    """The read half of Collection (a mixin: Collection is the class users see)."""

    def _as_collection(self) -> Collection[_DocumentType]:
        # ReadMethods only lives in a Collection (no cast(): a call per operation)
        return self  # type: ignore[return-value]

    if TYPE_CHECKING:  # what Collection gives the methods below
        _name: str
        _codec_options: CodecOptions[Any]

    def find(self, filter: Optional[Mapping[str, Any]] = None, projection: Any = None,
             skip: int = 0, limit: int = 0, no_cursor_timeout: bool = False,
             cursor_type: int = 0, sort: Any = None, allow_partial_results: bool = False,
             oplog_replay: bool = False, batch_size: int = 0, collation: Any = None,
             hint: Any = None, max_scan: Optional[int] = None,
             max_time_ms: Optional[int] = None, max: Any = None, min: Any = None,
             return_key: Optional[bool] = None, show_record_id: Optional[bool] = None,
             snapshot: Optional[bool] = None, comment: Any = None, session: Any = None,
             allow_disk_use: Optional[bool] = None, let: Optional[Mapping[str, Any]] = None,
             *, read_preference: Any = None) -> Cursor[_DocumentType]:
        """A Cursor over the documents matching ``filter`` (PyMongo's arguments, in its
        positional order). Nothing is sent until it is read. ``read_preference`` is
        singlemongo's extension: a read preference for this query only."""
        return Cursor(self._as_collection(), filter, projection, skip, limit, no_cursor_timeout, cursor_type,
                      sort, allow_partial_results, oplog_replay, batch_size, collation, hint,
                      max_scan, max_time_ms, max, min, return_key, show_record_id, snapshot,
                      comment, session, allow_disk_use, let, read_preference=read_preference)

    def find_one(self, filter: Any = None, projection: Any = None, skip: int = 0,
                 limit: int = 0, no_cursor_timeout: bool = False, cursor_type: int = 0,
                 sort: Any = None, allow_partial_results: bool = False,
                 oplog_replay: bool = False, batch_size: int = 0, collation: Any = None,
                 hint: Any = None, max_scan: Optional[int] = None,
                 max_time_ms: Optional[int] = None, max: Any = None, min: Any = None,
                 return_key: Optional[bool] = None, show_record_id: Optional[bool] = None,
                 snapshot: Optional[bool] = None, comment: Any = None, session: Any = None,
                 allow_disk_use: Optional[bool] = None,
                 let: Optional[Mapping[str, Any]] = None, *,
                 read_preference: Any = None) -> Optional[_DocumentType]:
        """The first matching document, or None (find's arguments; ``limit`` is ignored). A
        ``filter`` that is not a mapping is an ``_id``."""
        if filter is not None and type(filter) is not dict and not isinstance(filter, Mapping):
            filter = {"_id": filter}
        cursor = self.find(filter, projection, skip, limit, no_cursor_timeout, cursor_type,
                           sort, allow_partial_results, oplog_replay, batch_size, collation,
                           hint, max_scan, max_time_ms, max, min, return_key, show_record_id,
                           snapshot, comment, session, allow_disk_use, let,
                           read_preference=read_preference)
        for doc in cursor.limit(-1):
            return doc
        return None
