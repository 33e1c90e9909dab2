"""GridFSBucket (the GridFS spec's API) and GridFS (PyMongo's older one), as in
``gridfs``: files stored as a files document and its chunks in ``<bucket>.files`` and
``<bucket>.chunks``. Not in transactions (InvalidOperation), as PyMongo.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, List, Optional

from bson import ObjectId

from singlemongo.errors import ConfigurationError
from singlemongo.gridfs.deadline import open_with_lifetime, whole_operation
from singlemongo.gridfs.errors import NoFile
from singlemongo.gridfs.grid_in import DEFAULT_CHUNK_SIZE, GridIn, clear_type_registry, disallow_transactions
from singlemongo.gridfs.grid_out import GridOut, GridOutCursor, id_filter

if TYPE_CHECKING:
    from singlemongo.collection import Collection
    from singlemongo.database import Database
    from singlemongo.write_concern import WriteConcern


def _check_database(database: Any) -> Database[Any]:
    from singlemongo.database import Database
    if not isinstance(database, Database):
        raise TypeError(f"database must be an instance of Database, not {type(database)}")
    return clear_type_registry(database)  # type: ignore[no-any-return]


def _check_filename(filename: Any) -> None:
    if not isinstance(filename, str):
        raise TypeError(f"Wrong type for filename, value must be an instance of str, not "
                        f"{type(filename)}")


def _revision(files: Collection[Any], query: dict[str, Any], revision: int,
              session: Any) -> Any:
    """The files document of a revision: 0 the first, -1 the latest ("Revisions")."""
    cursor = files.find(query, session=session)
    if revision < 0:
        cursor.limit(-1).skip(abs(revision) - 1).sort("uploadDate", -1)
    else:
        cursor.limit(-1).skip(revision).sort("uploadDate", 1)
    for document in cursor:
        return document
    return None


def _copy_to(grid_out: GridOut, destination: Any) -> None:
    with grid_out:
        for chunk in iter(grid_out.readchunk, b""):
            destination.write(chunk)


class GridFS:
    """PyMongo's original GridFS API on ``database[collection]`` (``fs`` by default):
    ``put``, ``get``, ``get_version``, ``get_last_version``, ``delete``, ``list``,
    ``find``, ``find_one``, ``exists``, ``new_file``."""

    def __init__(self, database: Database[Any], collection: str = "fs") -> None:
        database = _check_database(database)
        if not database.write_concern.acknowledged:
            raise ConfigurationError("database must use acknowledged write_concern")
        self._collection = database[collection]
        self._files = self._collection.files
        self._chunks = self._collection.chunks

    def new_file(self, **kwargs: Any) -> GridIn:
        """A new GridIn (write to it, then close it); keywords become fields of the file."""
        return GridIn(self._collection, **kwargs)

    @whole_operation
    def put(self, data: Any, **kwargs: Any) -> Any:
        """Store ``data`` (bytes, str with ``encoding=``, or a file-like object) as a new
        file; its ``_id``. FileExists if ``_id`` is taken."""
        with GridIn(self._collection, **kwargs) as grid_in:
            grid_in.write(data)
            return grid_in._id

    def get(self, file_id: Any, session: Any = None) -> GridOut:
        """The file with this ``_id`` (NoFile if there is none)."""
        grid_out = GridOut(self._collection, file_id, session=session)
        grid_out.open()
        return grid_out

    def get_version(self, filename: Optional[str] = None, version: Optional[int] = -1,
                    session: Any = None, **kwargs: Any) -> GridOut:
        """A version of a file by name (0 the first, -1 the latest); keywords add to the
        query. NoFile if there is no such version."""
        query = dict(kwargs)
        if filename is not None:
            query["filename"] = filename
        disallow_transactions(session)
        version = -1 if version is None else version
        document = _revision(self._files, query, version, session)
        if document is None:
            raise NoFile(f"no version {version} for filename {filename!r}")
        return GridOut(self._collection, file_document=document, session=session)

    def get_last_version(self, filename: Optional[str] = None, session: Any = None,
                         **kwargs: Any) -> GridOut:
        """The latest version of a file by name."""
        return self.get_version(filename=filename, session=session, **kwargs)

    @whole_operation
    def delete(self, file_id: Any, session: Any = None) -> None:
        """Delete a file and its chunks (no error if it does not exist)."""
        disallow_transactions(session)
        self._files.delete_one({"_id": {"$eq": file_id}}, session=session)
        self._chunks.delete_many({"files_id": {"$eq": file_id}}, session=session)

    def list(self, session: Any = None) -> List[str]:
        """The names of the stored files."""
        disallow_transactions(session)
        return [name for name in self._files.distinct("filename", session=session)
                if name is not None]

    def find_one(self, filter: Any = None, session: Any = None, skip: int = 0, limit: int = 0,
                 no_cursor_timeout: bool = False, sort: Any = None,
                 batch_size: int = 0) -> Optional[GridOut]:
        """The first file matching ``filter`` (or with that ``_id``), or None (find's
        arguments; ``limit`` is ignored)."""
        if filter is not None and not isinstance(filter, Mapping):
            filter = {"_id": {"$eq": filter}}
        disallow_transactions(session)
        for grid_out in self.find(filter, skip, limit, no_cursor_timeout, sort, batch_size,
                                  session):
            return grid_out
        return None

    def find(self, filter: Optional[Mapping[str, Any]] = None, skip: int = 0, limit: int = 0,
             no_cursor_timeout: bool = False, sort: Any = None, batch_size: int = 0,
             session: Any = None) -> GridOutCursor:
        """A cursor over the matching files, as GridOut objects."""
        return GridOutCursor(self._collection, filter, skip, limit, no_cursor_timeout, sort,
                             batch_size, session)

    def exists(self, document_or_id: Any = None, session: Any = None, **kwargs: Any) -> bool:
        """Whether a file matches (an ``_id``, a query document, or keywords as a query)."""
        disallow_transactions(session)
        query: Any
        if kwargs:
            query = kwargs
        elif document_or_id is not None and not isinstance(document_or_id, Mapping):
            query = {"_id": {"$eq": document_or_id}}
        else:
            query = document_or_id
        return self._files.find_one(query, ["_id"], session=session) is not None


class GridFSBucket:
    """A GridFS bucket (GridFS spec): upload and download streams, delete, find, rename, by
    id or by name, with the bucket's chunk size, write concern and read preference."""

    def __init__(self, db: Database[Any], bucket_name: str = "fs",
                 chunk_size_bytes: int = DEFAULT_CHUNK_SIZE,
                 write_concern: Optional[WriteConcern] = None,
                 read_preference: Any = None) -> None:
        db = _check_database(db)
        concern = write_concern if write_concern is not None else db.write_concern
        if not concern.acknowledged:
            raise ConfigurationError("write concern must be acknowledged")
        self._bucket_name = bucket_name
        self._collection = db[bucket_name]
        self._chunks = self._collection.chunks.with_options(
            write_concern=write_concern, read_preference=read_preference)
        self._files = self._collection.files.with_options(
            write_concern=write_concern, read_preference=read_preference)
        self._chunk_size_bytes = chunk_size_bytes

    def _options(self, filename: Any, chunk_size_bytes: Optional[int],
                 metadata: Optional[Mapping[str, Any]]) -> dict[str, Any]:
        _check_filename(filename)
        options: dict[str, Any] = {
            "filename": filename,
            "chunk_size": chunk_size_bytes if chunk_size_bytes is not None
            else self._chunk_size_bytes}
        if metadata is not None:
            options["metadata"] = metadata
        return options

    def open_upload_stream(self, filename: str, chunk_size_bytes: Optional[int] = None,
                           metadata: Optional[Mapping[str, Any]] = None,
                           session: Any = None) -> GridIn:
        """A GridIn for a new file named ``filename`` (a new ObjectId as its ``_id``); all
        of it within the timeoutMS in force now, if any."""
        return open_with_lifetime(GridIn(self._collection, session=session, **self._options(
            filename, chunk_size_bytes, metadata)), self._collection)

    def open_upload_stream_with_id(self, file_id: Any, filename: str,
                                   chunk_size_bytes: Optional[int] = None,
                                   metadata: Optional[Mapping[str, Any]] = None,
                                   session: Any = None) -> GridIn:
        """A GridIn for a new file with the given ``_id``; all of it within the timeoutMS
        in force now, if any."""
        return open_with_lifetime(GridIn(self._collection, session=session, _id=file_id,
                                         **self._options(filename, chunk_size_bytes, metadata)),
                                  self._collection)

    @whole_operation
    def upload_from_stream(self, filename: str, source: Any,
                           chunk_size_bytes: Optional[int] = None,
                           metadata: Optional[Mapping[str, Any]] = None,
                           session: Any = None) -> ObjectId:
        """Store ``source`` (bytes, str or a readable) as a new file; its ``_id``."""
        with self.open_upload_stream(filename, chunk_size_bytes, metadata,
                                     session=session) as grid_in:
            grid_in.write(source)
        return grid_in._id  # type: ignore[no-any-return]

    @whole_operation
    def upload_from_stream_with_id(self, file_id: Any, filename: str, source: Any,
                                   chunk_size_bytes: Optional[int] = None,
                                   metadata: Optional[Mapping[str, Any]] = None,
                                   session: Any = None) -> None:
        """Store ``source`` as a new file with the given ``_id``."""
        with self.open_upload_stream_with_id(file_id, filename, chunk_size_bytes, metadata,
                                             session=session) as grid_in:
            grid_in.write(source)

    def open_download_stream(self, file_id: Any, session: Any = None) -> GridOut:
        """A GridOut for the file with this ``_id`` (NoFile now if there is none); all of
        it within the timeoutMS in force now, if any."""
        grid_out = open_with_lifetime(GridOut(self._collection, file_id, session=session),
                                      self._collection)
        grid_out._open(id_filter("_id", file_id))
        return grid_out  # type: ignore[no-any-return]

    @whole_operation
    def download_to_stream(self, file_id: Any, destination: Any, session: Any = None) -> None:
        """Write the file's contents to ``destination`` (anything with ``write``)."""
        _copy_to(self.open_download_stream(file_id, session=session), destination)

    @whole_operation
    def delete(self, file_id: Any, session: Any = None) -> None:
        """Delete the file and its chunks; NoFile if it did not exist."""
        disallow_transactions(session)
        result = self._files.delete_one({"_id": {"$eq": file_id}}, session=session)
        self._chunks.delete_many({"files_id": {"$eq": file_id}}, session=session)
        if not result.deleted_count:
            raise NoFile(f"no file could be deleted because none matched {file_id}")

    @whole_operation
    def delete_by_name(self, filename: str, session: Any = None) -> None:
        """Delete every revision of a file and their chunks; NoFile if there was none."""
        disallow_transactions(session)
        ids = [doc["_id"] for doc in self._files.find({"filename": filename}, {"_id": 1},
                                                      session=session)]
        result = self._files.delete_many({"_id": {"$in": ids}}, session=session)
        self._chunks.delete_many({"files_id": {"$in": ids}}, session=session)
        if not result.deleted_count:
            raise NoFile(f"no file could be deleted because none matched filename "
                         f"{filename!r}")

    def find(self, filter: Optional[Mapping[str, Any]] = None, skip: int = 0, limit: int = 0,
             no_cursor_timeout: bool = False, sort: Any = None, batch_size: int = 0,
             session: Any = None) -> GridOutCursor:
        """A cursor over the matching files documents, as GridOut objects."""
        return GridOutCursor(self._collection, filter, skip, limit, no_cursor_timeout, sort,
                             batch_size, session)

    def open_download_stream_by_name(self, filename: str, revision: int = -1,
                                     session: Any = None) -> GridOut:
        """A GridOut for a revision of a file by name (0 the first, -1 the latest)."""
        _check_filename(filename)
        disallow_transactions(session)
        document = _revision(self._files, {"filename": filename}, revision, session)
        if document is None:
            raise NoFile(f"no version {revision} for filename {filename!r}")
        return open_with_lifetime(  # type: ignore[no-any-return]
            GridOut(self._collection, file_document=document, session=session),
            self._collection)

    @whole_operation
    def download_to_stream_by_name(self, filename: str, destination: Any, revision: int = -1,
                                   session: Any = None) -> None:
        """Write a revision's contents to ``destination``."""
        _copy_to(self.open_download_stream_by_name(filename, revision, session=session),
                 destination)

    @whole_operation
    def rename(self, file_id: Any, new_filename: str, session: Any = None) -> None:
        """Rename the file with this ``_id``; NoFile if there is none."""
        disallow_transactions(session)
        result = self._files.update_one({"_id": {"$eq": file_id}},
                                        {"$set": {"filename": new_filename}}, session=session)
        if not result.matched_count:
            raise NoFile(f"no files could be renamed {new_filename!r} because none matched "
                         f"file_id {file_id}")

    @whole_operation
    def drop(self, session: Any = None) -> None:
        """Drop the bucket's files and chunks collections (GridFS spec, "drop")."""
        disallow_transactions(session)
        self._files.drop(session=session)
        self._chunks.drop(session=session)

    @whole_operation
    def rename_by_name(self, filename: str, new_filename: str, session: Any = None) -> None:
        """Rename every revision of a file; NoFile if there is none."""
        disallow_transactions(session)
        result = self._files.update_many({"filename": filename},
                                         {"$set": {"filename": new_filename}}, session=session)
        if not result.matched_count:
            raise NoFile(f"no files could be renamed {new_filename!r} because none matched "
                         f"filename {filename!r}")
