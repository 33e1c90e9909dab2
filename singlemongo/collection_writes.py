"""A collection's writes (as ``pymongo.collection``): insert, update, replace, delete and
bulk_write. Single writes are retryable writes when they change at most one document
(retryable writes spec); bulk writes are split into batches in ``bulk.py``."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence, Union

import bson
from bson import ObjectId
from bson.codec_options import CodecOptions

from singlemongo.base_object import Generic
from singlemongo.arguments import (hint_value, is_raw, validate_boolean, validate_collation,
                        validate_is_document_type, validate_is_mapping, validate_ok_for_replace,
                        validate_ok_for_update)
from singlemongo.errors import (ConfigurationError, DocumentTooLarge, DuplicateKeyError, InvalidOperation,
                     WriteConcernError, WriteError, WTimeoutError)
from singlemongo.wire.messages import EncodedBatch, encoding
from singlemongo.results import (BulkWriteResult, DeleteResult, InsertManyResult, InsertOneResult,
                      UpdateResult)
from singlemongo.typings import _DocumentType, _IndexKeyHint, _Pipeline

if TYPE_CHECKING:
    from bson.raw_bson import RawBSONDocument

    from singlemongo.operations import _WriteOp

    from singlemongo.collection import Collection
    from singlemongo.engine.topology import Topology
    from singlemongo.write_concern import WriteConcern


# OP_MSG: how far beyond maxBsonObjectSize a command may go (what the server allows for the
# command's own fields; PyMongo's _COMMAND_OVERHEAD).
COMMAND_OVERHEAD = 16382


def _raise_write_error(reply: Mapping[str, Any], address: Any) -> None:
    """PyMongo's rule for a single write: the last write error, else the write concern
    error, becomes the exception."""
    errors = reply.get("writeErrors")
    if errors:
        error = dict(errors[-1])
        cls = DuplicateKeyError if error.get("code") in (11000, 11001, 12582) else WriteError
        raise cls(f"{error.get('errmsg')} (code {error.get('code')}"
                  f"{', ' + error['codeName'] if error.get('codeName') else ''})",
                  error.get("code"), error, address=address)
    wce = reply.get("writeConcernError")
    if wce:
        details = dict(wce)
        cls2 = WTimeoutError if (details.get("errInfo") or {}).get("wtimeout") else \
            WriteConcernError
        raise cls2(f"write concern error: {details.get('errmsg')} (code {details.get('code')})",
                   details.get("code"), details, address=address)


def _encoded(document: Any, codec: CodecOptions[Any]) -> bytes:
    return encoding(bson.encode, document, codec_options=codec)  # type: ignore[no-any-return]


def _measured(sequences: tuple[Any, ...], data: bytes) -> tuple[Any, ...]:
    """The one-statement ``sequences`` of a write, its statement's bytes attached (the
    message is built from them: never encoded twice)."""
    (identifier, statements), = sequences
    batch = EncodedBatch(statements)
    batch.encoded = data
    return ((identifier, batch),)


class WriteMethods(Generic[_DocumentType]):
    """The write half of Collection (a mixin: Collection is the class users see)."""

    def _as_collection(self) -> Collection[Any]:
        # WriteMethods only ever lives in a Collection (no cast(): a call per operation)
        return self  # type: ignore[return-value]

    if TYPE_CHECKING:  # what Collection gives the methods below
        _name: str
        _codec_options: CodecOptions[Any]
        _write_concern: WriteConcern

        @property
        def _topology(self) -> Topology: ...

        def _write_command(self, cmd: dict[str, Any], sequences: tuple[Any, ...] = (),
                           retryable: bool = True, session: Any = None, check: bool = True,
                           user_fields: Any = None, prepare: Any = None,
                           operation_id: Optional[int] = None) -> Any: ...

        def _acknowledged(self, session: Any) -> bool: ...

    def _check_unacknowledged(self, session: Any, **options: Any) -> None:
        """PyMongo refuses collation and arrayFilters with w: 0 (nothing would say whether
        the server understood them)."""
        if self._acknowledged(session):
            return
        for name, value in options.items():
            if value is not None:
                raise ConfigurationError(f"{name} is unsupported for unacknowledged writes.")

    def _size_check(self, document: Any) -> Any:
        """A ``Request.prepare``: DocumentTooLarge, before anything is sent, for a document
        over the selected server's maxBsonObjectSize. An inserted document is sent as
        measured (encoded once); a replacement is measured alone, and sent in its statement."""
        def check(conn: Any, sequences: tuple[Any, ...], retry: Optional[str]) -> Any:
            max_bson = conn.write_limits[0]
            from singlemongo import bulk as _bulk  # loaded by the first write, not by import
            data = document.raw if is_raw(document) else _encoded(document, self._codec_options)
            if len(data) > max_bson:
                raise _bulk.too_large(len(data), max_bson)
            if sequences[0][1][0] is not document:  # a replacement: the statement is sent
                return sequences, retry
            return _measured(sequences, data), retry
        return check

    def _statement_check(self, name: str, statement: Mapping[str, Any]) -> Any:
        """A ``Request.prepare``: DocumentTooLarge, before anything is sent, for an update or
        delete statement over maxBsonObjectSize plus OP_MSG's command overhead (PyMongo's
        "update command document too large"). The statement is sent as measured."""
        def check(conn: Any, sequences: tuple[Any, ...], retry: Optional[str]) -> Any:
            data = _encoded(statement, self._codec_options)
            if len(data) > conn.write_limits[0] + COMMAND_OVERHEAD:
                raise DocumentTooLarge(f"{name} command document too large")
            return _measured(sequences, data), retry
        return check

    def insert_one(self, document: Union[_DocumentType, RawBSONDocument],
                   bypass_document_validation: Optional[bool] = None, session: Any = None,
                   comment: Any = None) -> InsertOneResult:
        """Insert one document; its ``_id`` is added if missing. Raises DuplicateKeyError,
        WriteError, WriteConcernError or DocumentTooLarge."""
        validate_is_document_type("document", document)
        if not (is_raw(document) or "_id" in document):
            document["_id"] = ObjectId()  # type: ignore[index]
        cmd: dict[str, Any] = {"insert": self._name, "ordered": True}
        if bypass_document_validation is not None:
            cmd["bypassDocumentValidation"] = bypass_document_validation
        if comment is not None:
            cmd["comment"] = comment
        self._write_command(cmd, (("documents", [document]),), session=session,
                            prepare=self._size_check(document))
        return InsertOneResult(None if is_raw(document) else
                               document["_id"], self._acknowledged(session))

    def insert_many(self, documents: Iterable[Union[_DocumentType, RawBSONDocument]],
                    ordered: bool = True, bypass_document_validation: Optional[bool] = None,
                    session: Any = None, comment: Any = None) -> InsertManyResult:
        """Insert documents in batches the server accepts; BulkWriteError if any fails
        (ordered: the rest are not attempted)."""
        if isinstance(documents, Mapping) or not isinstance(documents, Iterable) or \
                not documents:
            raise TypeError("documents must be a non-empty list")
        from singlemongo import bulk as _bulk
        bulk = _bulk._Bulk(self._as_collection(), ordered, bypass_document_validation, comment)
        inserted_ids = bulk.add_inserts(documents)
        if not bulk.ops:  # an iterator that gave nothing (PyMongo's error for it)
            raise InvalidOperation("No operations to execute")
        result = _bulk.execute(bulk, session)
        return InsertManyResult(inserted_ids, result.acknowledged)

    def _update(self, filter: Mapping[str, Any], document: Any, multi: bool, upsert: bool,
                bypass_document_validation: Optional[bool], collation: Any,
                array_filters: Optional[Sequence[Mapping[str, Any]]], hint: Any, let: Any,
                comment: Any, sort: Any = None, session: Any = None,
                prepare: Any = None) -> UpdateResult:
        validate_is_mapping("filter", filter)
        validate_boolean("upsert", upsert)
        op: dict[str, Any] = {"q": filter, "u": document, "multi": multi, "upsert": upsert}
        collation = validate_collation(collation)
        self._check_unacknowledged(session, Collation=collation, arrayFilters=array_filters)
        if sort is not None:
            validate_is_mapping("sort", sort)
        if array_filters is not None and not isinstance(array_filters, list):
            raise TypeError(f"array_filters must be a list, not {type(array_filters)}")
        for key, value in (("collation", collation), ("arrayFilters", array_filters),
                           ("hint", hint_value(hint)), ("sort", sort)):
            if value is not None:
                op[key] = value
        cmd: dict[str, Any] = {"update": self._name, "ordered": True}
        if let is not None:
            validate_is_document_type("let", let)
            cmd["let"] = let
        if comment is not None:
            cmd["comment"] = comment
        if bypass_document_validation is not None:
            cmd["bypassDocumentValidation"] = bypass_document_validation
        reply = self._write_command(cmd, (("updates", [op]),), retryable=not multi,
                                    session=session,
                                    prepare=prepare or self._statement_check("update", op))
        if not self._acknowledged(session):
            return UpdateResult(None, False)
        raw = dict(reply)
        raw["updatedExisting"] = bool(raw.get("n")) and "upserted" not in raw
        if raw.get("upserted"):
            raw["upserted"] = raw["upserted"][0]["_id"]
        return UpdateResult(raw, True)

    def update_one(self, filter: Mapping[str, Any],
                   update: Union[Mapping[str, Any], _Pipeline], upsert: bool = False,
                   bypass_document_validation: Optional[bool] = None, collation: Any = None,
                   array_filters: Optional[Sequence[Mapping[str, Any]]] = None,
                   hint: Optional[_IndexKeyHint] = None, session: Any = None,
                   let: Optional[Mapping[str, Any]] = None,
                   sort: Optional[Mapping[str, Any]] = None,
                   comment: Any = None) -> UpdateResult:
        """Update the first matching document (operators or a pipeline); ``upsert`` inserts
        one if none matches."""
        validate_ok_for_update(update)
        return self._update(filter, update, False, upsert, bypass_document_validation,
                            collation, array_filters, hint, let, comment, sort, session)

    def update_many(self, filter: Mapping[str, Any],
                    update: Union[Mapping[str, Any], _Pipeline], upsert: bool = False,
                    array_filters: Optional[Sequence[Mapping[str, Any]]] = None,
                    bypass_document_validation: Optional[bool] = None, collation: Any = None,
                    hint: Optional[_IndexKeyHint] = None, session: Any = None,
                    let: Optional[Mapping[str, Any]] = None,
                    comment: Any = None) -> UpdateResult:
        """Update every matching document (not retryable: it may have partly run)."""
        validate_ok_for_update(update)
        return self._update(filter, update, True, upsert, bypass_document_validation,
                            collation, array_filters, hint, let, comment, None, session)

    def replace_one(self, filter: Mapping[str, Any], replacement: Mapping[str, Any],
                    upsert: bool = False, bypass_document_validation: Optional[bool] = None,
                    collation: Any = None, hint: Optional[_IndexKeyHint] = None,
                    session: Any = None, let: Optional[Mapping[str, Any]] = None,
                    sort: Optional[Mapping[str, Any]] = None,
                    comment: Any = None) -> UpdateResult:
        """Replace the first matching document (its ``_id`` is kept)."""
        validate_ok_for_replace(replacement)
        return self._update(filter, replacement, False, upsert, bypass_document_validation,
                            collation, None, hint, let, comment, sort, session,
                            self._size_check(replacement))

    def _delete(self, filter: Mapping[str, Any], limit: int, collation: Any, hint: Any,
                let: Any, comment: Any, session: Any = None) -> DeleteResult:
        validate_is_mapping("filter", filter)
        op: dict[str, Any] = {"q": filter, "limit": limit}
        collation = validate_collation(collation)
        self._check_unacknowledged(session, Collation=collation)
        for key, value in (("collation", collation), ("hint", hint_value(hint))):
            if value is not None:
                op[key] = value
        cmd: dict[str, Any] = {"delete": self._name, "ordered": True}
        if let is not None:
            validate_is_document_type("let", let)
            cmd["let"] = let
        if comment is not None:
            cmd["comment"] = comment
        reply = self._write_command(cmd, (("deletes", [op]),), retryable=limit == 1,
                                    session=session,
                                    prepare=self._statement_check("delete", op))
        return DeleteResult(reply if self._acknowledged(session) else None,
                            self._acknowledged(session))

    def delete_one(self, filter: Mapping[str, Any], collation: Any = None,
                   hint: Optional[_IndexKeyHint] = None, session: Any = None,
                   let: Optional[Mapping[str, Any]] = None,
                   comment: Any = None) -> DeleteResult:
        """Delete the first matching document."""
        return self._delete(filter, 1, collation, hint, let, comment, session)

    def delete_many(self, filter: Mapping[str, Any], collation: Any = None,
                    hint: Optional[_IndexKeyHint] = None, session: Any = None,
                    let: Optional[Mapping[str, Any]] = None,
                    comment: Any = None) -> DeleteResult:
        """Delete every matching document (not retryable)."""
        return self._delete(filter, 0, collation, hint, let, comment, session)

    def bulk_write(self, requests: Sequence[_WriteOp], ordered: bool = True,
                   bypass_document_validation: Optional[bool] = None, session: Any = None,
                   comment: Any = None,
                   let: Optional[Mapping[str, Any]] = None) -> BulkWriteResult:
        """Run InsertOne, UpdateOne, UpdateMany, ReplaceOne, DeleteOne and DeleteMany models
        in as few commands as the server's limits allow; BulkWriteError with PyMongo's
        ``details`` if any fails."""
        if not isinstance(requests, list):
            raise TypeError(f"requests must be a list, not {type(requests).__name__}")
        from singlemongo import bulk as _bulk
        bulk = _bulk._Bulk(self._as_collection(), ordered, bypass_document_validation, comment,
                           let)
        for request in requests:
            try:
                add = request._add_to_bulk
            except AttributeError:
                raise TypeError(f"{request!r} is not a valid request") from None
            add(bulk)
        return _bulk.execute(bulk, session)
