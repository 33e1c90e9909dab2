"""A reply is a success only when it says so, and a reply that says so is read only when its
fields are what its command's reply has (singlemongo/replies.py).

Rules guarded here: ``ok`` must be a number other than 0 (no ``ok``, null, a list, the string
"0" are failures: OperationFailure carrying the reply); every field the driver reads from an
``ok: 1`` reply is checked for type and range before use (MalformedReply, an OperationFailure,
naming the field), never a raw KeyError, TypeError, IndexError or ValueError, and never a
result made of it."""
import pytest

from singlemongo import InsertOne, MongoClient, UpdateOne, errors
from singlemongo.errors import MalformedReply
from singlemongo.replies import is_ok

from .util import raw_answer


@pytest.fixture()
def client(mongo_standalone):
    with MongoClient(mongo_standalone.uri, retryWrites=False, retryReads=False) as client:
        client.admin.command("ping")
        yield client


def _serve(deployment, command, document):
    deployment.servers[0].fail(command, action="raw-reply", raw=raw_answer(document), times=None)


@pytest.mark.parametrize("ok", [1, 1.0, 2, -1, 0.5, True])
def test_ok_is_a_number_other_than_zero(ok):
    assert is_ok({"ok": ok})


@pytest.mark.parametrize("reply", [{}, {"ok": 0}, {"ok": 0.0}, {"ok": False}, {"ok": None},
                                   {"ok": []}, {"ok": [1]}, {"ok": "0"}, {"ok": "1"},
                                   {"ok": float("nan")}, {"ok": {"$numberInt": "1"}},
                                   {"code": 13, "errmsg": "not authorized"}])
def test_anything_else_is_not_ok(reply):
    assert not is_ok(reply)


WRITES = {
    "insert_one": ("insert", lambda c: c.insert_one({"_id": 1})),
    "insert_many": ("insert", lambda c: c.insert_many([{"_id": 1}, {"_id": 2}])),
    "update_one": ("update", lambda c: c.update_one({}, {"$set": {"a": 1}})),
    "update_many": ("update", lambda c: c.update_many({}, {"$set": {"a": 1}})),
    "replace_one": ("update", lambda c: c.replace_one({}, {"a": 1})),
    "delete_one": ("delete", lambda c: c.delete_one({})),
    "delete_many": ("delete", lambda c: c.delete_many({})),
    "bulk_write": ("insert", lambda c: c.bulk_write([InsertOne({"_id": 1})])),
}
NOT_OK = {
    "no ok": {"code": 13, "errmsg": "not authorized"},
    "ok null": {"ok": None, "n": 1},
    "ok a list": {"ok": [1], "n": 1},
    "ok the string 0": {"ok": "0", "n": 1},
}


@pytest.mark.parametrize("reply", NOT_OK.values(), ids=list(NOT_OK))
@pytest.mark.parametrize("write", WRITES, ids=list(WRITES))
def test_a_write_whose_reply_does_not_say_ok_is_an_operation_failure(
        mongo_standalone, client, write, reply):
    """Before, 12 of 12 such replies gave ``acknowledged=True``."""
    command, call = WRITES[write]
    _serve(mongo_standalone, command, reply)
    with pytest.raises(errors.OperationFailure) as raised:
        call(client.db.c)
    details = raised.value.details
    if "writeErrors" not in (details or {}):  # a bulk's BulkWriteError wraps no raw reply
        assert details == reply or "does not say ok" in str(raised.value)


MALFORMED = [
    # (command, reply, the call, the field the error names)
    ("find", {"ok": 1, "cursor": {"id": 0, "ns": "db.c", "firstBatch": "abc"}},
     lambda c: c.find_one(), "cursor.firstBatch"),
    ("find", {"ok": 1, "cursor": "x"}, lambda c: c.find_one(), "cursor"),
    ("find", {"ok": 1}, lambda c: list(c.find()), "cursor"),
    ("find", {"ok": 1, "cursor": {"id": "0", "ns": "db.c", "firstBatch": []}},
     lambda c: list(c.find()), "cursor.id"),
    ("find", {"ok": 1, "cursor": {"id": 0, "ns": "db.c", "firstBatch": [1, 2]}},
     lambda c: list(c.find()), "cursor.firstBatch"),
    ("find", {"ok": 1, "cursor": {"id": 0, "ns": "db.c", "firstBatch": [{"a": 1}, 2]}},
     lambda c: list(c.find()), "cursor.firstBatch"),
    ("aggregate", {"ok": 1, "cursor": {"id": 0, "ns": "db.c", "firstBatch": None}},
     lambda c: list(c.aggregate([])), "cursor.firstBatch"),
    ("insert", {"ok": 1, "n": 1, "writeErrors": [{"index": 5, "code": 11000, "errmsg": "x"}]},
     lambda c: c.insert_one({"_id": 1}), "writeErrors"),
    ("insert", {"ok": 1, "n": 0, "writeErrors": [{"index": -1, "code": 1, "errmsg": "x"}]},
     lambda c: c.insert_many([{"_id": 1}, {"_id": 2}]), "writeErrors"),
    ("insert", {"ok": 1, "n": 0, "writeErrors": [{"index": "0", "code": 1, "errmsg": "x"}]},
     lambda c: c.insert_one({"_id": 1}), "writeErrors"),
    ("update", {"ok": 1, "n": 1, "nModified": 0, "upserted": [{"index": -1, "_id": 7}]},
     lambda c: c.bulk_write([UpdateOne({}, {"$set": {"a": 1}}, upsert=True),
                             UpdateOne({}, {"$set": {"a": 2}}, upsert=True)]), "upserted"),
    ("update", {"ok": 1, "n": 1, "nModified": 0, "upserted": [{"index": 3, "_id": 7}]},
     lambda c: c.update_one({}, {"$set": {"a": 1}}, upsert=True), "upserted"),
    ("update", {"ok": 1, "n": 1, "nModified": 0, "upserted": "x"},
     lambda c: c.update_one({}, {"$set": {"a": 1}}, upsert=True), "upserted"),
    ("update", {"ok": 1, "n": 1, "nModified": 0, "upserted": [{"index": 0}]},
     lambda c: c.update_one({}, {"$set": {"a": 1}}, upsert=True), "upserted"),
    ("update", {"ok": 1, "n": 1, "nModified": 0, "upserted": [7]},
     lambda c: c.update_one({}, {"$set": {"a": 1}}, upsert=True), "upserted"),
    ("update", {"ok": 1, "n": 1, "nModified": 0, "upserted": [{"index": True, "_id": 7}]},
     lambda c: c.update_one({}, {"$set": {"a": 1}}, upsert=True), "upserted"),
    ("update", {"ok": 1, "n": 1, "nModified": 0, "upserted": [{"index": 0.0, "_id": 7}]},
     lambda c: c.update_one({}, {"$set": {"a": 1}}, upsert=True), "upserted"),
    ("update", {"ok": 1, "n": "1", "nModified": 1},
     lambda c: c.update_one({}, {"$set": {"a": 1}}).matched_count, "n"),
    ("update", {"ok": 1, "n": 1, "nModified": "many"},
     lambda c: c.update_one({}, {"$set": {"a": 1}}).modified_count, "nModified"),
    ("delete", {"ok": 1, "n": -3}, lambda c: c.delete_one({}).deleted_count, "n"),
    ("count", {"ok": 1, "n": "7"}, lambda c: c.estimated_document_count(), "n"),
    ("distinct", {"ok": 1, "values": "ab"}, lambda c: c.distinct("a"), "values"),
    ("findAndModify", {"ok": 1, "value": "doc"},
     lambda c: c.find_one_and_delete({}), "value"),
    ("listDatabases", {"ok": 1, "databases": "x"},
     lambda c: c.database.client.list_database_names(), "databases"),
    ("createSearchIndexes", {"ok": 1, "indexesCreated": [3]},
     lambda c: c.create_search_index({"definition": {}}), "indexesCreated"),
]


@pytest.mark.parametrize("command, reply, call, field", MALFORMED,
                         ids=[f"{m[0]} {m[3]} {i}" for i, m in enumerate(MALFORMED)])
def test_a_malformed_ok_reply_names_the_field(mongo_standalone, client, command, reply, call,
                                              field):
    """Before, such replies gave KeyError, TypeError, ValueError or IndexError, or a result
    made of them: find_one returned the string 'a' of a firstBatch 'abc', an upserted index
    of -1 was reported as another operation's upsert."""
    _serve(mongo_standalone, command, reply)
    with pytest.raises(MalformedReply) as raised:
        call(client.db.c)
    assert f" {field} " in str(raised.value) and command in str(raised.value)
    assert isinstance(raised.value, errors.OperationFailure)
