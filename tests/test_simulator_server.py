"""The simulated server does what MongoDB 7.0 does (issue 21), checked with PyMongo as the
client so that a difference is the simulator's, not singlemongo's: collection options
(capped, clustered, time-series, change-stream images, collMod), $collStats, returnKey and
showRecordId, the Stable API's strict mode, Atlas-only search index commands, and the
labels of SnapshotUnavailable in a transaction."""
import datetime

import pymongo
import pytest
from bson import Int64
from pymongo.errors import OperationFailure
from pymongo.server_api import ServerApi

from singlemongo.testing import Sharded





def test_capped_collection_keeps_its_newest_documents(db):
    """Capped collections: past ``max`` (or ``size``) the oldest documents go first."""
    coll = db.create_collection("capped", capped=True, size=4096, max=3)
    coll.insert_many([{"_id": i} for i in range(5)])
    coll.insert_one({"_id": 5})
    assert [d["_id"] for d in coll.find()] == [3, 4, 5]
    stats = next(coll.aggregate([{"$collStats": {"storageStats": {}, "count": {}}}]))
    assert stats["storageStats"]["capped"] is True and stats["storageStats"]["maxSize"] == 4096
    assert stats["count"] == 3
    assert db.command("listCollections", filter={"name": "capped"})["cursor"]["firstBatch"][0][
        "options"] == {"capped": True, "size": 4096, "max": 3}


def test_capped_needs_a_size(db):
    """A capped collection without ``size`` is refused, as MongoDB refuses it."""
    with pytest.raises(OperationFailure) as info:
        db.create_collection("capped", capped=True)
    assert info.value.code == 72


def test_size_limit_trims_by_bytes(db):
    """Capped by size: the total BSON size stays under the (rounded) limit."""
    coll = db.create_collection("bysize", capped=True, size=4096)
    coll.insert_many([{"_id": i, "pad": "x" * 1000} for i in range(10)])
    assert [d["_id"] for d in coll.find()] == [6, 7, 8, 9]


def test_clustered_index_is_listed_in_place_of_id(db):
    """Clustered collections: listIndexes shows the clustered index, listCollections its
    option with the index version."""
    coll = db.create_collection("clu", clusteredIndex={"key": {"_id": 1}, "unique": True,
                                                       "name": "by id"})
    assert list(coll.list_indexes()) == [{"v": 2, "key": {"_id": 1}, "name": "by id",
                                          "unique": True, "clustered": True}]
    info = next(db.list_collections(filter={"name": "clu"}))
    assert info["options"]["clusteredIndex"]["v"] == 2 and "idIndex" not in info


def test_time_series_collection_takes_duplicate_ids(db):
    """Time-series collections: typed so in listCollections, with the granularity's bucket
    span filled in, documents need the time field and may repeat an _id."""
    coll = db.create_collection("ts", timeseries={"timeField": "t", "granularity": "minutes"})
    t0 = datetime.datetime(2026, 1, 1)
    coll.insert_many([{"_id": 1, "t": t0}, {"_id": 1, "t": t0 + datetime.timedelta(1)}])
    assert [d["t"].day for d in coll.find(sort=[("t", -1)])] == [2, 1]
    info = next(db.list_collections(filter={"name": "ts"}))
    assert info["type"] == "timeseries"
    assert info["options"]["timeseries"] == {"timeField": "t", "granularity": "minutes",
                                             "bucketMaxSpanSeconds": 86400}
    with pytest.raises(pymongo.errors.BulkWriteError):
        coll.insert_many([{"_id": 2}])


def test_coll_mod_changes_options_and_indexes(db):
    """collMod: change-stream images on and off, and an index hidden with old and new."""
    db.create_collection("m", changeStreamPreAndPostImages={"enabled": False})
    db.m.create_index("x")
    db.command("collMod", "m", changeStreamPreAndPostImages={"enabled": True})
    reply = db.command("collMod", "m", index={"name": "x_1", "hidden": True})
    assert reply["hidden_old"] is False and reply["hidden_new"] is True
    assert next(db.list_collections(filter={"name": "m"}))["options"] == {
        "changeStreamPreAndPostImages": {"enabled": True}}
    with pytest.raises(OperationFailure) as info:
        db.command("collMod", "none")
    assert info.value.code == 26


def test_dropped_collection_forgets_its_options(db):
    """A collection created again after a drop has only its new options."""
    db.create_collection("again", capped=True, size=4096)
    db.drop_collection("again")
    db.create_collection("again")
    assert next(db.list_collections(filter={"name": "again"}))["options"] == {}


def test_return_key_and_show_record_id(db):
    """returnKey gives the used index's keys (none for a collection scan); showRecordId adds
    $recordId."""
    db.c.insert_many([{"_id": i, "x": i * 10} for i in (1, 2)])
    assert list(db.c.find({}, sort=[("_id", 1)], return_key=True)) == [{"_id": 1}, {"_id": 2}]
    assert list(db.c.find({"x": 10}, return_key=True)) == [{}]
    assert list(db.c.find({}, sort=[("_id", 1)], show_record_id=True))[0] == {
        "_id": 1, "x": 10, "$recordId": Int64(1)}


def test_api_strict_refuses_what_is_not_in_version_1(rs):
    """apiStrict: distinct and $listLocalSessions are not in API Version 1 (APIStrictError);
    find is."""
    rs.store.reset()
    client = pymongo.MongoClient(rs.uri, server_api=ServerApi("1", strict=True))
    try:
        db = client.sim
        assert db.c.find_one() is None
        with pytest.raises(OperationFailure) as info:
            db.c.distinct("x")
        assert info.value.code == 323 and "not in API Version 1" in str(info.value)
        with pytest.raises(OperationFailure) as info:
            list(client.admin.aggregate([{"$listLocalSessions": {}}]))
        assert info.value.details["codeName"] == "APIStrictError"
    finally:
        client.close()


def test_search_index_commands_are_atlas_only(db):
    """Outside Atlas a 7.0 server refuses the search index commands and $listSearchIndexes,
    saying Atlas."""
    db.create_collection("s")
    for call in (lambda: db.command("createSearchIndexes", "s", indexes=[]),
                 lambda: list(db.s.aggregate([{"$listSearchIndexes": {}}]))):
        with pytest.raises(OperationFailure) as info:
            call()
        assert info.value.code == 115 and "Atlas" in str(info.value)


def test_snapshot_unavailable_is_transient_in_a_transaction(rs):
    """SnapshotUnavailable (246) in a transaction carries TransientTransactionError and its
    code name."""
    rs.store.reset()
    client = pymongo.MongoClient(rs.uri)
    try:
        client.sim.c.insert_one({"_id": 0})
        client.admin.command({"configureFailPoint": "failCommand", "mode": {"times": 1},
                              "data": {"failCommands": ["insert"], "errorCode": 246}})
        with client.start_session() as session:
            session.start_transaction()
            with pytest.raises(OperationFailure) as info:
                client.sim.c.insert_one({"_id": 1}, session=session)
            session.abort_transaction()
        assert info.value.details["codeName"] == "SnapshotUnavailable"
        assert info.value.has_error_label("TransientTransactionError")
    finally:
        client.close()


def test_check_metadata_consistency_on_mongos_only():
    """checkMetadataConsistency: an empty cursor on a mongos."""
    with Sharded() as sharded:
        client = pymongo.MongoClient(sharded.uri)
        try:
            reply = client.admin.command("checkMetadataConsistency")
            assert reply["cursor"]["firstBatch"] == []
        finally:
            client.close()


def test_pop_on_a_missing_field_does_nothing(db):
    """$pop on a field the document lacks matches it and modifies nothing (MongoDB), where the
    engine failed with KeyError."""
    db.c.insert_one({"_id": 1})
    result = db.c.update_one({"_id": 1}, {"$pop": {"a": 1}})
    assert (result.matched_count, result.modified_count) == (1, 0)
    assert db.c.find_one() == {"_id": 1}


def test_a_cursor_hands_out_each_document_once(db, monkeypatch):
    """The simulator's cursors are linear in what they return (the engine's re-sliced all its
    results for each document: a find of 100,000 took minutes, so the bench's bulk rows
    measured the simulator, not the drivers). Counted in documents copied, not timed; and
    skip and limit still page as before."""
    from mongomock_ng.collection import Cursor
    copied = []
    compute = Cursor._compute_results

    def counted(self, *args, **kwargs):
        results = compute(self, *args, **kwargs)
        if results is not self._results:  # a slice: a copy of the results
            copied.append(len(results))
        return results
    monkeypatch.setattr(Cursor, "_compute_results", counted)
    n = 2000
    db.many.insert_many([{"_id": i} for i in range(n)])
    assert [d["_id"] for d in db.many.find()] == list(range(n))
    assert sum(copied) <= 3 * n, sum(copied)
    assert [d["_id"] for d in db.many.find(skip=5, limit=3)] == [5, 6, 7]
    assert [d["_id"] for d in db.many.find(skip=n - 2, limit=5)] == [n - 2, n - 1]
    assert [d["_id"] for d in db.many.find(skip=3, limit=-2)] == [3, 4]


@pytest.mark.parametrize("typo, meant", [("fnd", "find"), ("getmore", "getMore"),
                                         ("currentop", "currentOp"),
                                         ("insrt", "insert")])
def test_a_fault_for_a_misspelt_command_is_refused(typo, meant):
    """Issue 57: ``fail("fnd")`` was accepted and never fired (names are case-sensitive, as
    the server's). A name close to a served command is refused naming it; a command the
    simulator does not implement may still be failed."""
    from singlemongo.testing import Standalone
    with Standalone() as deployment:
        server = deployment.servers[0]
        with pytest.raises(ValueError, match=f"did you mean '{meant}'"):
            server.fail(typo)
        with pytest.raises(ValueError, match=f"did you mean '{meant}'"):
            server.fail("*", commands=(typo,))
        assert not server.faults
        server.fail("replSetGetStatus")  # not served here, and no typo: allowed


@pytest.mark.parametrize("name", ["frobnicate", "selectAll", "findOneAndUpdate"])
def test_a_fault_for_a_command_mongodb_does_not_have_is_refused(name):
    """Rule: the controls refuse a command name MongoDB does not have, naming the valid ones
    (issue 57). A name far from every command (``frobnicate``), or a driver helper's name in
    place of its command's (``findOneAndUpdate`` is ``findAndModify``), was accepted and the
    fault never fired. A command MongoDB has that the simulator does not serve may still be
    failed."""
    from singlemongo.testing import Standalone
    with Standalone() as deployment:
        server = deployment.servers[0]
        with pytest.raises(ValueError, match=f"MongoDB has no command '{name}'.*(did you "
                                             f"mean|command_names.py)"):
            server.fail(name)
        assert not server.faults
        server.fail("shutdown")  # MongoDB's, not served here: allowed
        server.fail("*")
        assert len(server.faults) == 2
