"""Failure paths, round three (issue 46): what a hostile user and a hostile server found in
change streams and ``singlemongo watch``, GridFS, authentication, compression, exhaust
cursors, the topology cache and load balancers. Each test failed before its fix and names the
rule it guards."""
import pytest

from singlemongo import errors
from singlemongo.client import MongoClient

from .util import CommandRecorder


def test_a_gridfs_download_whose_chunk_query_keeps_failing_retries_once(mongo_replica_set):
    """GridFS download, CursorNotFound: the chunks query is started again once where it was,
    then the error is raised, as PyMongo does. Before, every CursorNotFound started it again:
    968 finds, then RecursionError."""
    from singlemongo.gridfs import GridFSBucket
    recorder = CommandRecorder()
    client = MongoClient(mongo_replica_set.uri, event_listeners=[recorder])
    bucket = GridFSBucket(client.g)
    file_id = bucket.upload_from_stream("f", b"x" * 10, chunk_size_bytes=4)
    for server in mongo_replica_set.servers:
        server.fail("find", code=43, errmsg="cursor id 1 not found", times=None,
                    namespace="g.fs.chunks")
    stream = bucket.open_download_stream(file_id)
    del recorder.events[:]
    with pytest.raises(errors.CursorNotFound):
        stream.read()
    assert recorder.names().count("find") == 2
    client.close()
