"""GridFS (as PyMongo's ``gridfs`` package, GridFS spec): files of any size stored in
chunks, with ``GridFSBucket`` (upload and download streams, by id or name, revisions) and
PyMongo's older ``GridFS`` API. ``install_as_pymongo()`` serves this package as ``gridfs``.

    from singlemongo.gridfs import GridFSBucket
    bucket = GridFSBucket(client.media)
    file_id = bucket.upload_from_stream("cat.jpg", open("cat.jpg", "rb"))
    data = bucket.open_download_stream(file_id).read()
"""
from singlemongo.gridfs.bucket import GridFS, GridFSBucket
from singlemongo.gridfs.errors import CorruptGridFile, FileExists, GridFSError, NoFile
from singlemongo.gridfs.grid_in import DEFAULT_CHUNK_SIZE, GridIn
from singlemongo.gridfs.grid_out import GridOut, GridOutCursor

__all__ = ["DEFAULT_CHUNK_SIZE", "CorruptGridFile", "FileExists", "GridFS", "GridFSBucket",
           "GridFSError", "GridIn", "GridOut", "GridOutCursor", "NoFile"]
