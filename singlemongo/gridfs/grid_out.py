"""GridOut (as ``gridfs.grid_file.GridOut``): a file read from GridFS, a read-only, seekable
``io.IOBase`` (GridFS spec, "Downloading"); its chunks are checked as they arrive (missing,
extra or truncated: CorruptGridFile). GridOutCursor finds files. Reads are ordinary finds,
so they are retryable reads.
"""
from __future__ import annotations

import io
import math
import os
import warnings
from types import TracebackType
from typing import TYPE_CHECKING, Any, Mapping, NoReturn, Optional

from singlemongo.cursor import Cursor
from singlemongo.errors import CursorNotFound
from singlemongo.gridfs.deadline import within_lifetime
from singlemongo.gridfs.errors import CorruptGridFile, NoFile
from singlemongo.gridfs.grid_in import clear_type_registry, disallow_transactions

if TYPE_CHECKING:
    from singlemongo.collection import Collection

EMPTY = b""
NEWLINE = b"\n"


def id_filter(field: str, value: Any) -> dict[str, Any]:
    """GridFSBucket's files query by id. GridFS spec, "File Download", at the revision this
    driver implements (its retryable-reads tests expect ``{_id: <id>}``): plain equality,
    except for an id that is a document, which a plain filter would read as query operators
    (``{"$gt": MinKey}`` would match any file): that one is ``$eq``. The legacy GridFS API,
    outside the spec, queries with ``$eq`` as PyMongo does."""
    if isinstance(value, Mapping):
        return {field: {"$eq": value}}
    return {field: value}


def _field(name: str, doc: str, deprecated: bool = False) -> Any:
    def getter(self: GridOut) -> Any:
        if deprecated:
            warnings.warn(f"GridOut property {name!r} is deprecated and will be removed in "
                          f"PyMongo 5.0", DeprecationWarning, stacklevel=2)
        self.open()
        return self._file.get(name, 0 if name == "length" else None)
    return property(getter, doc=doc)


class GridOut(io.IOBase):
    """A stored file: ``read``, ``readline``, ``readchunk``, ``seek``, iteration (lines), and
    the files document's fields as attributes. Its files document is read on first use
    (``open()``): NoFile if there is none."""

    def __init__(self, root_collection: Collection[Any], file_id: Any = None,
                 file_document: Optional[Mapping[str, Any]] = None,
                 session: Any = None) -> None:
        from singlemongo.collection import Collection
        if not isinstance(root_collection, Collection):
            raise TypeError(f"root_collection must be an instance of Collection, not "
                            f"{type(root_collection)}")
        disallow_transactions(session)
        root_collection = clear_type_registry(root_collection)
        super().__init__()
        self._root = root_collection  # what within_lifetime reads (deadline.py)
        self._deadline: Any = None
        self._chunks = root_collection.chunks
        self._files = root_collection.files
        self._file_id = file_id
        self._buffer = EMPTY
        self._buffer_pos = 0
        self._chunk_iter: Optional[GridOutChunkIterator] = None
        self._position = 0
        self._file: Any = file_document
        self._session = session

    _id = _field("_id", "The file's ``_id``.")
    filename = _field("filename", "The file's name.")
    name = _field("filename", "The file's name (an alias of ``filename``).")
    content_type = _field("contentType", "Deprecated: the MIME type.", deprecated=True)
    length = _field("length", "Its length in bytes.")
    chunk_size = _field("chunkSize", "Its chunk size in bytes.")
    upload_date = _field("uploadDate", "When it was uploaded.")
    aliases = _field("aliases", "Deprecated: other names.", deprecated=True)
    metadata = _field("metadata", "The application's metadata document, if any.")
    md5 = _field("md5", "Deprecated: the MD5 digest, if one was stored.", deprecated=True)

    def open(self) -> None:
        """Read the files document (NoFile if the file does not exist)."""
        self._open({"_id": {"$eq": self._file_id}})

    @within_lifetime
    def _open(self, query: Mapping[str, Any]) -> None:
        if not self._file:
            disallow_transactions(self._session)
            self._file = self._files.find_one(query, session=self._session)
            if not self._file:
                raise NoFile(f"no file in gridfs collection {self._files!r} with _id "
                             f"{self._file_id!r}")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        self.open()
        if name in self._file:
            return self._file[name]
        raise AttributeError(f"GridOut object has no attribute '{name}'")

    def readable(self) -> bool:
        """True."""
        return True

    @within_lifetime
    def readchunk(self) -> bytes:
        """The rest of the current chunk (b"" at the end of the file)."""
        self.open()
        received = len(self._buffer) - self._buffer_pos
        data = EMPTY
        chunk_size = int(self.chunk_size)
        if received > 0:
            data = self._buffer[self._buffer_pos:]
        elif self._position < int(self.length):
            chunk_number = (received + self._position) // chunk_size
            if self._chunk_iter is None:
                self._chunk_iter = GridOutChunkIterator(self, self._chunks, self._session,
                                                        chunk_number)
            chunk = self._chunk_iter.next()
            data = chunk["data"][self._position % chunk_size:]
            if not data:
                raise CorruptGridFile("truncated chunk")
        self._position += len(data)
        self._buffer, self._buffer_pos = EMPTY, 0
        return bytes(data)

    def _read(self, size: int = -1, line: bool = False) -> bytes:
        self.open()
        remainder = int(self.length) - self._position
        if size < 0 or size > remainder:
            size = remainder
        if size == 0:
            return EMPTY
        received, parts = 0, []
        while received < size:
            needed = size - received
            if self._buffer:
                buf, start = self._buffer, self._buffer_pos
                self._position += len(buf) - start
                self._buffer, self._buffer_pos = EMPTY, 0
            else:
                buf, start = self.readchunk(), 0
            if line:
                end = buf.find(NEWLINE, start, start + needed) - start
                if end >= 0:
                    size, needed = received + end + 1, end + 1
            piece = memoryview(buf)[start:]
            if len(piece) > needed:  # keep the rest for the next read
                parts.append(piece[:needed])
                self._buffer, self._buffer_pos = buf, start + needed
                self._position -= len(buf) - self._buffer_pos
            else:
                parts.append(piece)
            received += len(piece)
        if size == remainder and self._chunk_iter is not None:
            try:  # the whole file was read: an extra chunk is corruption
                self._chunk_iter.next()
            except StopIteration:
                pass
        return b"".join(parts)

    @within_lifetime
    def read(self, size: int = -1) -> bytes:
        """At most ``size`` bytes (all that is left if negative)."""
        return self._read(size)

    @within_lifetime
    def readline(self, size: Optional[int] = -1) -> bytes:
        """One line (with its newline), at most ``size`` bytes."""
        return self._read(-1 if size is None else size, line=True)

    def tell(self) -> int:
        """The current position."""
        return self._position

    def seek(self, pos: int, whence: int = os.SEEK_SET) -> int:
        """Move to ``pos`` (from the start, the current position or the end)."""
        if whence == os.SEEK_SET:
            new = pos
        elif whence == os.SEEK_CUR:
            new = self._position + pos
        elif whence == os.SEEK_END:
            new = int(self.length) + pos
        else:
            raise OSError(22, "Invalid value for `whence`")
        if new < 0:
            raise OSError(22, "Invalid value for `pos` - must be positive")
        if new != self._position:
            self._position = new
            self._buffer, self._buffer_pos = EMPTY, 0
            if self._chunk_iter is not None:
                self._chunk_iter.close()
                self._chunk_iter = None
        return new

    def seekable(self) -> bool:
        """True."""
        return True

    def __iter__(self) -> GridOut:
        return self

    @within_lifetime
    def close(self) -> None:
        """Close the chunks cursor, if any."""
        if self._chunk_iter is not None:
            self._chunk_iter.close()
            self._chunk_iter = None
        super().close()

    def write(self, value: Any) -> NoReturn:
        """Not writable: io.UnsupportedOperation."""
        raise io.UnsupportedOperation("write")

    def writelines(self, lines: Any) -> NoReturn:
        """Not writable: io.UnsupportedOperation."""
        raise io.UnsupportedOperation("writelines")

    def writable(self) -> bool:
        """False."""
        return False

    def fileno(self) -> NoReturn:
        """No file descriptor: io.UnsupportedOperation."""
        raise io.UnsupportedOperation("fileno")

    def truncate(self, size: Optional[int] = None) -> NoReturn:
        """Not writable: io.UnsupportedOperation."""
        raise io.UnsupportedOperation("truncate")

    def __enter__(self) -> GridOut:
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()

    def __del__(self) -> None:
        pass  # io.IOBase.__del__ would close: the chunk cursor cleans up after itself


class GridOutChunkIterator:
    """A file's chunks in order, each checked against the files document."""

    def __init__(self, grid_out: GridOut, chunks: Collection[Any], session: Any,
                 next_chunk: int) -> None:
        self._id = grid_out._id
        self._chunk_size = int(grid_out.chunk_size)
        self._length = int(grid_out.length)
        self._chunks = chunks
        self._session = session
        self._next_chunk = next_chunk
        self._num_chunks = math.ceil(float(self._length) / self._chunk_size)
        self._cursor: Optional[Cursor[Any]] = None

    def expected_chunk_length(self, n: int) -> int:
        """How long chunk ``n`` must be (the last one may be shorter)."""
        if n < self._num_chunks - 1:
            return self._chunk_size
        return self._length - (self._chunk_size * (self._num_chunks - 1))

    def __iter__(self) -> GridOutChunkIterator:
        return self

    def _open_cursor(self) -> Cursor[Any]:
        # Not checked by any revision's tests: PyMongo's $eq, whatever the id.
        query: dict[str, Any] = {"files_id": {"$eq": self._id}}
        if self._next_chunk > 0:
            query["n"] = {"$gte": self._next_chunk}
        disallow_transactions(self._session)
        self._cursor = self._chunks.find(query, sort=[("n", 1)], session=self._session)
        return self._cursor

    def _cursor_next(self) -> Mapping[str, Any]:
        cursor = self._cursor if self._cursor is not None else self._open_cursor()
        try:
            return cursor.next()
        except CursorNotFound:
            # A long pause between reads: started again once where it was, as PyMongo; a
            # second CursorNotFound is the caller's (before, each one recursed).
            cursor.close()
            return self._open_cursor().next()

    def next(self) -> Mapping[str, Any]:
        """The next chunk; CorruptGridFile if it is not the one expected."""
        try:
            chunk = self._cursor_next()
        except StopIteration:
            if self._next_chunk >= self._num_chunks:
                raise
            raise CorruptGridFile(f"no chunk #{self._next_chunk}") from None
        if chunk["n"] != self._next_chunk:
            self.close()
            raise CorruptGridFile(f"Missing chunk: expected chunk #{self._next_chunk} but "
                                  f"found chunk with n={chunk['n']}")
        if chunk["n"] >= self._num_chunks and len(chunk["data"]):
            self.close()  # an extra chunk is only corruption if it holds data
            raise CorruptGridFile(f"Extra chunk found: expected {self._num_chunks} chunks "
                                  f"but found chunk with n={chunk['n']}")
        expected = self.expected_chunk_length(chunk["n"])
        if len(chunk["data"]) != expected:
            self.close()
            raise CorruptGridFile(f"truncated chunk #{chunk['n']}: expected chunk length to "
                                  f"be {expected} but found chunk with length "
                                  f"{len(chunk['data'])}")
        self._next_chunk += 1
        return chunk

    __next__ = next

    def close(self) -> None:
        """Close the chunks cursor."""
        if self._cursor is not None:
            self._cursor.close()
            self._cursor = None


class GridOutIterator:
    """A file's data, chunk by chunk, as bytes."""

    def __init__(self, grid_out: GridOut, chunks: Collection[Any], session: Any) -> None:
        self._chunk_iter = GridOutChunkIterator(grid_out, chunks, session, 0)

    def __iter__(self) -> GridOutIterator:
        return self

    def next(self) -> bytes:
        """The next chunk's data."""
        return bytes(self._chunk_iter.next()["data"])

    __next__ = next


class GridOutCursor(Cursor[Any]):
    """A cursor over files documents that yields GridOut objects (``GridFS.find``)."""

    def __init__(self, collection: Collection[Any], filter: Optional[Mapping[str, Any]] = None,
                 skip: int = 0, limit: int = 0, no_cursor_timeout: bool = False,
                 sort: Any = None, batch_size: int = 0, session: Any = None) -> None:
        disallow_transactions(session)
        collection = clear_type_registry(collection)
        self._root_collection = collection
        super().__init__(collection.files, filter, skip=skip, limit=limit,
                         no_cursor_timeout=no_cursor_timeout, sort=sort, batch_size=batch_size,
                         session=session)

    def next(self) -> GridOut:
        """The next file, as a GridOut."""
        disallow_transactions(self.session)
        document = super().__next__()
        return GridOut(self._root_collection, file_document=document, session=self.session)

    __next__ = next

    def to_list(self, length: Optional[int] = None) -> list[GridOut]:  # type: ignore[override]
        """The remaining files (at most ``length``) as GridOut objects."""
        if length is not None and length < 1:
            raise ValueError("to_list() length must be greater than 0")
        out: list[GridOut] = []
        for grid_out in self:
            out.append(grid_out)
            if length is not None and len(out) >= length:
                break
        return out

    def add_option(self, mask: int) -> NoReturn:
        """Not available on a GridOutCursor."""
        raise NotImplementedError("Method does not exist for GridOutCursor")

    def remove_option(self, mask: int) -> NoReturn:
        """Not available on a GridOutCursor."""
        raise NotImplementedError("Method does not exist for GridOutCursor")
