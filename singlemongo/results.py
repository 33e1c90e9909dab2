"""Result objects of write operations (as ``pymongo.results``). A result of an unacknowledged
write (w: 0) knows nothing of what the server did: its counts raise InvalidOperation."""
from __future__ import annotations

from typing import Any, Mapping, Optional

from singlemongo.errors import InvalidOperation


class _WriteResult:
    """Base of the results: ``acknowledged`` says whether the server answered."""

    __slots__ = ("_acknowledged",)

    def __init__(self, acknowledged: bool) -> None:
        self._acknowledged = acknowledged

    def _raise_if_unacknowledged(self, name: str) -> None:
        if not self._acknowledged:
            raise InvalidOperation(
                f"A value for {name} is not available when the write is unacknowledged. "
                f"Check the acknowledged attribute to avoid this error (w: 0: the server did "
                f"not say what it did).")

    @property
    def acknowledged(self) -> bool:
        """False for a write sent with w: 0."""
        return self._acknowledged

    def __repr__(self) -> str:
        # PyMongo's: the constructor's first argument, then acknowledged.
        fields = [repr(v) for v in self._fields().values()]
        if not fields:
            return f"{type(self).__name__}({self._acknowledged})"
        return f"{type(self).__name__}({', '.join(fields)}, acknowledged={self._acknowledged})"

    def _fields(self) -> dict[str, Any]:
        return {}


class InsertOneResult(_WriteResult):
    """The result of insert_one: ``inserted_id``."""

    __slots__ = ("_inserted_id",)

    def __init__(self, inserted_id: Any, acknowledged: bool) -> None:
        self._inserted_id = inserted_id
        super().__init__(acknowledged)

    @property
    def inserted_id(self) -> Any:
        """The _id of the inserted document (known even when unacknowledged)."""
        return self._inserted_id

    def _fields(self) -> dict[str, Any]:
        return {"inserted_id": self._inserted_id}


class InsertManyResult(_WriteResult):
    """The result of insert_many: ``inserted_ids`` in the order given."""

    __slots__ = ("_inserted_ids",)

    def __init__(self, inserted_ids: list[Any], acknowledged: bool) -> None:
        self._inserted_ids = inserted_ids
        super().__init__(acknowledged)

    @property
    def inserted_ids(self) -> list[Any]:
        """The _ids of the documents inserted (RawBSONDocuments left out, as PyMongo)."""
        return self._inserted_ids

    def _fields(self) -> dict[str, Any]:
        return {"inserted_ids": self._inserted_ids}


class _RawResult(_WriteResult):
    """A result that keeps the server's reply (``raw_result``)."""

    __slots__ = ("_raw_result",)

    def __init__(self, raw_result: Optional[Mapping[str, Any]], acknowledged: bool) -> None:
        self._raw_result = raw_result
        super().__init__(acknowledged)

    @property
    def raw_result(self) -> Optional[Mapping[str, Any]]:
        """The server's reply, shaped as PyMongo's (None when unacknowledged)."""
        return self._raw_result

    def _fields(self) -> dict[str, Any]:
        return {"raw_result": self._raw_result}


class UpdateResult(_RawResult):
    """The result of update_one, update_many and replace_one; ``raw_result`` is the server's
    reply with ``updatedExisting`` and ``upserted`` as PyMongo shapes them."""

    __slots__ = ()

    @property
    def matched_count(self) -> int:
        """How many documents matched; InvalidOperation when unacknowledged."""
        self._raise_if_unacknowledged("matched_count")
        assert self._raw_result is not None
        if self.upserted_id is not None:
            return 0
        return int(self._raw_result.get("n", 0))

    @property
    def modified_count(self) -> int:
        """How many documents were changed; InvalidOperation when unacknowledged."""
        self._raise_if_unacknowledged("modified_count")
        assert self._raw_result is not None
        return int(self._raw_result.get("nModified", 0))

    @property
    def upserted_id(self) -> Any:
        """The _id of the upserted document, or None."""
        self._raise_if_unacknowledged("upserted_id")
        assert self._raw_result is not None
        return self._raw_result.get("upserted")

    @property
    def did_upsert(self) -> bool:
        """True if the update inserted a document (its ``_id`` may be None: PyMongo reads
        whether the reply says "upserted", not the id)."""
        self._raise_if_unacknowledged("did_upsert")
        return self._raw_result is not None and "upserted" in self._raw_result


class DeleteResult(_RawResult):
    """The result of delete_one and delete_many."""

    __slots__ = ()

    @property
    def deleted_count(self) -> int:
        """How many documents were deleted; InvalidOperation when unacknowledged."""
        self._raise_if_unacknowledged("deleted_count")
        assert self._raw_result is not None
        return int(self._raw_result.get("n", 0))


class _BulkWriteResultBase(_WriteResult):
    """What the results of both bulk writes share: the summary document and its counts."""

    __slots__ = ("_bulk_api_result",)

    def __init__(self, bulk_api_result: dict[str, Any], acknowledged: bool) -> None:
        self._bulk_api_result = bulk_api_result
        super().__init__(acknowledged)

    @property
    def bulk_api_result(self) -> dict[str, Any]:
        """The merged replies, in PyMongo's shape (nInserted, nMatched, upserted, ...)."""
        return self._bulk_api_result

    def _count(self, name: str, key: str) -> int:
        self._raise_if_unacknowledged(name)
        return int(self._bulk_api_result.get(key, 0))

    @property
    def inserted_count(self) -> int:
        """How many documents were inserted; InvalidOperation when unacknowledged."""
        return self._count("inserted_count", "nInserted")

    @property
    def matched_count(self) -> int:
        """How many documents matched; InvalidOperation when unacknowledged."""
        return self._count("matched_count", "nMatched")

    @property
    def modified_count(self) -> int:
        """How many documents were changed; InvalidOperation when unacknowledged."""
        return self._count("modified_count", "nModified")

    @property
    def deleted_count(self) -> int:
        """How many documents were deleted; InvalidOperation when unacknowledged."""
        return self._count("deleted_count", "nRemoved" if "nRemoved" in self._bulk_api_result
                           else "nDeleted")

    @property
    def upserted_count(self) -> int:
        """How many documents were upserted; InvalidOperation when unacknowledged."""
        return self._count("upserted_count", "nUpserted")

    def _fields(self) -> dict[str, Any]:
        return {"bulk_api_result": self._bulk_api_result}


class BulkWriteResult(_BulkWriteResultBase):
    """The result of a collection's bulk_write; ``bulk_api_result`` is PyMongo's summary
    document."""

    __slots__ = ()

    @property
    def upserted_ids(self) -> Optional[dict[int, Any]]:
        """{index of the operation: _id of the document it upserted}."""
        self._raise_if_unacknowledged("upserted_ids")
        return {u["index"]: u["_id"] for u in self._bulk_api_result.get("upserted", ())}


class _ClientUpdateResult(UpdateResult):
    """One update's result in a verbose client bulk write: the server's result document,
    whose ``upserted`` is ``{"_id": ...}`` (bulk write spec, "Individual results")."""

    __slots__ = ()

    @property
    def upserted_id(self) -> Any:
        """The _id of the upserted document, or None."""
        assert self._raw_result is not None
        upserted = self._raw_result.get("upserted")
        return upserted.get("_id") if isinstance(upserted, Mapping) else None

    @property
    def matched_count(self) -> int:
        """The op's ``n``: the documents it matched, an upserted one included (as
        PyMongo's)."""
        assert self._raw_result is not None
        return int(self._raw_result.get("n", 0))

    def __repr__(self) -> str:
        return f"UpdateResult({self._raw_result!r}, acknowledged={self._acknowledged})"


class ClientBulkWriteResult(_BulkWriteResultBase):
    """The result of ``MongoClient.bulk_write``: the summary counts, and with
    ``verbose_results=True`` one result per successful model (``insert_results``,
    ``update_results``, ``delete_results``, by the model's index). Reading the per-model
    results of a summary result raises InvalidOperation, as any count of an unacknowledged
    one does."""

    __slots__ = ("_verbose",)

    def __init__(self, bulk_api_result: dict[str, Any], acknowledged: bool,
                 has_verbose_results: bool) -> None:
        super().__init__(bulk_api_result, acknowledged)
        self._verbose = has_verbose_results

    @property
    def has_verbose_results(self) -> bool:
        """Whether the per-model results were asked for (``verbose_results=True``)."""
        return self._verbose

    def _verbose_results(self, name: str, key: str) -> Mapping[int, Any]:
        self._raise_if_unacknowledged(name)
        if not self._verbose:
            raise InvalidOperation(
                f"A value for {name} is not available when the results are not set to be "
                f"verbose. Check the verbose_results attribute to avoid this error.")
        return self._bulk_api_result.get(key, {})  # type: ignore[no-any-return]

    @property
    def insert_results(self) -> Mapping[int, InsertOneResult]:
        """{model index: InsertOneResult} of each successful insert (verbose only)."""
        return self._verbose_results("insert_results", "insertResults")

    @property
    def update_results(self) -> Mapping[int, UpdateResult]:
        """{model index: UpdateResult} of each successful update or replace (verbose only)."""
        return self._verbose_results("update_results", "updateResults")

    @property
    def delete_results(self) -> Mapping[int, DeleteResult]:
        """{model index: DeleteResult} of each successful delete (verbose only)."""
        return self._verbose_results("delete_results", "deleteResults")

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self._bulk_api_result!r}, "
                f"acknowledged={self._acknowledged}, verbose={self._verbose})")
