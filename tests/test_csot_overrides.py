"""timeoutMS overrides the deprecated timeouts, and a session carries its own (client-side
operations timeout, "Validation and Overrides" and "Sessions"; issue 18: per-operation and
per-session timeoutMS as the unified CSOT tests use them)."""
import threading

import pytest

import singlemongo
from singlemongo import MongoClient, errors

from .util import eventually


def _last(server, name):
    return [c for c in server.command_log if name in c][-1]


def test_a_deadline_drops_wtimeout_from_the_write_concern(mongo_replica_set):
    """"Validation and Overrides": deprecated timeout options (wTimeoutMS) are ignored when
    timeoutMS is in force, from the client or from a timeout() block. wtimeout was sent."""
    primary = mongo_replica_set.servers[0]
    client = MongoClient(mongo_replica_set.uri, wTimeoutMS=50)
    client.test.c.insert_one({"_id": 1})
    assert _last(primary, "insert")["writeConcern"] == {"wtimeout": 50}  # no deadline: kept
    with singlemongo.timeout(5):
        client.test.c.insert_one({"_id": 2})
    assert "writeConcern" not in _last(primary, "insert")
    client.close()
    client = MongoClient(mongo_replica_set.uri, w="majority", wTimeoutMS=50, timeoutMS=5000)
    client.test.c.delete_one({"_id": 2})
    assert _last(primary, "delete")["writeConcern"] == {"w": "majority"}
    client.close()


def test_a_session_default_timeout_bounds_commit_and_abort(mongo_replica_set):
    """"Sessions": defaultTimeoutMS is the timeoutMS of commitTransaction and
    abortTransaction. start_session refused the option."""
    primary = mongo_replica_set.servers[0]
    client = MongoClient(mongo_replica_set.uri)
    session = client.start_session(default_timeout_ms=200)
    assert session.options.default_timeout_ms == 200
    primary.fail("commitTransaction", action="block", block_s=0.6, times=1)
    session.start_transaction()
    client.test.c.insert_one({"_id": 1}, session=session)
    with pytest.raises(errors.PyMongoError) as caught:
        session.commit_transaction()
    assert caught.value.timeout
    assert 0 < _last(primary, "commitTransaction")["maxTimeMS"] <= 200
    session.start_transaction()
    client.test.c.insert_one({"_id": 2}, session=session)
    session.abort_transaction()
    assert 0 < _last(primary, "abortTransaction")["maxTimeMS"] <= 200
    session.end_session()
    client.close()


def test_an_operation_timeout_overrides_the_session_default(mongo_replica_set):
    """"Validation and Overrides": the operation's own timeoutMS (a timeout() block) wins
    over the session's default."""
    primary = mongo_replica_set.servers[0]
    client = MongoClient(mongo_replica_set.uri)
    with client.start_session(default_timeout_ms=100) as session:
        session.start_transaction()
        client.test.c.insert_one({"_id": 1}, session=session)
        primary.fail("commitTransaction", action="block", block_s=0.3, times=1)
        with singlemongo.timeout(10):
            session.commit_transaction()
        assert _last(primary, "commitTransaction")["maxTimeMS"] > 1000
    assert client.test.c.count_documents({}) == 1
    client.close()


@pytest.mark.parametrize("value,error", [("5", TypeError), (True, TypeError),
                                         (-1, ValueError)])
def test_a_bad_session_default_timeout_is_refused(value, error):
    """Bad input names the option and the value; start_session does no I/O."""
    client = MongoClient("mongodb://localhost:1")
    with pytest.raises(error, match="default_timeout_ms must be"):
        client.start_session(default_timeout_ms=value)
    client.close()


def test_timeout_ms_outranks_wait_queue_timeout(mongo_replica_set):
    """"Validation and Overrides": waitQueueTimeoutMS is ignored when timeoutMS is set, so a
    thread waiting for the client's operation in flight waits the operation's timeoutMS. It
    gave up after waitQueueTimeoutMS."""
    client = MongoClient(mongo_replica_set.uri, waitQueueTimeoutMS=50, timeoutMS=5000)
    client.test.c.insert_one({"x": 1})
    mongo_replica_set.servers[0].fail("find", action="block", block_s=0.4, times=1)
    worker = threading.Thread(target=client.test.c.find_one)
    worker.start()
    assert eventually(lambda: mongo_replica_set.servers[0].commands["find"] == 1)
    client.test.c.insert_one({"x": 2})  # waits about 0.4 s, within timeoutMS
    worker.join()
    assert client.test.c.count_documents({}) == 2
    client.close()


def test_a_gridfs_upload_is_one_operation_for_timeout_ms(mongo_replica_set):
    """"GridFS API": upload_from_stream runs within one timeoutMS, not one per command.
    Each of its commands had a fresh timeoutMS, so two slow ones passed."""
    from singlemongo.gridfs import GridFSBucket
    primary = mongo_replica_set.servers[0]
    client = MongoClient(mongo_replica_set.uri, timeoutMS=300)
    bucket = GridFSBucket(client.test)
    primary.fail("find", action="block", block_s=0.2, times=1)
    primary.fail("listIndexes", action="block", block_s=0.2, times=1)
    with pytest.raises(errors.PyMongoError) as caught:
        bucket.upload_from_stream("f", b"\x11\x22")
    assert caught.value.timeout
    client.close()


def test_a_gridfs_download_stream_lives_within_timeout_ms(mongo_replica_set):
    """"GridFS API": a stream opened under timeoutMS has that long for all its reads; the
    read after the deadline times out without sending. Each read had a fresh timeoutMS."""
    from singlemongo.gridfs import GridFSBucket
    client = MongoClient(mongo_replica_set.uri)
    file_id = GridFSBucket(client.test).upload_from_stream("f", b"x" * 10, chunk_size_bytes=4)
    with singlemongo.timeout(0.3):
        stream = GridFSBucket(client.test).open_download_stream(file_id)
    mongo_replica_set.servers[0].fail("find", action="block", block_s=0.4, times=1)
    with pytest.raises(errors.PyMongoError) as caught:
        stream.read()
    assert caught.value.timeout
    client.close()


def test_a_gridfs_upload_date_comes_from_the_clients_clock(mongo_replica_set, make_client,
                                                           fake_clock):
    """Only clock.py reads time: uploadDate is the client's clock (a FakeClock's wall), as
    every other time the driver reads. It was datetime.now()."""
    from singlemongo.gridfs import GridFSBucket
    client = make_client(mongo_replica_set)
    bucket = GridFSBucket(client.test)
    file_id = bucket.upload_from_stream("f", b"data")
    uploaded = bucket.open_download_stream(file_id).upload_date
    assert uploaded.timestamp() == pytest.approx(fake_clock.wall(), abs=0.01)
