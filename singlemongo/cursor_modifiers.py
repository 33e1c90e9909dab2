"""A find cursor's modifiers (as ``pymongo.cursor``): the chaining methods but ``limit``
(``sort``, ``skip``, ``hint``, ...), and ``clone``, ``rewind``, ``distinct``, ``explain``. A
mixin of ``Cursor`` loaded at the first use of one of its names: a one-off ``find_one`` uses
none of them (cursor.py)."""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Optional, Union

from bson.code import Code

from singlemongo.arguments import (hint_value, index_document, index_list, validate_boolean,
                        validate_collation, validate_non_negative_int)
from singlemongo.base_object import Generic, _DocumentType
from singlemongo.server_cursor import _ServerCursor
from singlemongo.cursor import _int
from singlemongo.replies import check

if TYPE_CHECKING:
    from singlemongo.cursor import Cursor


def _bound(cursor: Cursor[Any], spec: Any) -> dict[str, Any]:
    """min()'s or max()'s index bound, once the cursor may still be changed. As PyMongo's:
    (key, value) pairs in the index's order, never a dict."""
    if not isinstance(spec, (list, tuple)):
        raise TypeError(f"spec must be an instance of list or tuple, not {type(spec)}")
    cursor._check_okay_to_chain()
    return index_document(index_list(spec))


class CursorModifiers(Generic[_DocumentType]):
    """What a Cursor offers beyond reading and ``limit``."""

    def _as_cursor(self) -> Cursor[_DocumentType]:
        # CursorModifiers only lives in a Cursor (no cast(): a call)
        return self  # type: ignore[return-value]

    def sort(self, key_or_list: Any, direction: Optional[Union[int, str]] = None
             ) -> Cursor[_DocumentType]:
        """Order the results: ``sort("a")``, ``sort("a", -1)`` or ``sort([("a", 1), ...])``."""
        cursor = self._as_cursor()
        cursor._check_okay_to_chain()
        cursor._ordering = index_document(index_list(key_or_list, direction))
        return cursor

    def skip(self, skip: int) -> Cursor[_DocumentType]:
        """Skip the first ``skip`` results."""
        cursor = self._as_cursor()
        cursor._check_okay_to_chain()
        cursor._skip = validate_non_negative_int("skip", skip)
        return cursor

    def batch_size(self, batch_size: int) -> Cursor[_DocumentType]:
        """The number of documents per batch (0: the server's default)."""
        cursor = self._as_cursor()
        cursor._check_okay_to_chain()
        cursor._batch_size = validate_non_negative_int("batch_size", batch_size)
        return cursor

    def max_time_ms(self, max_time_ms: Optional[int]) -> Cursor[_DocumentType]:
        """A time limit for the query on the server (maxTimeMS)."""
        cursor = self._as_cursor()
        if max_time_ms is not None:
            _int("max_time_ms", max_time_ms)
        cursor._check_okay_to_chain()
        cursor._max_time_ms = max_time_ms
        return cursor

    def max_scan(self, max_scan: Optional[int]) -> Cursor[_DocumentType]:
        """Deprecated (MongoDB 4.0): the most documents to scan; use max_time_ms instead."""
        cursor = self._as_cursor()
        cursor._check_okay_to_chain()
        cursor._max_scan = max_scan
        return cursor

    def max_await_time_ms(self, max_await_time_ms: Optional[int]) -> Cursor[_DocumentType]:
        """How long a tailable, awaitData cursor's getMore waits for new documents."""
        cursor = self._as_cursor()
        if max_await_time_ms is not None:
            _int("max_await_time_ms", max_await_time_ms)
        cursor._check_okay_to_chain()
        if cursor._flags & 34 == 34:
            cursor._max_await_time_ms = max_await_time_ms
        return cursor

    def hint(self, index: Any) -> Cursor[_DocumentType]:
        """Use an index: its name, or its key specification (None: no hint)."""
        cursor = self._as_cursor()
        cursor._check_okay_to_chain()
        cursor._hint = hint_value(index)
        return cursor

    def collation(self, collation: Any) -> Cursor[_DocumentType]:
        """A Collation (or document) for the query."""
        cursor = self._as_cursor()
        cursor._check_okay_to_chain()
        cursor._collation = validate_collation(collation)
        return cursor

    def comment(self, comment: Any) -> Cursor[_DocumentType]:
        """A comment for the server's logs and profiler (sent with getMore too)."""
        cursor = self._as_cursor()
        cursor._check_okay_to_chain()
        cursor._comment = comment
        return cursor

    def where(self, code: Union[str, Code]) -> Cursor[_DocumentType]:
        """Add a ``$where`` JavaScript clause to the filter."""
        cursor = self._as_cursor()
        cursor._check_okay_to_chain()
        if not isinstance(code, Code):
            code = Code(code)
        target = cursor._spec["$query"] if "$query" in cursor._spec else cursor._spec
        target["$where"] = code
        return cursor

    def allow_disk_use(self, allow_disk_use: bool) -> Cursor[_DocumentType]:
        """Let a large sort write temporary files on the server."""
        cursor = self._as_cursor()
        validate_boolean("allow_disk_use", allow_disk_use)
        cursor._check_okay_to_chain()
        cursor._allow_disk_use = allow_disk_use
        return cursor

    def max(self, spec: Any) -> Cursor[_DocumentType]:
        """The exclusive upper bound of the index keys scanned (needs a hint): a list or
        tuple of (key, value) pairs."""
        cursor = self._as_cursor()
        cursor._max = _bound(cursor, spec)
        return cursor

    def min(self, spec: Any) -> Cursor[_DocumentType]:
        """The inclusive lower bound of the index keys scanned (needs a hint): a list or
        tuple of (key, value) pairs."""
        cursor = self._as_cursor()
        cursor._min = _bound(cursor, spec)
        return cursor

    def add_option(self, mask: int) -> Cursor[_DocumentType]:
        """Set cursor flags (2 tailable, 8 oplogReplay, 16 noCursorTimeout, 32 awaitData,
        128 allowPartialResults)."""
        cursor = self._as_cursor()
        cursor._check_okay_to_chain()
        cursor._flags |= _int("mask", mask)
        cursor._check_exhaust()
        return cursor

    def remove_option(self, mask: int) -> Cursor[_DocumentType]:
        """Clear cursor flags."""
        cursor = self._as_cursor()
        cursor._check_okay_to_chain()
        cursor._flags &= ~_int("mask", mask)
        return cursor

    def clone(self) -> Cursor[_DocumentType]:
        """A new, unstarted cursor with the same options."""
        cursor = self._as_cursor()
        other = copy.copy(cursor)
        _ServerCursor.__init__(other, cursor._collection)
        other._spec = copy.deepcopy(cursor._spec)
        return other

    def rewind(self) -> Cursor[_DocumentType]:
        """Close the server cursor and start over at the next ``next()``."""
        cursor = self._as_cursor()
        cursor.close()
        limit = cursor._limit
        _ServerCursor.__init__(cursor, cursor._collection)
        cursor._limit = limit
        return cursor

    def distinct(self, key: str) -> list[Any]:
        """The distinct values of ``key`` among the documents this cursor's filter matches."""
        cursor = self._as_cursor()
        if not isinstance(key, str):
            raise TypeError(f"key must be an instance of str, not {type(key).__name__}")
        cmd: dict[str, Any] = {"distinct": cursor._collection.name, "key": key,
                               "query": cursor._spec.get("$query", cursor._spec)}
        if cursor._max_time_ms is not None:
            cmd["maxTimeMS"] = cursor._max_time_ms
        if cursor._comment is not None:
            cmd["comment"] = cursor._comment
        if cursor._collation:
            cmd["collation"] = cursor._collation
        reply = cursor._collection._read_command(cmd, cursor._read_preference)
        return list(check("distinct", reply, "distinct")["values"])

    def explain(self) -> _DocumentType:
        """The server's explanation of how it would run this query."""
        return self._as_cursor()._explain(None)  # type: ignore[no-any-return]

    def _explain(self, codec: Any) -> Any:
        cursor = self._as_cursor()
        cmd = cursor._command()
        if cursor._limit:
            cmd["limit"] = abs(cursor._limit)
            cmd["singleBatch"] = True
        return cursor._collection._read_command({"explain": cmd}, cursor._read_preference,
                                                codec=codec)

    @property
    def session(self) -> Any:
        """The explicit session this cursor was created with, or None."""
        return self._as_cursor()._explicit_session
