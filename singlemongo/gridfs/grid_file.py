"""``gridfs.grid_file``: where PyMongo keeps GridFS's classes (GridIn, GridOut, GridOutCursor,
GridFS, GridFSBucket) and its constants."""
from singlemongo.gridfs.bucket import GridFS, GridFSBucket
from singlemongo.gridfs.errors import CorruptGridFile, FileExists, NoFile
from singlemongo.gridfs.grid_in import DEFAULT_CHUNK_SIZE, GridIn
from singlemongo.gridfs.grid_out import GridOut, GridOutChunkIterator, GridOutCursor, GridOutIterator

__all__ = ["DEFAULT_CHUNK_SIZE", "CorruptGridFile", "FileExists", "GridFS", "GridFSBucket",
           "GridIn", "GridOut", "GridOutChunkIterator", "GridOutCursor", "GridOutIterator",
           "NoFile"]
