"""GridFS (issue 18): GridFSBucket and the older GridFS API, the same with both drivers;
commands (index creation, chunk inserts, $eq queries) included. Results show the files and
chunks documents, so ``uploadDate`` is left out."""
import io

from .harness import S


def _files(db, bucket="fs"):
    return [{k: v for k, v in d.items() if k != "uploadDate"}
            for d in db[f"{bucket}.files"].find({}, sort=[("_id", 1)])]


def _chunks(db, bucket="fs"):
    return [(d["n"], bytes(d["data"])) for d in db[f"{bucket}.chunks"].find(
        {}, sort=[("files_id", 1), ("n", 1)])]


def _bucket_round_trip(c, m):
    db = c.database
    bucket = m.gridfs.GridFSBucket(db, chunk_size_bytes=4)
    file_id = bucket.upload_from_stream("a.txt", b"hello world", metadata={"k": 1})
    out = bucket.open_download_stream(file_id)
    return (out.read(), out.filename, out.length, out.chunk_size, out.metadata, _files(db),
            _chunks(db), sorted(db["fs.chunks"].index_information()),
            sorted(db["fs.files"].index_information()))


def _bucket_revisions(c, m):
    bucket = m.gridfs.GridFSBucket(c.database, bucket_name="media")
    for body in (b"one", b"two", b"three"):
        bucket.upload_from_stream("r.txt", body)
    return [bucket.open_download_stream_by_name("r.txt", revision=r).read()
            for r in (0, 1, 2, -1, -2, -3)]


def _bucket_missing_revision(c, m):
    bucket = m.gridfs.GridFSBucket(c.database)
    bucket.upload_from_stream("r.txt", b"x")
    return bucket.open_download_stream_by_name("r.txt", revision=3)


def _bucket_delete_rename(c, m):
    db = c.database
    bucket = m.gridfs.GridFSBucket(db, chunk_size_bytes=2)
    keep = bucket.upload_from_stream("keep", b"abcdef")
    gone = bucket.upload_from_stream("gone", b"xyz")
    bucket.delete(gone)
    bucket.rename(keep, "kept")
    bucket.upload_from_stream("many", b"1")
    bucket.upload_from_stream("many", b"2")
    bucket.rename_by_name("many", "lots")
    return _files(db), _chunks(db), [f.filename for f in bucket.find({}, sort=[("_id", 1)])]


def _bucket_errors(c, m):
    bucket = m.gridfs.GridFSBucket(c.database)
    found = []
    for call in (lambda: bucket.delete(12345), lambda: bucket.open_download_stream(1),
                 lambda: bucket.rename(1, "x"), lambda: bucket.delete_by_name("none"),
                 lambda: bucket.upload_from_stream(5, b"x")):
        try:
            call()
        except Exception as exc:
            found.append(type(exc).__name__)
    return found


def _file_exists(c, m):
    bucket = m.gridfs.GridFSBucket(c.database)
    bucket.upload_from_stream_with_id("id1", "f", b"a")
    bucket.upload_from_stream_with_id("id1", "g", b"b")


def _stream_to_and_from_files(c, m):
    bucket = m.gridfs.GridFSBucket(c.database, chunk_size_bytes=3)
    file_id = bucket.upload_from_stream("f", io.BytesIO(b"0123456789"))
    target = io.BytesIO()
    bucket.download_to_stream(file_id, target)
    by_name = io.BytesIO()
    bucket.download_to_stream_by_name("f", by_name)
    return target.getvalue(), by_name.getvalue()


def _grid_in_and_out(c, m):
    db = c.database
    with m.gridfs.GridFSBucket(db, chunk_size_bytes=5).open_upload_stream(
            "lines.txt", metadata={"kind": "text"}) as grid_in:
        grid_in.write(b"first line\nsecond")
        grid_in.write(b" line\nthird\n")
    out = m.gridfs.GridFSBucket(db).open_download_stream(grid_in._id)
    lines = [out.readline(), out.readline(3)]
    out.seek(0)
    head = out.read(5)
    out.seek(-6, 2)
    tail = out.read()
    out.seek(0)
    return lines, head, tail, list(out), out.tell(), grid_in.length, _chunks(db)


def _legacy_gridfs(c, m):
    db = c.database
    fs = m.gridfs.GridFS(db)
    first = fs.put(b"v1", filename="doc", contentType="text/plain")
    fs.put("v2 é", filename="doc", encoding="utf-8")
    return (fs.get(first).read(), fs.get_last_version("doc").read(),
            fs.get_version("doc", 0).read(), fs.list(), fs.exists(first),
            fs.exists(filename="doc"), fs.exists({"filename": "nothing"}),
            fs.find_one({"filename": "doc"}).read(), [g.read() for g in fs.find(
                {"filename": "doc"}, sort=[("uploadDate", 1)])])


def _legacy_delete_and_missing(c, m):
    fs = m.gridfs.GridFS(c.database)
    file_id = fs.put(b"x")
    fs.delete(file_id)
    fs.delete(file_id)  # no error
    try:
        fs.get(file_id)
    except Exception as exc:
        return type(exc).__name__, fs.exists(file_id), fs.find_one(file_id)


def _grid_in_attributes(c, m):
    fs = m.gridfs.GridFS(c.database)
    grid_in = fs.new_file(filename="n", custom=7, chunk_size=10)
    grid_in.write(b"12345")
    before = (grid_in.filename, grid_in.custom, grid_in.chunk_size, grid_in.closed)
    grid_in.close()
    grid_in.extra = "after close"
    return before, grid_in.length, grid_in.closed, fs.get(grid_in._id).extra


def _str_without_encoding(c, m):
    return m.gridfs.GridFS(c.database).put("text")


def _corrupt_missing_chunk(c, m):
    db = c.database
    bucket = m.gridfs.GridFSBucket(db, chunk_size_bytes=2)
    file_id = bucket.upload_from_stream("f", b"abcdef")
    db["fs.chunks"].delete_one({"files_id": file_id, "n": 1})
    return bucket.open_download_stream(file_id).read()


def _corrupt_truncated_chunk(c, m):
    db = c.database
    bucket = m.gridfs.GridFSBucket(db, chunk_size_bytes=4)
    file_id = bucket.upload_from_stream("f", b"abcdefgh")
    db["fs.chunks"].update_one({"files_id": file_id, "n": 0}, {"$set": {"data": b"ab"}})
    return bucket.open_download_stream(file_id).read()


def _abort(c, m):
    db = c.database
    grid_in = m.gridfs.GridFSBucket(db, chunk_size_bytes=2).open_upload_stream("f")
    grid_in.write(b"abcdef")
    grid_in.abort()
    return grid_in.closed, _files(db), _chunks(db)


def _in_transaction(c, m):
    with c.database.client.start_session() as s:
        s.start_transaction()
        try:
            return m.gridfs.GridFSBucket(c.database).upload_from_stream("f", b"x", session=s)
        finally:
            s.abort_transaction()


def _unacknowledged(c, m):
    return m.gridfs.GridFSBucket(c.database, write_concern=m.WriteConcern(w=0))


def _grid_out_not_writable(c, m):
    bucket = m.gridfs.GridFSBucket(c.database)
    out = bucket.open_download_stream(bucket.upload_from_stream("f", b"x"))
    return out.readable(), out.seekable(), out.writable(), out.write(b"y")


def _chunk_write_concern_error(c, m):
    """A write concern error on a chunk insert is raised as PyMongo raises it: the
    single-write error (WriteConcernError, its code), not the batch's BulkWriteError."""
    c.database.client.admin.command({"configureFailPoint": "failCommand", "mode": {"times": 1},
                                     "data": {"failCommands": ["insert"], "writeConcernError": {
                                         "code": 79, "errmsg": "wce"}}})
    try:
        m.gridfs.GridFSBucket(c.database).upload_from_stream("f", b"data")
    except m.errors.OperationFailure as exc:
        return type(exc).__name__, exc.code
    finally:
        c.database.client.admin.command({"configureFailPoint": "failCommand", "mode": "off"})
    return "no error"


SCENARIOS = [
    S("GridFSBucket chunk write concern error", _chunk_write_concern_error),
    S("GridFSBucket round trip", _bucket_round_trip),
    S("GridFSBucket revisions", _bucket_revisions),
    S("GridFSBucket missing revision", _bucket_missing_revision),
    S("GridFSBucket delete and rename", _bucket_delete_rename),
    S("GridFSBucket errors", _bucket_errors),
    S("GridFSBucket FileExists", _file_exists),
    S("GridFSBucket streams", _stream_to_and_from_files),
    S("GridIn and GridOut", _grid_in_and_out),
    S("GridFS put, get, versions", _legacy_gridfs),
    S("GridFS delete and missing file", _legacy_delete_and_missing),
    S("GridIn attributes", _grid_in_attributes),
    S("GridFS str without encoding", _str_without_encoding),
    S("GridFS corrupt: missing chunk", _corrupt_missing_chunk),
    S("GridFS corrupt: truncated chunk", _corrupt_truncated_chunk),
    S("GridIn abort", _abort),
    S("GridFS in a transaction", _in_transaction),
    S("GridFSBucket unacknowledged", _unacknowledged),
    S("GridOut is not writable", _grid_out_not_writable),
]
