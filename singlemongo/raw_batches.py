"""Raw BSON batches (``find_raw_batches``, ``aggregate_raw_batches``, as PyMongo's): each
item is one batch as ``bytes``. Loaded only by a program that asks for them."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, NoReturn

from singlemongo.command_cursor import CommandCursor
from singlemongo.base_object import _DocumentType
from singlemongo.cursor import Cursor
from singlemongo.errors import InvalidOperation

if TYPE_CHECKING:
    from singlemongo.collection import Collection


class _RawBatches:
    """Batches as raw BSON (``find_raw_batches``, ``aggregate_raw_batches``): each batch is
    one ``bytes``, its documents one after the other (``bson.decode_all`` reads them); an
    empty batch yields nothing. The cursor's collection decodes documents as
    RawBSONDocument, so nothing is decoded on the way."""

    def _take_cursor(self, cursor: Mapping[str, Any], key: str) -> None:
        cursor = dict(cursor)
        data = b"".join(document.raw for document in cursor[key])
        cursor[key] = [data] if data else []
        super()._take_cursor(cursor, key)  # type: ignore[misc]

    def __getitem__(self, index: Any) -> NoReturn:
        raise InvalidOperation(f"Cannot call __getitem__ on {type(self).__name__}")


class RawBatchCommandCursor(_RawBatches, CommandCursor[_DocumentType]):
    """The CommandCursor of ``aggregate_raw_batches``: it yields bytes, a batch each."""

    first_batch_size = 0  # PyMongo asks for an empty first batch: getMores bring the data


def raw_codec(collection: Collection[Any]) -> Collection[Any]:
    """``collection`` decoding documents as RawBSONDocument."""
    from bson.raw_bson import RawBSONDocument
    return collection.with_options(codec_options=collection.codec_options.with_options(
        document_class=RawBSONDocument))


class RawBatchCursor(_RawBatches, Cursor[_DocumentType]):
    """The cursor of ``find_raw_batches``: it yields bytes, a batch of raw BSON each."""

    def explain(self) -> _DocumentType:
        """The server's explanation, decoded (as PyMongo's)."""
        return self._explain(self._collection.codec_options.with_options(  # type: ignore[no-any-return]
            document_class=dict))
