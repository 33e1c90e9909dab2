"""What PyMongo's own test suite needs of the simulated server (issue 48), each checked with
PyMongo as the client against MongoDB's documented behaviour: fail points, read concern
validation, index identity and options, server-side JavaScript's ``sleep``, ``min``/``max``
with ``hint``, text search, replication stopped, and the server's limits on message size."""
import time

import pymongo
import pytest
from bson import Int64
from pymongo.collation import Collation
from pymongo.errors import ExecutionTimeout, OperationFailure, WriteConcernError
from pymongo.read_concern import ReadConcern

pytest_plugins = ["tests.simulated"]


def fail_point(client, name, mode):
    client.admin.command("configureFailPoint", name, mode=mode)


def test_max_time_always_time_out_fails_only_what_has_a_time_limit(client, db):
    """Fail point maxTimeAlwaysTimeOut: every operation with a time limit fails with
    MaxTimeMSExpired (50), a getMore of a cursor opened with one included; the others run."""
    db.coll.insert_many([{} for _ in range(10)])
    cursor = db.coll.find(batch_size=2).max_time_ms(100)
    next(cursor)
    fail_point(client, "maxTimeAlwaysTimeOut", "alwaysOn")
    try:
        with pytest.raises(ExecutionTimeout) as info:
            db.coll.find_one(max_time_ms=100)
        assert info.value.code == 50
        with pytest.raises(ExecutionTimeout):
            list(cursor)                       # its getMore
        with pytest.raises(ExecutionTimeout):
            db.command("count", "coll", maxTimeMS=10)
        assert db.coll.count_documents({}) == 10  # no time limit: runs
    finally:
        fail_point(client, "maxTimeAlwaysTimeOut", "off")
    assert db.coll.find_one(max_time_ms=100) == {"_id": db.coll.find_one()["_id"]}


def test_an_unknown_read_concern_level_is_refused(db):
    """The server validates the read concern level (FailedToParse, 9); PyMongo sends it."""
    with pytest.raises(OperationFailure) as info:
        db.get_collection("coll", read_concern=ReadConcern("unknown")).find_one()
    assert info.value.code == 9
    assert db.get_collection("coll", read_concern=ReadConcern("local")).find_one() is None


def test_indexes_of_one_key_with_different_collations_are_different_indexes(db):
    """An index is its key pattern and its collation: the same key may be indexed under
    several collations, each with its own name."""
    db.coll.create_indexes([
        pymongo.IndexModel("f", collation=Collation("en_US")),
        pymongo.IndexModel("f", name="japanese", collation=Collation("ja")),
        pymongo.IndexModel("f", name="simple")])
    info = db.coll.index_information()
    assert info["f_1"]["collation"]["locale"] == "en_US"
    assert info["japanese"]["collation"]["locale"] == "ja"
    assert "collation" not in info["simple"]
    with pytest.raises(OperationFailure) as same:
        db.coll.create_index("f", name="again", collation=Collation("ja"))
    assert same.value.code == 85  # the same key and collation under another name


def test_an_index_keeps_its_background_option(db):
    db.coll.create_index("a")
    db.coll.create_index("b", background=False)
    db.coll.create_index("c", background=True)
    info = db.coll.index_information()
    assert "background" not in info["a_1"]
    assert info["b_1"]["background"] is False and info["c_1"]["background"] is True


def test_where_can_sleep_as_the_shell_does(db):
    """Server-side JavaScript has the shell's ``sleep(ms)`` (PyMongo's tests delay a query
    with it); the sleeping of one script is bounded by the JavaScript time limit."""
    db.coll.insert_one({"x": 1})
    started = time.monotonic()
    assert db.coll.find_one({"$where": "function() { sleep(300); return true; }"})["x"] == 1
    assert time.monotonic() - started >= 0.3


def test_where_refuses_code_with_a_scope(db):
    """MongoDB 4.4 removed Code with scope from $where, even an empty scope."""
    from bson.code import Code
    db.coll.insert_many([{"x": i} for i in range(5)])
    for code in (Code("this.x < i", {"i": 3}), Code("this.x < 3", {})):
        with pytest.raises(OperationFailure):
            list(db.coll.find({"$where": code}))
    assert len(list(db.coll.find({"$where": Code("this.x < 3")}))) == 3


def test_a_hinted_index_orders_the_results(db):
    """Without a sort, a find hinted to an index returns documents in that index's order."""
    db.coll.insert_many([{"num": i} for i in range(20)])
    db.coll.create_index([("num", pymongo.DESCENDING)])
    assert next(db.coll.find())["num"] == 0
    assert next(db.coll.find().hint([("num", pymongo.DESCENDING)]))["num"] == 19
    assert next(db.coll.find().hint("num_-1"))["num"] == 19


def test_min_and_max_bound_the_hinted_index(db):
    """min (inclusive) and max (exclusive) bound the hinted index's keys, in its order; they
    need a hint whose key pattern they follow."""
    db.coll.insert_many([{"j": j, "k": j} for j in range(10)])
    db.coll.create_index("j")
    db.coll.create_index([("j", 1), ("k", 1)])
    assert [d["j"] for d in db.coll.find().max([("j", 3)]).hint([("j", 1)])] == [0, 1, 2]
    assert [d["j"] for d in db.coll.find().min([("j", 7)]).hint([("j", 1)])] == [7, 8, 9]
    assert len(list(db.coll.find().min([("j", 3), ("k", 3)]).max([("j", 5), ("k", 5)])
                    .hint([("j", 1), ("k", 1)]))) == 2
    assert [d["j"] for d in db.coll.find({"$min": {"j": 8}, "$query": {}}, hint="j_1")] == [8, 9]
    with pytest.raises(OperationFailure):  # not the index's field order
        list(db.coll.find().max([("k", 3), ("j", 3)]).hint([("j", 1), ("k", 1)]))
    with pytest.raises(OperationFailure) as info:  # no hint (PyMongo checks it first too)
        db.command("find", "coll", max={"j": 3})
    assert info.value.code == 51173


def test_dropping_a_missing_collection_succeeds_and_waits_for_its_write_concern(db):
    """MongoDB 7.0: drop of a collection that does not exist is ok (it was NamespaceNotFound),
    so an unsatisfiable write concern still comes back as a write concern error."""
    assert db.command("drop", "nothing_here")["ok"] == 1
    with pytest.raises(WriteConcernError):
        db.with_options(write_concern=pymongo.WriteConcern(w=50)).drop_collection("nothing")


def test_stopped_replication_times_out_a_replicated_write_concern():
    """Fail point stopReplProducer on a secondary: a write that waits for more than the
    primary times out waiting for replication (64, errInfo.wtimeout), and is applied; the
    primary's own acknowledgement is unaffected, and turning the fail point off restores
    replication."""
    from singlemongo.testing import ReplicaSet
    with ReplicaSet(3) as rs, pymongo.MongoClient(rs.uri) as client:
        secondary = pymongo.MongoClient(rs.servers[1].address_text, directConnection=True)
        replicated = client.sim.get_collection(
            "coll", write_concern=pymongo.WriteConcern(w=2, wtimeout=1))
        secondary.admin.command("configureFailPoint", "stopReplProducer", mode="alwaysOn")
        try:
            with pytest.raises(WriteConcernError) as info:
                replicated.insert_one({"a": 1})
            assert info.value.code == 64 and info.value.details["errInfo"]["wtimeout"] is True
            assert client.sim.coll.insert_one({"a": 2}).acknowledged  # w: 1
        finally:
            secondary.admin.command("configureFailPoint", "stopReplProducer", mode="off")
            secondary.close()
        assert client.sim.coll.count_documents({}) == 2
        assert replicated.insert_one({"a": 3}).acknowledged


def test_integer_arithmetic_keeps_longs_as_the_server_does(db):
    """MongoDB's integer arithmetic: a long operand makes a long result, and an int32 that
    overflows becomes a long; PyMongo's custom-type tests decode longs with a codec of their
    own, so an int where a long belongs is a different type to them."""
    from bson.codec_options import CodecOptions
    raw = db.get_collection("coll", codec_options=CodecOptions(document_class=dict))
    raw.insert_many([{"_id": 1, "qty": Int64(1)}, {"_id": 2, "qty": Int64(10)},
                     {"_id": 3, "n": 2**31 - 1}, {"_id": 4, "small": 1}])
    [group] = raw.aggregate([{"$match": {"qty": {"$exists": True}}},
                             {"$group": {"_id": None, "total": {"$sum": "$qty"}}}])
    assert type(group["total"]) is Int64 and group["total"] == 11
    raw.update_one({"_id": 1}, {"$inc": {"qty": 1}})
    raw.update_one({"_id": 3}, {"$inc": {"n": 1}})
    raw.update_one({"_id": 4}, {"$inc": {"small": 1}, "$mul": {"other": Int64(2)}})
    docs = {d["_id"]: d for d in raw.find()}
    assert type(docs[1]["qty"]) is Int64 and docs[1]["qty"] == 2
    assert type(docs[3]["n"]) is Int64 and docs[3]["n"] == 2**31
    assert type(docs[4]["small"]) is int and type(docs[4]["other"]) is Int64


def test_a_text_index_is_kept_as_the_server_keeps_it(db):
    """A text index's key is {_fts: "text", _ftsx: 1}, its fields are its weights, with the
    version-3 options a server adds."""
    assert db.coll.create_index([("t", "text")]) == "t_text"
    index = db.coll.index_information()["t_text"]
    assert index["key"] == [("_fts", "text"), ("_ftsx", 1)]
    assert index["weights"] == {"t": 1} and index["textIndexVersion"] == 3
    assert index["default_language"] == "english"
    assert index["language_override"] == "language"


def test_text_search_matches_scores_and_sorts(db):
    """$text: terms (stemmed, case-insensitive, stop words ignored), phrases and negations;
    the textScore is the server's per-field formula, and sorts highest first."""
    with pytest.raises(OperationFailure) as info:
        list(db.coll.find({"$text": {"$search": "spam"}}))
    assert info.value.code == 27  # no text index
    db.coll.create_index([("t", "text")])
    db.coll.insert_many([{"_id": 1, "t": "spam eggs and spam"}, {"_id": 2, "t": "Spam"},
                         {"_id": 3, "t": "egg sausage and bacon"}, {"_id": 4, "t": 5}])
    found = list(db.coll.find({"$text": {"$search": "spam"}},
                              {"score": {"$meta": "textScore"}})
                 .sort([("score", {"$meta": "textScore"})]))
    assert [d["_id"] for d in found] == [2, 1]
    assert found[0]["score"] == pytest.approx(1.0)        # 1 match of 1 token
    assert found[1]["score"] == pytest.approx(0.5 * 2 / 3 + 0.5)  # 2 of 3 ("and" is a stop word)
    assert {d["_id"] for d in db.coll.find({"$text": {"$search": "eggs"}})} == {1, 3}
    assert {d["_id"] for d in db.coll.find({"$text": {"$search": "egg -bacon"}})} == {1}
    assert {d["_id"] for d in db.coll.find({"$text": {"$search": '"sausage and"'}})} == {3}
    assert db.coll.count_documents({"$text": {"$search": "spam"}}) == 2
    assert "\x00textScore" not in db.coll.find_one({"$text": {"$search": "spam"}})


def test_a_document_over_16_mib_is_refused_by_the_server(db):
    """maxBsonObjectSize (16 MiB): an insert over it is a write error (2) and a replacement
    over it is 17419; the statements before it are applied, as in an ordered bulk."""
    big = "x" * (16 * 1024 * 1024)
    with pytest.raises(pymongo.errors.BulkWriteError) as info:
        db.coll.insert_many([{"a": 1}, {"big": big}, {"a": 2}])
    assert info.value.details["nInserted"] == 1
    assert info.value.details["writeErrors"][0]["code"] == 2
    with pytest.raises(OperationFailure) as replaced:
        db.coll.replace_one({"a": 1}, {"big": big})
    assert replaced.value.code == 17419
    half = "x" * (8 * 1024 * 1024)
    assert len(db.coll.insert_many([{"h": half}, {"h": half}]).inserted_ids) == 2


def test_validation_refuses_an_update_without_applying_it_and_bypass_skips_it(db):
    """A refused update (121) leaves the document as it was (the engine kept the change);
    bypassDocumentValidation skips validation for updates, replacements, upserts and
    findAndModify, as for inserts."""
    db.coll.insert_one({"_id": 1, "z": 5})
    db.command("collMod", "coll", validator={"z": {"$gte": 0}})
    with pytest.raises(OperationFailure) as info:
        db.coll.update_one({"_id": 1}, {"$inc": {"z": -10}})
    assert info.value.code == 121 and db.coll.find_one()["z"] == 5
    db.coll.update_one({"_id": 1}, {"$inc": {"z": -10}}, bypass_document_validation=True)
    db.coll.replace_one({"_id": 1}, {"z": -6}, bypass_document_validation=True)
    db.coll.update_one({"_id": 2}, {"$set": {"z": -1}}, upsert=True,
                       bypass_document_validation=True)
    db.command("findAndModify", "coll", query={"_id": 1}, update={"$inc": {"z": -1}},
               bypassDocumentValidation=True)
    assert {d["_id"]: d["z"] for d in db.coll.find()} == {1: -7, 2: -1}
    with pytest.raises(OperationFailure):
        db.coll.find_one_and_update({"_id": 1}, {"$inc": {"z": -1}})
    assert db.coll.find_one({"_id": 1})["z"] == -7


def test_conditions_on_an_array_field_apply_independently(db):
    """MongoDB's "Query an Array of Embedded Documents": without $elemMatch, each condition
    on a field inside an array may be met by a different element."""
    db.inventory.insert_many([
        {"item": "journal", "instock": [{"w": "A", "qty": 5}, {"w": "C", "qty": 15}]},
        {"item": "paper", "instock": [{"w": "A", "qty": 60}, {"w": "B", "qty": 15}]},
        {"item": "planner", "instock": [{"w": "A", "qty": 40}, {"w": "B", "qty": 5}]},
        {"item": "pens", "instock": [{"w": "A", "qty": 50}]}])
    spread = {"instock.qty": {"$gt": 10, "$lte": 20}}
    assert db.inventory.count_documents(spread) == 3          # planner: 40 > 10, 5 <= 20
    assert db.inventory.count_documents(
        {"instock": {"$elemMatch": {"qty": {"$gt": 10, "$lte": 20}}}}) == 2
    assert db.inventory.count_documents({"item": {"$regex": "^P", "$options": "i"}}) == 3


def test_a_change_stream_needs_majority_read_concern(rs, client, db):
    """$changeStream refuses any read concern but majority (PyMongo leaves it to the server)."""
    with pytest.raises(OperationFailure):
        db.get_collection("coll", read_concern=ReadConcern("local")).watch()
    with db.get_collection("coll", read_concern=ReadConcern("majority")).watch():
        pass


def test_a_large_change_event_is_split_into_fragments(db):
    """$changeStreamSplitLargeEvent: an event over 16 MiB comes as fragments, each with
    splitEvent {fragment, of} and the event's fields in order."""
    coll = db.create_collection("big", changeStreamPreAndPostImages={"enabled": True})
    coll.insert_one({"_id": 1, "value": "q" * 10 * 1024 * 1024})
    with coll.watch([{"$changeStreamSplitLargeEvent": {}}],
                    full_document_before_change="required") as stream:
        coll.update_one({"_id": 1}, {"$set": {"value": "z" * 10 * 1024 * 1024}})
        first, second = stream.next(), stream.next()
    assert first["splitEvent"] == {"fragment": 1, "of": 2}
    assert second["splitEvent"] == {"fragment": 2, "of": 2}
    assert first["operationType"] == "update"
    assert first["_id"] != second["_id"]
    assert {"fullDocumentBeforeChange", "updateDescription"} <= set(first) | set(second)
    assert not {"fullDocumentBeforeChange", "updateDescription"} <= set(first)
    with pytest.raises(OperationFailure):
        coll.watch([{"$changeStreamSplitLargeEvent": {}}, {"$match": {}}])


def test_fsync_and_background_validation(client, db):
    """fsync answers (nothing to flush in memory); validate runs in the background but not
    with full, which a server refuses in that combination."""
    db.coll.insert_one({})
    assert client.admin.command("fsync")["ok"] == 1
    assert db.validate_collection("coll", background=True)["valid"] is True
    with pytest.raises(OperationFailure):
        db.validate_collection("coll", full=True, background=True)


def test_list_databases_always_has_the_system_databases(client):
    """admin, config and local exist on every server, before anything is written."""
    assert {"admin", "config", "local"} <= set(client.list_database_names())
    assert [d["name"] for d in client.list_databases(filter={"name": "admin"})] == ["admin"]


def test_list_local_sessions_lists_the_sessions_the_server_has_seen(client, db):
    """$listLocalSessions lists every session in the server's cache, not only the calling
    command's: an unacknowledged aggregate (no session of its own) still finds them."""
    with client.start_session() as session:
        db.coll.insert_one({}, session=session)
        seen = [d["_id"]["id"] for d in client.admin.aggregate([{"$listLocalSessions": {}}])]
        assert session.session_id["id"] in seen
    unacknowledged = client.admin.with_options(write_concern=pymongo.WriteConcern(w=0))
    with unacknowledged.aggregate([{"$listLocalSessions": {}}, {"$limit": 1},
                                   {"$project": {"_id": 0, "dummy": "x"}},
                                   {"$merge": {"into": {"db": "sim", "coll": "out"}}}]):
        pass
    deadline = time.monotonic() + 5
    while db.out.find_one() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert db.out.find_one()["dummy"] == "x"


def _ixscan(plan):
    while plan.get("stage") not in ("IXSCAN", "COLLSCAN", "IDHACK"):
        plan = plan["inputStage"]
    return plan


def test_a_partial_index_is_checked_and_used_only_for_queries_that_imply_its_filter(db):
    """Partial indexes: a malformed filter is refused when the index is built; the planner
    uses the index (isPartial) only when the query implies its filter."""
    for bad in (5, {"x": {"$asdasd": 3}}, {"$and": 5}):
        with pytest.raises(OperationFailure):
            db.coll.create_index("x", partialFilterExpression=bad)
    db.coll.create_index("x", partialFilterExpression={"a": {"$lte": 1.5}})
    db.coll.insert_many([{"x": 5, "a": 2}, {"x": 6, "a": 1}])
    for query in ({"x": 6, "a": 1}, {"x": {"$gt": 1}, "a": 1}, {"x": 6, "a": {"$lte": 1}}):
        scan = _ixscan(db.coll.find(query).explain()["queryPlanner"]["winningPlan"])
        assert scan["stage"] == "IXSCAN" and scan["indexName"] == "x_1" and scan["isPartial"]
    for query in ({"x": 6, "a": {"$lte": 1.6}}, {"x": 6}):
        scan = _ixscan(db.coll.find(query).explain()["queryPlanner"]["winningPlan"])
        assert scan["stage"] == "COLLSCAN"


def test_a_transaction_refuses_indexes_on_existing_collections_and_writing_pipelines():
    """Transactions ("DDL operations"): createIndexes on a collection that existed before the
    transaction, and a pipeline with $out or $merge, are OperationNotSupportedInTransaction
    (263); an index on a collection the transaction creates is allowed."""
    from singlemongo.testing import ReplicaSet
    with ReplicaSet(3) as rs, pymongo.MongoClient(rs.uri) as client:
        coll = client.test.coll
        coll.insert_one({})
        for op in (lambda s: coll.create_index("a", session=s),
                   lambda s: list(coll.aggregate([{"$out": "other"}], session=s))):
            with client.start_session() as s:
                s.start_transaction()
                with pytest.raises(OperationFailure) as info:
                    op(s)
                assert info.value.code == 263
                s.abort_transaction()
        with client.start_session() as s, s.start_transaction():
            client.test.fresh.create_index("a", session=s)
        assert "a_1" in client.test.fresh.index_information()


def test_a_read_past_its_max_time_ms_is_interrupted(db):
    """maxTimeMS bounds a read on the server: past it, MaxTimeMSExpired (50)."""
    db.t.insert_one({"x": 1})
    with pytest.raises(ExecutionTimeout) as info:
        db.t.find_one({"$where": "function() { sleep(200); return true; }"}, max_time_ms=20)
    assert info.value.code == 50
    assert db.t.find_one({"$where": "function() { return true; }"}, max_time_ms=5000)["x"] == 1


def test_a_collection_outlives_its_last_document(db):
    """A collection a write created exists, empty, until it is dropped (renaming it works)."""
    db.coll.insert_one({})
    db.coll.delete_many({})
    assert "coll" in db.list_collection_names()
    db.coll.rename("renamed")
    assert db.list_collection_names() == ["renamed"]


def test_delete_many_removes_every_match_whatever_its_id(db):
    """delete_many removes each matched document by its _id in the store, documents as _ids
    included (it built an $in of every _id, quadratic: PyMongo's 10,000-document cleanup
    took 35 s and its monitors gave up on the server)."""
    db.coll.insert_many([{"_id": i, "k": i % 2} for i in range(2000)] +
                        [{"_id": {"a": 1}, "k": 1}])
    assert db.coll.delete_many({"k": 1}).deleted_count == 1001
    assert db.coll.count_documents({}) == 1000 and db.coll.find_one({"k": 1}) is None


def test_a_snapshot_cursor_continues_with_getmore():
    """A snapshot read's cursor is read with getMore, which carries the session's snapshot
    read concern (PyMongo's raw batches ask for an empty first batch)."""
    from bson import decode_all

    from singlemongo.testing import ReplicaSet
    with ReplicaSet(3) as rs, pymongo.MongoClient(rs.uri) as client:
        docs = [{"_id": i, "x": 3.0 * i} for i in range(10)]
        client.db.coll.insert_many(docs)
        with client.start_session(snapshot=True) as session:
            client.db.coll.distinct("x", {}, session=session)
            batches = client.db.coll.aggregate_raw_batches(
                [{"$sort": {"_id": 1}}], session=session).to_list()
        assert [d for b in batches for d in decode_all(b)] == docs


def test_the_oplog_marks_each_write_and_can_be_tailed(db, client):
    """local.oplog.rs: a no-op entry (ts, wall, ns) per write command that changed something,
    in a capped collection a tailable cursor follows; Timestamps compare in BSON order."""
    db.coll.insert_one({"a": 1})
    db.coll.delete_one({"nothing": 1})  # changed nothing: no entry
    oplog = client.local.oplog.rs
    last = oplog.find().sort("$natural", pymongo.DESCENDING).limit(-1).next()
    assert last["op"] == "n" and last["ns"] == "sim.coll"
    tail = oplog.find({"ts": {"$gte": last["ts"]}},
                      cursor_type=pymongo.CursorType.TAILABLE_AWAIT).max_await_time_ms(1)
    assert [e["ts"] for e in tail.to_list()] == [last["ts"]]
    db.coll.update_one({"a": 1}, {"$set": {"a": 2}})
    [entry] = tail.to_list()
    assert entry["ts"] > last["ts"] and entry["ns"] == "sim.coll"


def test_id_is_stored_first_wherever_the_client_put_it(db):
    """Issue 57: mongod stores ``_id`` first; a document a client sends with ``_id`` last
    (mongosh, the Node.js driver: PyMongo moves it first itself) was stored with ``_id``
    last. An insert, a replacement upsert and a replacement keep ``_id`` first."""
    from bson import SON
    db.command("insert", "c", documents=[SON([("a", 1), ("_id", 5)])])
    db.command("update", "c", updates=[{"q": {"_id": 6}, "u": SON([("b", 1), ("_id", 6)]),
                                        "upsert": True}])
    db.command("update", "c", updates=[{"q": {"_id": 5}, "u": SON([("b", 2), ("_id", 5)])}])
    assert [list(doc) for doc in db.c.find().sort("_id", 1)] == [["_id", "b"], ["_id", "b"]]


@pytest.mark.parametrize("length", [48_000_001, 2**31 - 1, 15, -1])
def test_a_message_over_the_size_limit_is_refused_before_it_is_read(client, length):
    """Issue 57: mongod closes a connection whose message header claims more than
    maxMessageSizeBytes (48,000,000) or less than a header, without reading the body; the
    simulator read whatever the header claimed (160 MiB accepted, its memory grown by as
    much)."""
    import socket
    import struct
    host, port = client.address
    with socket.create_connection((host, port), timeout=5) as sock:
        sock.sendall(struct.pack("<iiii", length, 1, 0, 2013) + b"\0" * 1024)
        assert sock.recv(1) == b""  # closed, not waiting for the rest
    assert client.admin.command("ping")["ok"] == 1


def test_a_batch_stops_before_16_mib(db):
    """Issue 57: mongod ends a batch before the document that would take it past 16 MiB; the
    simulator's getMore without batchSize returned everything left in one reply (61.7 MB for
    60,000 documents of 1 KB, which both drivers refused as over maxMessageSizeBytes)."""
    db.c.insert_many([{"_id": i, "s": "x" * 1_000_000} for i in range(40)])
    first = db.command("find", "c")["cursor"]
    more = db.command("getMore", first["id"], collection="c")["cursor"]
    rest = db.command("getMore", more["id"], collection="c")["cursor"]
    assert [len(first["firstBatch"]), len(more["nextBatch"]), len(rest["nextBatch"])] == \
        [16, 16, 8]
    assert rest["id"] == 0
    assert len(list(db.c.find())) == 40


@pytest.mark.parametrize("stage", ["$planCacheStats", "$indexStats"])
def test_what_the_simulator_lacks_is_named_as_the_simulated_servers(client, stage):
    """Issue 57: an operator the simulator does not implement is NotImplemented (238) naming
    the simulated server; the error named the query library behind it (mongomock-ng)."""
    with pytest.raises(OperationFailure) as info:
        client.admin.command("aggregate", 1, pipeline=[{stage: {}}], cursor={})
    assert info.value.code == 238 and "simulated server" in str(info.value)
    assert "mongomock" not in str(info.value).lower()


def test_fail_command_without_fail_commands_matches_nothing(client, db):
    """Simulator rule (mongod's): failCommand without data.failCommands is accepted and fails
    no command (PyMongo's test_pool_backpressure_preserves_existing_connections sets one);
    before, the simulator refused it with BadValue."""
    db.coll.insert_one({"_id": 1})
    client.admin.command("configureFailPoint", "failCommand", mode={"times": 1},
                         data={"closeConnection": True})
    try:
        assert db.coll.find_one() == {"_id": 1}
        assert db.coll.insert_one({"_id": 2}).inserted_id == 2
    finally:
        client.admin.command("configureFailPoint", "failCommand", mode="off")


@pytest.mark.parametrize("ordered, expected", [(True, [1, 2]), (False, [1, 2, 4])])
def test_insert_events_are_the_documents_stored(client, db, ordered, expected):
    """Simulator rule: a change stream reports an insert of documents with their _id from
    the documents the server stored, in their order: none after an ordered insert's first
    error, every one but the failed ones of an unordered insert, a document _id included.
    (An insert is no longer recorded by comparing the whole collection before and after it,
    which made every write cost O(documents) once a stream had opened.)"""
    db.coll.insert_one({"_id": 3})
    with db.coll.watch() as stream:
        with pytest.raises(pymongo.errors.BulkWriteError):
            db.coll.insert_many([{"_id": 1, "a": 1}, {"a": 2, "_id": 2}, {"_id": 3},
                                 {"_id": 4}], ordered=ordered)
        db.coll.insert_one({"_id": {"k": 1}, "x": 1})
        events = [stream.next() for _ in range(len(expected) + 1)]
    assert [e["documentKey"]["_id"] for e in events] == [*expected, {"k": 1}]
    assert all(e["operationType"] == "insert" for e in events)
    assert list(events[1]["fullDocument"]) == ["_id", "a"]  # _id first, as stored
    assert events[-1]["fullDocument"] == {"_id": {"k": 1}, "x": 1}
