"""The cursor of ``find`` (as ``pymongo.cursor``): chain ``sort``, ``skip``, ``limit``,
``batch_size``, ``hint``, ... before the first document is read (the modifiers but ``limit``
are cursor_modifiers.py's, loaded at first use); the find command runs then, and getMore
fetches the rest from the same server and connection."""
from __future__ import annotations

from collections.abc import Mapping
TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Any, Optional, Union

from singlemongo.server_cursor import BATCH_FIELDS, _ServerCursor
from singlemongo.base_object import _DocumentType, deferred_mixin, lazy_attributes
from singlemongo.arguments import (hint_value, index_document, index_list, validate_boolean,
                        validate_collation, validate_is_document_type, validate_is_mapping,
                        validate_non_negative_int)
from singlemongo.engine.operation import execute
from singlemongo.engine.request import Request
from singlemongo.errors import InvalidOperation
from singlemongo.sdam.server_description import ServerType
from singlemongo.selection import Criteria

if TYPE_CHECKING:
    from singlemongo.collection import Collection
    from singlemongo.cursor_modifiers import CursorModifiers
else:
    # Loaded at their first use: a one-off find_one uses none of them.
    CursorModifiers = deferred_mixin(".cursor_modifiers", "CursorModifiers", (
        "_as_cursor", "sort", "skip", "batch_size", "max_time_ms", "max_scan",
        "max_await_time_ms", "hint", "collation", "comment", "where", "allow_disk_use", "max",
        "min", "add_option", "remove_option", "clone", "rewind", "distinct", "explain",
        "_explain", "session"))

# pymongo.cursor.RawBatchCursor (find_raw_batches' cursor), loaded on first use.
__getattr__ = lazy_attributes(__name__, {"RawBatchCursor": ".raw_batches"})


class CursorType:
    """The kinds of find cursors (as ``pymongo.CursorType``)."""
    NON_TAILABLE = 0
    TAILABLE = 2
    TAILABLE_AWAIT = 2 | 32
    EXHAUST = 64


MONGOS_EXHAUST_WIRE_VERSION = 22  # mongos streams exhaust getMores from MongoDB 7.1
# Cursor flags and the find command fields they become.
_FLAGS = {2: "tailable", 8: "oplogReplay", 16: "noCursorTimeout", 32: "awaitData",
          128: "allowPartialResults"}
# Legacy query modifiers and the find command fields they stand for (PyMongo's unwrapping).
LEGACY_MODIFIERS = {"$query": "filter", "$orderby": "sort", "$hint": "hint",
                    "$comment": "comment", "$maxScan": "maxScan", "$maxTimeMS": "maxTimeMS",
                    "$max": "max", "$min": "min", "$returnKey": "returnKey",
                    "$showRecordId": "showRecordId", "$showDiskLoc": "showRecordId",
                    "$snapshot": "snapshot"}


def projection_document(projection: Any) -> Optional[dict[str, Any]]:
    """A projection document from a document or a list of field names. A string is refused
    (PyMongo takes it as a list of one-letter field names: "name" projects n, a, m, e)."""
    if projection is None:
        return None
    if isinstance(projection, Mapping):
        return dict(projection)
    if isinstance(projection, str):
        raise TypeError(f"projection must be a mapping or list of key names, not the string "
                        f"{projection!r} (write [{projection!r}] for that one field)")
    if isinstance(projection, (list, tuple, set, frozenset)):
        if not all(isinstance(f, str) for f in projection):
            raise TypeError("projection must be a list of key names, each an instance of str")
        return {name: 1 for name in projection}
    raise TypeError(f"projection must be a mapping or list of key names, not "
                    f"{type(projection).__name__}")


def _int(option: str, value: Any) -> int:
    # As PyMongo: any int, a bool included (limit=False is no limit).
    if not isinstance(value, int):
        raise TypeError(f"{option} must be an integer, not {value!r}")
    return value


class Cursor(_ServerCursor[_DocumentType], CursorModifiers[_DocumentType]):
    """A find cursor. Every chaining method returns the cursor and raises InvalidOperation
    once the query has run ("cannot set options after executing query")."""

    _one_refresh_per_next = True  # as PyMongo's Cursor.next()

    def __init__(self, collection: Collection[_DocumentType],
                 filter: Optional[Mapping[str, Any]] = None, projection: Any = None,
                 skip: int = 0, limit: int = 0, no_cursor_timeout: bool = False,
                 cursor_type: int = CursorType.NON_TAILABLE, sort: Any = None,
                 allow_partial_results: bool = False, oplog_replay: bool = False,
                 batch_size: int = 0, collation: Any = None, hint: Any = None,
                 max_scan: Optional[int] = None, max_time_ms: Optional[int] = None,
                 max: Any = None, min: Any = None, return_key: Optional[bool] = None,
                 show_record_id: Optional[bool] = None, snapshot: Optional[bool] = None,
                 comment: Any = None, session: Any = None, allow_disk_use: Optional[bool] = None,
                 let: Optional[Mapping[str, Any]] = None, read_preference: Any = None) -> None:
        super().__init__(collection)
        spec = {} if filter is None else filter
        validate_is_mapping("filter", spec)
        if let is not None:
            validate_is_document_type("let", let)
        self._spec: dict[str, Any] = dict(spec)
        self._projection = projection_document(projection)
        self._skip = validate_non_negative_int("skip", skip)
        self._limit = _int("limit", limit)
        self._batch_size = validate_non_negative_int("batch_size", batch_size)
        self._flags = cursor_type
        if cursor_type not in (0, 2, 34, 64):
            raise ValueError(f"not a valid value for cursor_type: {cursor_type!r}")
        self._iteration = bool(cursor_type & CursorType.TAILABLE)
        for flag, name, wanted in ((16, "no_cursor_timeout", no_cursor_timeout),
                                   (128, "allow_partial_results", allow_partial_results),
                                   (8, "oplog_replay", oplog_replay)):
            if validate_boolean(name, wanted):
                self._flags |= flag
        # find(sort=...) takes a mapping or (key, direction) pairs, as PyMongo's (not "a"); an
        # empty or falsy one (sort=[], an ODM's default) is no sort there, so here too.
        self._ordering = index_document(sort) if sort else None
        self._collation = validate_collation(collation)
        self._hint = hint_value(hint)
        self._max_scan, self._max_time_ms = max_scan, max_time_ms
        self._max = index_document(index_list(max)) if max is not None else None
        self._min = index_document(index_list(min)) if min is not None else None
        self._return_key, self._show_record_id = return_key, show_record_id
        self._snapshot, self._comment, self._let = snapshot, comment, let
        self._allow_disk_use = allow_disk_use
        self._explicit_session = session
        self._read_preference = read_preference
        self._empty = False
        self._check_exhaust()

    @property
    def _exhaust(self) -> bool:  # type: ignore[override]
        return bool(self._flags & CursorType.EXHAUST)

    def _check_exhaust(self) -> None:
        if self._exhaust and self._limit:
            raise InvalidOperation("Can't use limit and exhaust together.")

    def __repr__(self) -> str:
        return f"<Cursor on {self._collection.full_name}>"

    def __enter__(self) -> Cursor[_DocumentType]:
        return self

    # ----- chaining --------------------------------------------------------------------------

    def _check_okay_to_chain(self) -> None:
        if self._id is not None:
            raise InvalidOperation("cannot set options after executing query")

    def limit(self, limit: int) -> Cursor[_DocumentType]:
        """Return at most ``limit`` results (a negative limit: in one batch; 0: no limit)."""
        self._check_okay_to_chain()
        if self._exhaust:
            raise InvalidOperation("Can't use limit and exhaust together.")
        self._limit = _int("limit", limit)
        self._empty = False
        return self

    # ----- running ---------------------------------------------------------------------------

    def _command(self) -> dict[str, Any]:
        """The find command (CRUD spec, "Find"), as PyMongo builds it."""
        if (self._min or self._max) and not self._hint:  # the server would choose the index
            raise InvalidOperation("min() and max() need hint(): name the index whose bounds "
                                   "they are, as in .hint([('a', 1)]).min([('a', 5)])")
        name = self._collection.name
        cmd: dict[str, Any] = {"find": name}
        if "$query" in self._spec:  # a legacy query with modifiers, unwrapped as PyMongo does
            cmd.update((LEGACY_MODIFIERS.get(k, k), v) for k, v in self._spec.items()
                       if k not in ("$explain", "$readPreference"))
        else:
            cmd["filter"] = self._spec
        optional = (("sort", self._ordering), ("hint", self._hint), ("let", self._let),
                    ("comment", self._comment), ("maxScan", self._max_scan),
                    ("max", self._max), ("min", self._min))
        cmd.update((k, v) for k, v in optional if v)
        for key, value in (("maxTimeMS", self._max_time_ms), ("returnKey", self._return_key),
                           ("showRecordId", self._show_record_id),
                           ("snapshot", self._snapshot)):
            if value is not None:
                cmd[key] = value
        if self._projection:
            cmd["projection"] = self._projection
        if self._skip:
            cmd["skip"] = self._skip
        if self._limit:
            cmd["limit"] = abs(self._limit)
            if self._limit < 0:
                cmd["singleBatch"] = True
        if self._batch_size:  # one more than the limit spares a killCursors
            # As given otherwise, as PyMongo sends it (batch_size(True) is sent as true).
            cmd["batchSize"] = self._batch_size + 1 if self._limit == self._batch_size \
                else self._batch_size
        read_concern = self._collection._read_concern_document()
        if read_concern is not None:
            cmd["readConcern"] = read_concern
        if self._collation:
            cmd["collation"] = self._collation
        if self._allow_disk_use is not None:
            cmd["allowDiskUse"] = self._allow_disk_use
        cmd.update((field, True) for bit, field in _FLAGS.items() if self._flags & bit)
        return cmd

    def _criteria(self) -> Criteria:
        return self._collection._read_criteria(self._read_preference)

    def _start(self) -> None:
        if self._empty:
            self._id = 0
            return

        if self._max_await_time_ms is not None:
            from singlemongo.csot import check_max_await
            check_max_await(self._topology, self._max_await_time_ms)
        outcome = execute(self._topology, Request(
            self._collection.database.name, self._command(), self._criteria(), True, "read",
            keep_session=True, codec=self._collection.codec_options, user_fields=BATCH_FIELDS,
            explicit_session=self._explicit_session,
            send_max_time=self._flags & 34 != CursorType.TAILABLE))
        self._take(outcome, "firstBatch")
        if self._limit < 0:
            self._limit = -self._limit
        sd = outcome.server
        if self._exhaust and sd.server_type is ServerType.MONGOS and (
                sd.max_wire_version or 0) < MONGOS_EXHAUST_WIRE_VERSION:
            self.close()
            raise InvalidOperation("Exhaust cursors require MongoDB 7.1+ when connected to "
                                   "mongos.")

    # ----- PyMongo's other cursor methods ----------------------------------------------------

    def __deepcopy__(self, memo: Any) -> Cursor[_DocumentType]:
        """``copy.deepcopy(cursor)`` is an unstarted clone, its filter deep-copied (as PyMongo:
        the client, sessions and sockets are shared, never copied)."""
        return self.clone()

    def __getitem__(self, index: Union[int, slice]) -> Any:
        """``cursor[i]``: the document at that position (a query with skip and limit -1);
        ``cursor[a:b]``: this cursor with skip ``a`` and limit ``b - a``."""
        self._check_okay_to_chain()
        if isinstance(index, slice):
            if index.step is not None:
                raise IndexError("Cursor instances do not support slice steps")
            skip = index.start or 0
            if skip < 0 or (index.stop is not None and index.stop < 0):
                raise IndexError("Cursor instances do not support negative indices")
            limit = 0  # as PyMongo: a slice sets both bounds ([a:] has none), whatever before
            if index.stop is not None:
                limit = index.stop - skip
                if limit < 0:
                    raise IndexError(f"stop index must be greater than start index for "
                                     f"slice {index!r}")
            self._empty = index.stop is not None and limit == 0
            self._limit = limit
            self._skip = skip
            return self
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError(f"index {index!r} cannot be applied to Cursor instances")
        if index < 0:
            raise IndexError("Cursor instances do not support negative indices")
        clone = self.clone()
        clone.skip(index + self._skip)
        clone.limit(-1)
        for doc in clone:
            return doc
        raise IndexError("no such item for Cursor instance")
