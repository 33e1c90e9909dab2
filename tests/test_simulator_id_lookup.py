"""The simulated server finds a document by its ``_id`` in the store's table (as a server
uses its ``_id`` index), with MongoDB's equality: the same documents as reading the whole
collection, at a cost that does not grow with the collection. Checked with PyMongo as the
client so that a difference is the simulator's."""
import pytest
from bson import Decimal128, Int64, ObjectId
from mongomock_ng import collection as mm_collection
from pymongo.collation import Collation, CollationStrength

from singlemongo.testing.query import id_lookup

OID = ObjectId()
IDS = [1, 2.5, "a", "A", OID, Decimal128("7"), {"k": 1}, None, Int64(9)]


@pytest.fixture()
def things(db):
    db.things.insert_many([{"_id": value, "i": i} for i, value in enumerate(IDS)])
    return db.things


@pytest.mark.parametrize("value", [1, 1.0, Int64(1), 2.5, True, False, 0, "a", "A", "b", OID,
                                   ObjectId(), 7, 7.0, Decimal128("1"), {"k": 1}, None, 9,
                                   float("nan")])
def test_lookup_finds_what_a_scan_finds(things, monkeypatch, value):
    """Rule: a filter on _id alone matches the documents MongoDB's equality matches (1 is
    1.0 and Decimal128("1"), never true; "a" is not "A"). The lookup's answer equals the
    scan's, the lookup switched off."""
    looked_up = sorted(d["i"] for d in things.find({"_id": value}))
    monkeypatch.setattr(id_lookup, "find", lambda coll, filter: None)
    scanned = sorted(d["i"] for d in things.find({"_id": value}))
    assert looked_up == scanned


def test_a_collation_reads_the_collection(things):
    """Rule: under a case-insensitive collation "a" matches "A" too, which the table cannot
    know: the lookup steps aside."""
    found = things.find({"_id": "a"}, collation=Collation("en", strength=CollationStrength.SECONDARY))
    assert sorted(d["_id"] for d in found) == ["A", "a"]


def test_an_update_by_id_does_not_read_the_collection(db, monkeypatch):
    """Rule: an update or delete by _id (the common write, and how an update of many
    documents is applied, one by one) costs one document, not the collection; before, 10,000
    mixed writes against a few thousand documents took minutes."""
    db.big.insert_many([{"_id": f"k{i}", "g": i % 10} for i in range(2_000)])
    tested = []
    applies = mm_collection.filter_applies  # the engine's scan tests each document with it
    monkeypatch.setattr(mm_collection, "filter_applies",
                        lambda *a, **k: tested.append(1) or applies(*a, **k))
    db.big.update_one({"_id": "k5"}, {"$set": {"x": 1}})
    db.big.delete_one({"_id": "k6"})
    db.big.update_one({"_id": "new"}, {"$set": {"x": 1}}, upsert=True)
    assert len(tested) < 20
    tested.clear()
    assert db.big.update_many({"g": 1}, {"$inc": {"x": 1}}).modified_count == 200
    assert len(tested) < 2_000 + 3 * 200  # one scan, then each document by its _id
