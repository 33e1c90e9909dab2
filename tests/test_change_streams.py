"""Change streams (issue 22, first part): ``watch()`` on a collection, a database and a
deployment, on the server's one socket, with PyMongo on the same simulated replica set as
the oracle; and the simulated server's event log that both read."""
import pymongo
import pytest
from pymongo.errors import OperationFailure

import singlemongo
from singlemongo.errors import OperationFailure as SmOperationFailure
from singlemongo.testing import ReplicaSet

VOLATILE = ("_id", "clusterTime", "wallTime")


@pytest.fixture()
def rs():
    with ReplicaSet(1) as deployment:
        yield deployment


def _both(rs):
    return [("pymongo", pymongo.MongoClient(rs.uri)), ("singlemongo", singlemongo.MongoClient(rs.uri))]


def _stable(change):
    return {k: v for k, v in change.items() if k not in VOLATILE}


def _writes(coll):
    coll.insert_one({"_id": 1, "a": 1, "sub": {"x": 1, "y": 2}})
    coll.update_one({"_id": 1}, {"$set": {"a": 2, "sub.x": 5}, "$unset": {"sub.y": ""}})
    coll.replace_one({"_id": 1}, {"b": 1})
    coll.delete_one({"_id": 1})


def test_a_collection_stream_reports_each_write_as_pymongo_sees_it(rs):
    """Change Streams: insert, update (updateDescription with dotted paths), replace and
    delete, in order, the same documents through both drivers."""
    seen = {}
    for name, client in _both(rs):
        coll = client.db[f"c_{name}"]
        with coll.watch() as stream:
            _writes(coll)
            seen[name] = [_stable(stream.next()) for _ in range(4)]
            for change in seen[name]:
                change["ns"] = dict(change["ns"], coll="c")
        client.close()
    assert seen["singlemongo"] == seen["pymongo"]
    assert [c["operationType"] for c in seen["pymongo"]] == ["insert", "update", "replace",
                                                             "delete"]
    assert seen["pymongo"][1]["updateDescription"] == {
        "updatedFields": {"a": 2, "sub.x": 5}, "removedFields": ["sub.y"],
        "truncatedArrays": []}


def test_try_next_waits_max_await_time_then_caches_the_batch_token(rs):
    """Change Streams, "Resume Token": an empty getMore still moves the resume token (the
    batch's postBatchResumeToken); a later stream resumed from it misses nothing."""
    client = singlemongo.MongoClient(rs.uri)
    coll = client.db.c
    with coll.watch(max_await_time_ms=50) as stream:
        assert stream.try_next() is None
        token = stream.resume_token
        assert token is not None and stream.alive
    coll.insert_one({"_id": 7})
    with coll.watch(resume_after=token) as resumed:
        assert resumed.next()["documentKey"] == {"_id": 7}
    get_mores = [c for c in rs.primary.command_log if "getMore" in c]
    assert get_mores[0]["maxTimeMS"] == 50


def test_a_reset_connection_resumes_once_from_the_cached_token(rs):
    """Change Streams, "Resume Process": a network error on getMore closes that cursor and
    runs the aggregate again with resumeAfter (one aggregate more, no change missed); the
    server's ResumableChangeStreamError label resumes too."""
    client = singlemongo.MongoClient(rs.uri)
    coll = client.db.c
    with coll.watch(max_await_time_ms=50) as stream:
        coll.insert_one({"_id": 1})
        rs.primary.fail("getMore", action="close", times=1)
        assert stream.next()["documentKey"] == {"_id": 1}
        coll.insert_one({"_id": 2})
        client.admin.command("configureFailPoint", "failGetMoreAfterCursorCheckout",
                             mode={"times": 1}, data={"errorCode": 10107})
        assert stream.next()["documentKey"] == {"_id": 2}
    aggregates = [c for c in rs.primary.command_log if "aggregate" in c]
    assert len(aggregates) == 3
    assert all("resumeAfter" in a["pipeline"][0]["$changeStream"] for a in aggregates[1:])


def test_an_error_that_is_not_resumable_closes_the_stream(rs):
    """Change Streams, "Resumable Error": any other error is raised, once, and closes the
    stream (the same as PyMongo)."""
    for name, client in _both(rs):
        with client.db.c.watch(max_await_time_ms=50) as stream:
            client.admin.command("configureFailPoint", "failCommand", mode={"times": 1},
                                 data={"failCommands": ["getMore"], "errorCode": 2})
            with pytest.raises((OperationFailure, SmOperationFailure)) as raised:
                stream.try_next()
            assert raised.value.code == 2, name
            assert not stream.alive, name


def test_database_and_deployment_streams_and_invalidate(rs):
    """A database's stream sees every collection of it; a deployment's every database but
    admin, config and local; a collection's ends with invalidate when it is dropped."""
    client = singlemongo.MongoClient(rs.uri)
    with client.db.watch() as db_stream, client.watch() as all_stream:
        client.db.a.insert_one({"_id": 1})
        client.other.b.insert_one({"_id": 2})
        assert db_stream.next()["ns"] == {"db": "db", "coll": "a"}
        assert [all_stream.next()["ns"]["db"] for _ in range(2)] == ["db", "other"]
    with client.db.a.watch() as stream:
        client.db.a.drop()
        assert [stream.next()["operationType"] for _ in range(2)] == ["drop", "invalidate"]
        assert not stream.alive
        with pytest.raises(StopIteration):
            stream.next()


def test_full_document_options(rs):
    """fullDocument 'updateLookup' reads the document now; pre- and post-images need the
    collection's changeStreamPreAndPostImages (required without it: error 47), as PyMongo
    sees them."""
    for name, client in _both(rs):
        db = client[f"db_{name}"]
        coll = db.create_collection("c", changeStreamPreAndPostImages={"enabled": True})
        with coll.watch(full_document="whenAvailable",
                        full_document_before_change="required") as stream:
            coll.insert_one({"_id": 1, "a": 1})
            coll.update_one({"_id": 1}, {"$inc": {"a": 1}})
            stream.next()
            update = stream.next()
            assert update["fullDocument"] == {"_id": 1, "a": 2}, name
            assert update["fullDocumentBeforeChange"] == {"_id": 1, "a": 1}, name
        plain = db.plain
        with plain.watch(full_document="updateLookup") as stream:
            plain.insert_one({"_id": 1})
            plain.update_one({"_id": 1}, {"$set": {"b": 1}})
            stream.next()
            assert stream.next()["fullDocument"] == {"_id": 1, "b": 1}, name
        with plain.watch(full_document_before_change="required",
                         max_await_time_ms=50) as stream:
            plain.delete_one({"_id": 1})
            with pytest.raises((OperationFailure, SmOperationFailure)) as raised:
                stream.next()
            assert raised.value.code == 47, name


def test_a_pipeline_that_changes_the_resume_token_is_refused(rs):
    """Change Streams: a stage that modifies _id is the server's error 280, for both."""
    for name, client in _both(rs):
        coll = client.db.c
        with coll.watch([{"$project": {"_id": 0}}], max_await_time_ms=50) as stream:
            coll.insert_one({"x": 1})
            with pytest.raises((OperationFailure, SmOperationFailure)) as raised:
                stream.next()
            assert raised.value.code == 280, name


def test_a_pending_event_behind_other_collections_writes_is_answered_at_once(rs):
    """awaitData: a getMore waits only when its stream has nothing to return, however many
    writes of other collections came after its next event (it looked at the last 64)."""
    client = pymongo.MongoClient(rs.uri)
    with client.db.a.watch(max_await_time_ms=2000) as stream:
        client.db.a.insert_one({"_id": 1})
        client.db.b.insert_many([{"i": i} for i in range(70)])  # 70 events of another stream
        cursor_id = stream._cursor.cursor_id
        assert rs.store.await_seconds({"getMore": cursor_id, "maxTimeMS": 2000}) is None
        assert stream.next()["documentKey"] == {"_id": 1}
        assert rs.store.await_seconds({"getMore": cursor_id, "maxTimeMS": 2000}) == 2.0


def _aggregates(server):
    return sum(1 for c in server.command_log if "aggregate" in c)


def test_a_killed_cursor_is_resumed_as_pymongo_resumes_it(rs):
    """Change Streams, "Resumable Error": CursorNotFound (43) is resumable whatever its
    labels (the server cannot know the cursor was a change stream's), as in PyMongo: the
    stream resumes once and returns the change written while its cursor was gone."""
    seen = {}
    for name, client in _both(rs):
        coll = client.db[f"killed_{name}"]
        with coll.watch(max_await_time_ms=50) as stream:
            assert stream.try_next() is None
            before = _aggregates(rs.primary)
            client.db.command("killCursors", coll.name, cursors=[stream._cursor.cursor_id])
            coll.insert_one({"_id": 1})
            seen[name] = (stream.next()["documentKey"], _aggregates(rs.primary) - before)
        client.close()
    assert seen["singlemongo"] == seen["pymongo"] == ({"_id": 1}, 1)


def test_behind_a_load_balancer_an_unlabelled_error_is_not_resumed():
    """Change Streams, "Resumable Error": a 4.4+ server labels what is resumable, and an
    error without the label is raised. Behind a load balancer the topology description has
    no wire version: it is the connection's hello that says 4.4+ (the driver took the
    description's 0, treated the server as pre-4.4 and resumed on code 6). As PyMongo."""
    from singlemongo.testing.deployments import LoadBalancer
    with LoadBalancer() as lb:
        outcomes = {}
        for name, client in (("pymongo", pymongo.MongoClient(lb.uri)),
                             ("singlemongo", singlemongo.MongoClient(lb.uri))):
            coll = client.db[f"lb_{name}"]
            with coll.watch(max_await_time_ms=50) as stream:
                client.admin.command("configureFailPoint", "failCommand", mode={"times": 1},
                                     data={"failCommands": ["getMore"], "errorCode": 6})
                coll.insert_one({"_id": 1})
                with pytest.raises((OperationFailure, SmOperationFailure)) as raised:
                    stream.next()
                outcomes[name] = (raised.value.code, stream.alive)
            client.close()
    assert outcomes["singlemongo"] == outcomes["pymongo"] == (6, False)


def test_a_timed_out_next_leaves_the_stream_open_and_the_next_call_resumes(rs):
    """CSOT, "Change Streams": timeoutMS bounds each next(); a next() that times out does
    not close the stream, and the following call resumes it (a new aggregate from the
    cached token) and returns what was written meanwhile."""
    client = singlemongo.MongoClient(rs.uri, timeoutMS=300)
    coll = client.db.timed
    with coll.watch(max_await_time_ms=50) as stream:
        rs.primary.fail("getMore", action="block", block_s=0.6)
        with pytest.raises(singlemongo.errors.PyMongoError) as raised:
            stream.next()
        assert raised.value.timeout and stream.alive
        before = _aggregates(rs.primary)
        coll.insert_one({"_id": 1})
        assert stream.next()["documentKey"] == {"_id": 1}
        assert _aggregates(rs.primary) == before + 1
