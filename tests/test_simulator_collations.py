"""The simulated server's collations and views do what MongoDB 7.0 does (issue 21; before,
strings compared by their bytes whatever the collation, and a view was an empty collection),
checked with PyMongo as the client so that a difference is the simulator's."""
import pytest
from pymongo.collation import Collation, CollationStrength
from pymongo.errors import OperationFailure

EN_CASELESS = Collation("en", strength=CollationStrength.SECONDARY)
EN_BASE = Collation("en", strength=CollationStrength.PRIMARY)


@pytest.fixture()
def words(db):
    db.words.insert_many([{"_id": i, "w": w} for i, w in enumerate(
        ["b", "A", "a", "B", "á", "10", "2", "a-b", "ab"])])
    return db.words


def _w(cursor):
    return [d["w"] for d in cursor]


def test_strength_decides_what_is_equal(words):
    """Collation strength: 1 ignores case and accents, 2 case only, 3 neither; 'simple' and
    no collation compare bytes."""
    assert _w(words.find({"w": "a"}).sort("_id", 1)) == ["a"]
    assert _w(words.find({"w": "a"}, collation=Collation("simple"))) == ["a"]
    assert _w(words.find({"w": "a"}, collation=Collation("en")).sort("_id", 1)) == ["a"]
    assert _w(words.find({"w": "a"}, collation=EN_CASELESS).sort("_id", 1)) == ["A", "a"]
    assert _w(words.find({"w": "a"}, collation=EN_BASE).sort("_id", 1)) == ["A", "a", "á"]
    assert _w(words.find({"w": {"$in": ["B"]}}, collation=EN_CASELESS).sort("_id", 1)) == \
        ["b", "B"]


def test_sort_order_follows_the_locale(words):
    """Collation sort: lowercase before uppercase, accents after the base letter, digits
    before letters; caseFirst 'upper' puts uppercase first; numericOrdering sorts digit
    runs as numbers. Without a collation the order is by code point."""
    letters = {"w": {"$in": ["a", "A", "b", "B", "á"]}}
    assert _w(words.find(letters).sort("w", 1)) == ["A", "B", "a", "b", "á"]
    assert _w(words.find(letters, collation=Collation("en")).sort("w", 1)) == \
        ["a", "A", "á", "b", "B"]
    assert _w(words.find(letters, collation=Collation("en", caseFirst="upper")).sort("w", 1)) \
        == ["A", "a", "á", "B", "b"]
    digits = {"w": {"$in": ["10", "2"]}}
    assert _w(words.find(digits, collation=Collation("en")).sort("w", 1)) == ["10", "2"]
    assert _w(words.find(digits, collation=Collation("en", numericOrdering=True))
              .sort("w", 1)) == ["2", "10"]


def test_alternate_shifted_ignores_punctuation(words):
    """alternate 'shifted': punctuation and spaces are ignored at levels 1 to 3, so 'a-b'
    equals 'ab'; 'non-ignorable' (the default) keeps them apart."""
    shifted = Collation("en", alternate="shifted")
    assert _w(words.find({"w": "ab"}, collation=shifted).sort("_id", 1)) == ["a-b", "ab"]
    assert _w(words.find({"w": "ab"}, collation=Collation("en"))) == ["ab"]


def test_distinct_count_update_and_delete_use_the_collation(words):
    """Every command with a collation compares by it: distinct keeps the first of equal
    values, count and updateMany match by it, and deleteOne's statement carries its own."""
    assert words.distinct("w", {"w": {"$in": ["a", "A"]}}, collation=EN_CASELESS) == ["A"]
    assert words.count_documents({"w": "B"}, collation=EN_CASELESS) == 2
    result = words.update_many({"w": "A"}, {"$set": {"seen": True}}, collation=EN_BASE)
    assert result.modified_count == 3
    assert words.delete_one({"w": "B"}, collation=EN_CASELESS).deleted_count == 1
    assert words.count_documents({"w": {"$in": ["b", "B"]}}) == 1


def test_a_collection_default_collation_applies_unless_a_command_names_one(db):
    """A collection created with a collation compares by it when the command names none;
    listCollections reports it filled in, as a server does."""
    coll = db.create_collection("names", collation=EN_CASELESS)
    coll.insert_many([{"n": "Ann"}, {"n": "ann"}, {"n": "Bob"}])
    assert coll.count_documents({"n": "ANN"}) == 2
    assert coll.count_documents({"n": "ANN"}, collation=Collation("simple")) == 0
    options = db.command("listCollections", filter={"name": "names"})["cursor"]["firstBatch"][0]
    assert options["options"]["collation"]["locale"] == "en"
    assert options["options"]["collation"]["strength"] == 2
    assert options["options"]["collation"]["caseFirst"] == "off"


@pytest.mark.parametrize("collation, code", [
    ({"locale": "en", "strength": 7}, 2),
    ({"locale": "en", "colour": 1}, 40415),
    ({"strength": 2}, 40414),
    ({"locale": "en", "caseFirst": "sideways"}, 2),
])
def test_a_malformed_collation_is_refused_naming_it(words, collation, code):
    """Collation Document: a malformed one is the server's error, not ignored."""
    with pytest.raises(OperationFailure) as refused:
        list(words.find({}, collation=collation))
    assert refused.value.code == code


@pytest.fixture()
def view(db):
    db.people.insert_many([{"_id": i, "name": n, "age": a} for i, (n, a) in enumerate(
        [("ann", 30), ("bob", 17), ("cy", 45), ("di", 12)])])
    return db.create_collection("adults", viewOn="people",
                                pipeline=[{"$match": {"age": {"$gte": 18}}},
                                          {"$project": {"age": 0}}])


def test_a_view_reads_its_pipeline_over_its_source(db, view):
    """Views: find, count, distinct and aggregate of a view run its pipeline over its
    source first, then their own filter; a view of a view resolves both."""
    assert list(view.find({}, sort=[("_id", 1)])) == [{"_id": 0, "name": "ann"},
                                                      {"_id": 2, "name": "cy"}]
    assert view.count_documents({"name": "cy"}) == 1
    assert view.estimated_document_count() == 2
    assert view.distinct("name") == ["ann", "cy"]
    assert [d["n"] for d in view.aggregate([{"$count": "n"}])] == [2]
    db.create_collection("a_adults", viewOn="adults", pipeline=[{"$match": {"name": "ann"}}])
    assert [d["_id"] for d in db.a_adults.find()] == [0]
    db.people.insert_one({"_id": 9, "name": "ed", "age": 50})
    assert view.count_documents({}) == 3


def test_a_view_refuses_writes_and_is_listed_as_a_view(db, view):
    """Views: writes and index builds are 166 CommandNotSupportedOnView; listCollections
    shows type 'view', readOnly, its viewOn and pipeline, and no _id index."""
    for write in (lambda: view.insert_one({"x": 1}),
                  lambda: view.update_one({}, {"$set": {"x": 1}}),
                  lambda: view.delete_many({}), lambda: view.create_index("name")):
        with pytest.raises(OperationFailure) as refused:
            write()
        assert refused.value.code == 166
    info = next(db.list_collections(filter={"name": "adults"}))
    assert info["type"] == "view" and info["info"]["readOnly"] is True
    assert info["options"]["viewOn"] == "people" and "idIndex" not in info
    view.drop()
    assert "adults" not in db.list_collection_names()


def test_a_view_option_without_a_source_is_refused(db):
    """create: 'pipeline' without 'viewOn', or a view with collection options, is refused."""
    with pytest.raises(OperationFailure):
        db.command("create", "v", pipeline=[])
    with pytest.raises(OperationFailure):
        db.command("create", "v", viewOn="people", capped=True, size=4096)


def test_an_empty_collation_document_is_no_collation(words):
    """A server reads ``collation: {}`` as no collation (PyMongo's own tests pass one as
    ``delete_many({}, {})``, whose second argument is the collation)."""
    assert len(list(words.find({}, collation={}))) == len(list(words.find({})))
    assert words.delete_many({"nothing": 1}, {}).deleted_count == 0
