"""GridIn (as ``gridfs.grid_file.GridIn``): a file being written to GridFS (GridFS spec,
"Uploading"). Data is cut into chunks of ``chunkSize`` bytes, inserted in batches (at most
32 MiB or 100,000 chunks each); ``close()`` writes the files document last, so a reader
never sees a file whose chunks are not all there. Before its first write, the indexes the
spec asks for are created on an empty bucket.
"""
from __future__ import annotations

import datetime
import io
import warnings
from types import TracebackType
from typing import TYPE_CHECKING, Any, Iterable, NoReturn, Optional

from bson import Int64, ObjectId

from singlemongo.errors import (BulkWriteError, ConfigurationError, DuplicateKeyError, InvalidOperation,
                      OperationFailure)
from singlemongo.collection_writes import _raise_write_error
from singlemongo.gridfs.deadline import clock_of, within_lifetime
from singlemongo.gridfs.errors import FileExists

if TYPE_CHECKING:
    from singlemongo.collection import Collection

DEFAULT_CHUNK_SIZE = 255 * 1024
UPLOAD_BUFFER_SIZE = 2 * 16 * 1024 * 1024  # MAX_MESSAGE_SIZE
UPLOAD_BUFFER_CHUNKS = 100_000
CHUNK_OVERHEAD = 60
CHUNKS_INDEX = {"files_id": 1, "n": 1}  # "Indexes": unique
FILES_INDEX = {"filename": 1, "uploadDate": 1}
DUPLICATE_KEY_CODES = (11000, 11001, 12582)


def disallow_transactions(session: Any) -> None:
    """GridFS does not run in a multi-document transaction (PyMongo's rule)."""
    if session is not None and session.in_transaction:
        raise InvalidOperation("GridFS does not support multi-document transactions")


def clear_type_registry(entity: Any, **kwargs: Any) -> Any:
    """``entity`` (a database or collection) without its type registry: GridFS documents are
    the driver's own, never the application's custom types."""
    return entity.with_options(codec_options=entity.codec_options.with_options(
        type_registry=None), **kwargs)


def _field(name: str, doc: str, read_only: bool = False, closed_only: bool = False,
           deprecated: bool = False) -> Any:
    def getter(self: GridIn) -> Any:
        if deprecated:
            warnings.warn(f"GridIn property {name!r} is deprecated and will be removed in "
                          f"PyMongo 5.0", DeprecationWarning, stacklevel=2)
        if closed_only and not self._closed:
            raise AttributeError(f"can only get {name!r} on a closed file")
        return self._file.get(name, 0 if name == "length" else None)

    def setter(self: GridIn, value: Any) -> None:
        self.set(name, value)

    return property(getter, None if read_only or closed_only else setter, doc=doc)


class GridIn:
    """A new file in GridFS; write to it and close it (or use it as a context manager, which
    closes it unless the block raised). Any extra keyword becomes a field of the files
    document; ``encoding`` lets ``write`` take str."""

    def __init__(self, root_collection: Collection[Any], session: Any = None,
                 **kwargs: Any) -> None:
        from singlemongo.collection import Collection
        if not isinstance(root_collection, Collection):
            raise TypeError(f"root_collection must be an instance of Collection, not "
                            f"{type(root_collection)}")
        if not root_collection.write_concern.acknowledged:
            raise ConfigurationError("root_collection must use acknowledged write_concern")
        disallow_transactions(session)
        if "content_type" in kwargs:
            kwargs["contentType"] = kwargs.pop("content_type")
        if "chunk_size" in kwargs:
            kwargs["chunkSize"] = kwargs.pop("chunk_size")
        coll = clear_type_registry(root_collection, read_preference="primary")
        kwargs["_id"] = kwargs.get("_id", ObjectId())
        kwargs["chunkSize"] = kwargs.get("chunkSize", DEFAULT_CHUNK_SIZE)
        state = {"_session": session, "_coll": coll, "_root": coll, "_deadline": None,
                 "_chunks": coll.chunks, "_file": kwargs,
                 "_buffer": io.BytesIO(), "_position": 0, "_chunk_number": 0,
                 "_closed": False, "_ensured_index": False, "_buffered_docs": [],
                 "_buffered_docs_size": 0}
        for name, value in state.items():
            object.__setattr__(self, name, value)

    _file: dict[str, Any]
    _coll: Any
    _root: Any  # what within_lifetime reads (deadline.py)
    _deadline: Any
    _chunks: Any
    _session: Any
    _buffer: io.BytesIO
    _closed: bool
    _ensured_index: bool
    _buffered_docs: list[dict[str, Any]]
    _buffered_docs_size: int
    _position: int
    _chunk_number: int

    _id = _field("_id", "The file's ``_id``.", read_only=True)
    filename = _field("filename", "The file's name.")
    name = _field("filename", "The file's name (an alias of ``filename``).")
    content_type = _field("contentType", "Deprecated: the MIME type.", deprecated=True)
    length = _field("length", "Its length in bytes (once closed).", closed_only=True)
    chunk_size = _field("chunkSize", "Its chunk size in bytes.", read_only=True)
    upload_date = _field("uploadDate", "When it was uploaded (once closed).", closed_only=True)
    md5 = _field("md5", "Deprecated: never computed.", closed_only=True, deprecated=True)

    @property
    def closed(self) -> bool:
        """Whether the file is closed (written, or aborted)."""
        return self._closed

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        file = object.__getattribute__(self, "_file")
        if name in file:
            return file[name]
        raise AttributeError(f"GridIn object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self.__dict__ or name in type(self).__dict__:
            object.__setattr__(self, name, value)
        else:
            self.set(name, value)

    def set(self, name: str, value: Any) -> None:
        """Set a field of the files document (after close, on the server too)."""
        self._file[name] = value
        if self._closed:
            self._coll.files.update_one({"_id": {"$eq": self._file["_id"]}},
                                        {"$set": {name: value}})

    # ----- indexes ("Indexes") ------------------------------------------------------------

    def _create_index(self, collection: Collection[Any], key: dict[str, Any],
                      unique: bool) -> None:
        if collection.find_one(projection={"_id": 1}, session=self._session) is not None:
            return  # not an empty bucket: the indexes are the application's business
        try:
            keys = [spec["key"] for spec in collection.list_indexes(session=self._session)]
        except OperationFailure:
            keys = []
        if key not in keys:
            collection.create_index(list(key.items()), unique=unique, session=self._session)

    def _ensure_indexes(self) -> None:
        if not self._ensured_index:
            disallow_transactions(self._session)
            self._create_index(self._coll.files, FILES_INDEX, False)
            self._create_index(self._coll.chunks, CHUNKS_INDEX, True)
            object.__setattr__(self, "_ensured_index", True)

    # ----- writing ------------------------------------------------------------------------

    def _flush_data(self, data: bytes, force: bool = False) -> None:
        self._ensure_indexes()
        if data:
            self._buffered_docs.append({"files_id": self._file["_id"],
                                        "n": self._chunk_number, "data": data})
            object.__setattr__(self, "_buffered_docs_size",
                               self._buffered_docs_size + len(data) + CHUNK_OVERHEAD)
        if self._buffered_docs and (force or self._buffered_docs_size >= UPLOAD_BUFFER_SIZE
                                    or len(self._buffered_docs) >= UPLOAD_BUFFER_CHUNKS):
            self._insert_chunks()
        if data:
            object.__setattr__(self, "_chunk_number", self._chunk_number + 1)
            object.__setattr__(self, "_position", self._position + len(data))

    def _insert_chunks(self) -> None:
        try:
            self._chunks.insert_many(self._buffered_docs, session=self._session)
        except BulkWriteError as exc:
            if any(e.get("code") in DUPLICATE_KEY_CODES for e in exc.details["writeErrors"]):
                self._raise_file_exists()
            # As PyMongo: the error a single insert would raise (its last write error,
            # else its write concern error), chained to the batch's.
            wces = exc.details.get("writeConcernErrors") or []
            _raise_write_error({"writeErrors": exc.details.get("writeErrors"),
                                "writeConcernError": wces[-1] if wces else None}, None)
            raise
        object.__setattr__(self, "_buffered_docs", [])
        object.__setattr__(self, "_buffered_docs_size", 0)

    def _flush_buffer(self, force: bool = False) -> None:
        self._flush_data(self._buffer.getvalue(), force=force)
        object.__setattr__(self, "_buffer", io.BytesIO())

    def _raise_file_exists(self) -> NoReturn:
        raise FileExists(f"file with _id {self._file['_id']!r} already exists")

    @within_lifetime
    def write(self, data: Any) -> None:
        """Write bytes, str (with ``encoding`` given at creation) or what a file-like
        object's ``read()`` returns."""
        if self._closed:
            raise ValueError("cannot write to a closed file")
        try:
            read = data.read
        except AttributeError:
            if not isinstance(data, (str, bytes)):
                raise TypeError("can only write strings or file-like objects") from None
            if isinstance(data, str):
                encoding = self._file.get("encoding")
                if encoding is None:
                    raise TypeError("must specify an encoding for file in order to write str")
                data = data.encode(encoding)
            read = io.BytesIO(data).read
        size = self._file["chunkSize"]
        if isinstance(size, bool) or not isinstance(size, int):  # PyMongo's class for it
            raise TypeError(f"chunkSize must be an integer, not {size!r}")
        if self._buffer.tell() > 0:
            space = size - self._buffer.tell()
            try:
                piece = read(space)
            except BaseException:
                self.abort()
                raise
            self._buffer.write(piece)
            if len(piece) < space:
                return  # end of the data, the chunk not yet full
            self._flush_buffer()
        piece = read(size)
        while piece and len(piece) == size:
            self._flush_data(piece)
            piece = read(size)
        self._buffer.write(piece)

    @within_lifetime
    def writelines(self, sequence: Iterable[Any]) -> None:
        """Write each item of ``sequence``."""
        for line in sequence:
            self.write(line)

    @within_lifetime
    def close(self) -> None:
        """Write the last chunk and then the files document (length, uploadDate)."""
        if self._closed:
            return
        try:
            self._flush_buffer(force=True)
            self._file["length"] = Int64(self._position)  # "length" SHOULD be an Int64
            wall = clock_of(self._coll).wall()  # only clock.py reads time
            self._file["uploadDate"] = datetime.datetime.fromtimestamp(
                wall, tz=datetime.timezone.utc)
            self._coll.files.insert_one(self._file, session=self._session)
        except DuplicateKeyError:
            self._raise_file_exists()
        object.__setattr__(self, "_closed", True)

    @within_lifetime
    def abort(self) -> None:
        """Remove what was written so far and close the file."""
        self._coll.chunks.delete_many({"files_id": {"$eq": self._file["_id"]}},
                                      session=self._session)
        self._coll.files.delete_one({"_id": {"$eq": self._file["_id"]}}, session=self._session)
        object.__setattr__(self, "_closed", True)

    def read(self, size: int = -1) -> NoReturn:
        """Not readable: io.UnsupportedOperation."""
        raise io.UnsupportedOperation("read")

    def readable(self) -> bool:
        """False."""
        return False

    def seekable(self) -> bool:
        """False."""
        return False

    def writeable(self) -> bool:
        """True (PyMongo's spelling)."""
        return True

    writable = writeable

    def __enter__(self) -> GridIn:
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        if exc_type is None:
            self.close()
        else:
            object.__setattr__(self, "_closed", True)  # marked closed, nothing written
