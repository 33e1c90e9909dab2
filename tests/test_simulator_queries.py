"""The simulated server's query language does what MongoDB 7.0 does where the engine did
not (issue 21), checked with PyMongo as the client: legacy geospatial queries on
coordinate pairs, and server-side JavaScript ($where, mapReduce, $function)."""
import datetime

import pymongo
import pytest
from bson import Code
from pymongo.errors import OperationFailure





@pytest.fixture()
def places(db):
    db.places.insert_many([{"_id": i, "loc": [i, i]} for i in range(5)] +
                          [{"_id": 9, "loc": {"lng": 0.5, "lat": 0}}, {"_id": 10, "loc": "x"}])
    return db.places


def _ids(cursor):
    return [d["_id"] for d in cursor]


def test_near_with_a_2d_index_sorts_by_flat_distance(places):
    """$near on legacy pairs with a 2d index (before: 'unable to find index', as the engine
    wanted 2dsphere and GeoJSON): nearest first, $maxDistance in the pairs' units."""
    places.create_index([("loc", "2d")])
    assert _ids(places.find({"loc": {"$near": [0, 0]}}).limit(3)) == [0, 9, 1]
    assert _ids(places.find({"loc": {"$near": [4, 4], "$maxDistance": 1.5}})) == [4, 3]


def test_near_without_a_geo_index_is_refused(places):
    with pytest.raises(OperationFailure, match="unable to find index"):
        list(places.find({"loc": {"$near": [0, 0]}}))


@pytest.mark.parametrize("shape, expected", [
    ({"$box": [[0, 0], [2, 2]]}, [0, 1, 2, 9]),
    ({"$center": [[0, 0], 1.5]}, [0, 1, 9]),
    ({"$polygon": [[0, 0], [0, 3], [3, 0]]}, [0, 1, 9]),
    ({"$centerSphere": [[0, 0], 0.0001]}, [0]),
])
def test_geo_within_legacy_shapes(places, shape, expected):
    """$geoWithin with $box, $center, $polygon and $centerSphere (before: '$geoWithin requires
    a $geometry field'); $within is its older name (before: 'unknown operator')."""
    assert _ids(places.find({"loc": {"$geoWithin": shape}})) == expected
    assert _ids(places.find({"loc": {"$within": shape}})) == expected


def test_geo_within_geometry_reads_legacy_pairs(places):
    square = {"type": "Polygon", "coordinates": [[[-1, -1], [1.5, -1], [1.5, 1.5], [-1, 1.5],
                                                  [-1, -1]]]}
    assert _ids(places.find({"loc": {"$geoWithin": {"$geometry": square}}})) == [0, 1, 9]


def test_a_malformed_shape_names_itself(places):
    with pytest.raises(OperationFailure, match=r"\$box"):
        list(places.find({"loc": {"$geoWithin": {"$box": [["a"], [1, 1]]}}}))


@pytest.fixture()
def sales(db):
    db.sales.insert_many([
        {"_id": 1, "item": "a", "qty": 2, "day": datetime.datetime(2024, 1, 1)},
        {"_id": 2, "item": "b", "qty": 5, "day": datetime.datetime(2024, 1, 2)},
        {"_id": 3, "item": "a", "qty": 1, "day": datetime.datetime(2024, 1, 3)}])
    return db.sales


def test_where_runs_javascript_on_each_document(sales):
    """$where (before: refused, 'it runs no JavaScript'): an expression, a function body or
    a function, with this and obj, dates as Date; combined with the rest of the filter."""
    assert _ids(sales.find({"$where": "this.qty > 1"})) == [1, 2]
    assert _ids(sales.find({"$where": "return obj.item == 'a'"})) == [1, 3]
    assert _ids(sales.find({"$where": Code("function() { return this.day.getUTCDate() == 2; }")})
                ) == [2]
    assert _ids(sales.find({"item": "a", "$where": "this.qty < 2"})) == [3]
    sales.delete_many({"$where": "this.qty == 5"})
    assert _ids(sales.find()) == [1, 3]


def test_where_errors_are_the_scripts(sales):
    """A script that throws is an error reply (139 JSInterpreterFailure); $where is run on
    whole documents only (at the top level)."""
    with pytest.raises(OperationFailure, match="nope") as caught:
        list(sales.find({"$where": "throw new Error('nope')"}))
    assert caught.value.code == 139
    with pytest.raises(OperationFailure, match=r"\$where"):
        list(sales.find({"$or": [{"$where": "true"}]}))


def test_a_script_that_never_ends_is_interrupted(sales, monkeypatch):
    """A script that loops forever is interrupted at the time limit: an error reply, not a
    hung server."""
    from singlemongo.testing.query import javascript
    monkeypatch.setattr(javascript, "TIME_LIMIT_S", 1)
    with pytest.raises(OperationFailure, match="interrupted") as caught:
        list(sales.find({"$where": "while (true) {}"}))
    assert caught.value.code == 139
    assert _ids(sales.find({"$where": "true"})) == [1, 2, 3]  # the server goes on


def test_map_reduce_inline_and_into_collections(db, sales):
    """mapReduce (before: 'no such command'): inline results ordered by _id, reduce called
    for keys emitted more than once, finalize, scope, query; out replace, merge and reduce."""
    command = {"map": Code("function() { emit(this.item, this.qty * factor); }"),
               "reduce": Code("function(key, values) { return Array.sum(values); }"),
               "scope": {"factor": 10}}
    inline = db.command("mapReduce", "sales", out={"inline": 1}, **command)["results"]
    assert inline == [{"_id": "a", "value": 30.0}, {"_id": "b", "value": 50.0}]
    assert isinstance(inline[0]["value"], float)  # a JavaScript number is a double
    finalized = db.command("mapReduce", "sales", out={"inline": 1}, query={"item": "a"},
                           finalize=Code("function(k, v) { return {total: v}; }"),
                           **command)["results"]
    assert finalized == [{"_id": "a", "value": {"total": 30.0}}]
    assert db.command("mapReduce", "sales", out="totals", **command)["result"] == "totals"
    db.command("mapReduce", "sales", out={"reduce": "totals"}, **command)
    assert list(db.totals.find()) == [{"_id": "a", "value": 60.0}, {"_id": "b", "value": 100.0}]
    db.command("mapReduce", "sales", out={"merge": "totals", "db": "other"}, **command)
    assert db.client.other.totals.count_documents({}) == 2
    with pytest.raises(OperationFailure, match="'out'"):
        db.command("mapReduce", "sales", out={"nowhere": 1}, **command)


def test_without_quickjs_javascript_says_what_to_install(sales, monkeypatch):
    """The JavaScript engine is an extra (testing-js): without it, $where and mapReduce
    answer with the command to install it."""
    import sys
    monkeypatch.setitem(sys.modules, "quickjs", None)
    with pytest.raises(OperationFailure, match=r"singlemongo\[testing-js\]"):
        list(sales.find({"$where": "true"}))


def test_set_field_unset_field_and_rand(db):
    """$setField/$unsetField write and remove fields whose names hold dots or start with $
    (a pipeline update stores them, as 5.0+ does), $rand draws in [0, 1); before, both
    were skipped as 'simulator lacks'."""
    db.x.insert_one({"_id": 1, "foo": {}})
    db.x.update_one({"_id": 1}, [{"$replaceWith": {"$setField": {
        "field": {"$literal": "$a"}, "value": 1, "input": "$$ROOT"}}}])
    db.x.update_one({"_id": 1}, [{"$set": {"foo": {"$setField": {
        "field": "a.b", "value": 2, "input": "$foo"}}}}])
    assert db.x.find_one() == {"_id": 1, "foo": {"a.b": 2}, "$a": 1}
    out = next(db.x.aggregate([{"$project": {"r": {"$rand": {}}, "foo": {"$unsetField": {
        "field": "a.b", "input": "$foo"}}}}]))
    assert 0 <= out["r"] < 1 and out["foo"] == {}
    with pytest.raises(OperationFailure, match=r"\$setField requires"):
        list(db.x.aggregate([{"$project": {"y": {"$setField": {"field": "a"}}}}]))


def test_get_field_evaluates_its_input_expression(db):
    """$getField's ``input`` is any expression resolving to an object (MongoDB 5.0+); the
    engine took an expression object literally and gave null. Django's MongoDB backend counts
    with ``{$getField: {input: {$arrayElemAt: ["$group", 0]}, field: "__count"}}`` after a
    $facet: ``Model.objects.count()`` was 0 against the simulator."""
    db.x.insert_many([{"_id": i, "pages": i} for i in range(4)])
    out = list(db.x.aggregate([
        {"$facet": {"group": [{"$group": {"_id": None, "total": {"$sum": "$pages"}}}]}},
        {"$addFields": {"total": {"$getField": {"input": {"$arrayElemAt": ["$group", 0]},
                                                "field": "total"}}}},
        {"$project": {"total": 1, "_id": 0}}]))
    assert out == [{"total": 6}]
    doc = next(db.x.aggregate([{"$match": {"_id": 2}}, {"$project": {
        "a": {"$getField": {"input": {"x": "$pages"}, "field": "x"}},
        "b": {"$getField": {"input": "$$ROOT", "field": "pages"}},
        "c": {"$getField": {"input": None, "field": "x"}},
        "d": {"$getField": "pages"}}}]))
    assert doc == {"_id": 2, "a": 2, "b": 2, "c": None, "d": 2}
    with pytest.raises(OperationFailure) as caught:
        list(db.x.aggregate([{"$project": {"y": {"$getField": {"input": 5, "field": "x"}}}}]))
    assert caught.value.code == 3041705


def test_type_and_is_number_expressions_know_every_bson_type(db):
    """The aggregation $type names every BSON type ("objectId", "decimal", "timestamp", ...;
    "missing" for an absent field) and $isNumber is true for Decimal128 and Int64, as in
    MongoDB; the engine failed with "Type ObjectId is not supported yet" (code 238). Django's
    MongoDB backend tests ``$type`` of a joined document's _id to count a relation:
    ``Author.objects.annotate(Count("books"))`` failed against the simulator."""
    from bson import Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
    values = {"oid": ObjectId(), "dec": Decimal128("1.5"), "ts": Timestamp(1, 2),
              "long": Int64(5), "int": 5, "big": 2 ** 40, "dbl": 1.5, "bin": Binary(b"x", 0),
              "re": Regex("a"), "js": Code("f"), "min": MinKey(), "max": MaxKey(), "t": True,
              "none": None, "s": "x", "arr": [1], "obj": {"a": 1},
              "date": datetime.datetime(2024, 1, 1)}
    db.x.insert_one({"_id": 1, **values})
    names = ["oid", "dec", "ts", "long", "int", "big", "dbl", "bin", "re", "js", "min", "max", "t",
             "none", "s", "arr", "obj", "date", "absent"]
    doc = next(db.x.aggregate([{"$project": {
        **{f"{n}_type": {"$type": f"${n}"} for n in names},
        **{f"{n}_num": {"$isNumber": f"${n}"} for n in ("dec", "long", "int", "s", "absent")},
        "listed": {"$type": ["$oid"]}}}]))
    assert [doc[f"{n}_type"] for n in names] == [
        "objectId", "decimal", "timestamp", "long", "int", "long", "double", "binData", "regex",
        "javascript", "minKey", "maxKey", "bool", "null", "string", "array", "object", "date",
        "missing"]
    assert [doc[f"{n}_num"] for n in ("dec", "long", "int", "s", "absent")] == [
        True, True, True, False, False]
    assert doc["listed"] == "objectId"


def test_now_is_one_date_for_the_whole_command(db):
    """``$$NOW`` is the command's time, the same value wherever the command reads it
    (MongoDB 4.2+); the engine made it missing, so limits' MongoDB storage (Flask-Limiter)
    counted ``None`` hits: its upsert pipeline compares ``$expireAt`` with ``$$NOW``."""
    db.x.insert_many([{"_id": i, "d": datetime.datetime(2000, 1, 1)} for i in range(3)])
    before = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    docs = list(db.x.aggregate([{"$project": {"now": "$$NOW",
                                              "old": {"$lt": ["$d", "$$NOW"]}}}]))
    assert {d["now"] for d in docs} == {docs[0]["now"]}
    assert before - datetime.timedelta(seconds=1) <= docs[0]["now"]
    assert all(d["old"] for d in docs)
    db.x.update_many({}, [{"$set": {"at": "$$NOW"}}])
    assert len(db.x.distinct("at")) == 1


def test_comparisons_put_a_missing_field_below_null(db):
    """Aggregation comparisons use the BSON order, where a missing value sorts below null and
    below every other value, and is not equal to null ($lte with null is true for both);
    ``$cmp`` gives -1, 0 or 1. The engine answered False to every comparison with a missing
    side and had no ``$cmp``: limits' fixed-window counter upserted ``count: None``."""
    db.x.insert_one({"_id": 1, "n": None, "v": 5})
    doc = next(db.x.aggregate([{"$project": {
        "lt": {"$lt": ["$nope", "$v"]}, "lt_null": {"$lt": ["$nope", None]},
        "lte_null": {"$lte": ["$nope", None]}, "gt": {"$gt": ["$v", "$nope"]},
        "gte_both": {"$gte": ["$nope", "$other"]}, "eq_null": {"$eq": ["$nope", None]},
        "ne_null": {"$ne": ["$nope", None]}, "eq_both": {"$eq": ["$nope", "$other"]},
        "eq_stored_null": {"$eq": ["$n", None]},
        "cmp": [{"$cmp": pair} for pair in (["$nope", "$n"], ["$v", 5], ["$v", 4], [1, "a"],
                                            ["$nope", "$other"])]}}]))
    assert {k: v for k, v in doc.items() if k != "cmp"} == {
        "_id": 1, "lt": True, "lt_null": True, "lte_null": True, "gt": True, "gte_both": True,
        "eq_null": False, "ne_null": True, "eq_both": True, "eq_stored_null": True}
    assert doc["cmp"] == [-1, 0, 1, -1, 0]
    counted = db.x.find_one_and_update({"_id": "k"}, [{"$set": {"count": {"$cond": {
        "if": {"$lt": ["$expireAt", "$$NOW"]}, "then": 1,
        "else": {"$add": ["$count", 1]}}}}}], upsert=True, return_document=True)
    assert counted == {"_id": "k", "count": 1}
    with pytest.raises(OperationFailure) as caught:
        list(db.x.aggregate([{"$project": {"c": {"$cmp": [1]}}}]))
    assert caught.value.code == 16020


def test_every_bson_value_equals_itself_and_timestamps_order(db):
    """``$eq`` of any stored value with itself is true (the engine orders neither regular
    expressions nor timestamps: equality must not go through its order), and ``$cmp`` and
    ``$lt`` order two timestamps."""
    from bson import Binary, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
    values = {"oid": ObjectId(), "bin": Binary(b"x", 0), "re": Regex("a"), "ts": Timestamp(1, 2),
              "dec": Decimal128("1.5"), "long": Int64(1), "min": MinKey(), "max": MaxKey(),
              "js": Code("x"), "obj": {"a": [1]}, "none": None}
    db.x.insert_one({"_id": 1, **values, "later": Timestamp(1, 3)})
    doc = next(db.x.aggregate([{"$project": {
        **{k: {"$eq": [f"${k}", f"${k}"]} for k in values},
        "cmp": {"$cmp": ["$ts", "$later"]}, "lt": {"$lt": ["$later", "$ts"]}}}]))
    assert doc == {"_id": 1, **{k: True for k in values}, "cmp": -1, "lt": False}


def test_an_array_index_past_the_end_is_a_missing_value(db):
    """``{"e.2": ...}`` on an array of fewer than three elements reads a missing value, which
    ``$not``, ``$exists: false`` and a null equality match, as in MongoDB; the engine matched
    nothing. limits' moving-window storage adds an entry with ``{"entries.<limit-1>": {$not:
    {$gte: ...}}}`` and an upsert: a second hit became a duplicate key and was refused."""
    db.x.insert_many([{"_id": 1, "e": [5]}, {"_id": 2, "e": [5, 6, 7]}, {"_id": 3}])
    for query, expected in (({"e.2": {"$not": {"$gte": 1}}}, [1, 3]), ({"e.2": {"$gte": 1}}, [2]),
                            ({"e.2": {"$exists": False}}, [1, 3]), ({"e.2": None}, [1, 3]),
                            ({"e.0": {"$not": {"$gte": 6}}}, [1, 2, 3])):
        assert [d["_id"] for d in db.x.find(query)] == expected, query
    for hit in range(3):
        db.x.update_one({"_id": "w", "entries.2": {"$not": {"$gte": 0}}},
                        {"$push": {"entries": {"$each": [hit], "$position": 0, "$slice": 3}}},
                        upsert=True)
    assert db.x.find_one({"_id": "w"})["entries"] == [2, 1, 0]


def test_document_validation_reports_the_failing_document(db):
    """A validator's refusal is 121 with errInfo (failingDocumentId, details) as 5.0+ gives
    it, to findAndModify and to each insert statement; bypassDocumentValidation skips it."""
    db.create_collection("checked", validator={"x": {"$type": "string"}})
    db.checked.insert_one({"_id": 1, "x": "ok"})
    with pytest.raises(OperationFailure) as caught:
        db.checked.find_one_and_update({"_id": 1}, {"$set": {"x": 1}})
    assert caught.value.code == 121
    assert caught.value.details["errInfo"]["failingDocumentId"] == 1
    with pytest.raises(pymongo.errors.WriteError) as caught:
        db.checked.insert_one({"_id": 2, "x": 2})
    assert caught.value.details["errInfo"]["failingDocumentId"] == 2
    db.checked.insert_one({"_id": 3, "x": 3}, bypass_document_validation=True)
    assert db.checked.count_documents({}) == 2


def test_coll_mod_prepares_and_converts_an_index_to_unique(db):
    """MongoDB 6.0+ collMod: ``prepareUnique`` refuses new duplicates (11000) and keeps the
    old ones; converting to ``unique`` then fails with CannotConvertIndexToUnique (359),
    each group of conflicting _ids a violation (the collection-management
    modifyCollection-errorResponse test). Before, both were accepted and nothing was
    enforced. Without prepareUnique the conversion is refused (72)."""
    db.test.insert_many([{"_id": 1, "x": 1}, {"_id": 2, "x": 1}, {"_id": 4, "x": 2}])
    db.test.create_index("x")
    with pytest.raises(OperationFailure) as refused:
        db.command("collMod", "test", index={"keyPattern": {"x": 1}, "unique": True})
    assert refused.value.code == 72
    reply = db.command("collMod", "test", index={"keyPattern": {"x": 1},
                                                 "prepareUnique": True})
    assert reply["prepareUnique_old"] is False and reply["prepareUnique_new"] is True
    with pytest.raises(pymongo.errors.DuplicateKeyError):
        db.test.insert_one({"_id": 3, "x": 1})
    db.test.insert_one({"_id": 5, "x": 3})
    with pytest.raises(OperationFailure) as conflict:
        db.command("collMod", "test", index={"keyPattern": {"x": 1}, "unique": True})
    assert conflict.value.code == 359
    assert conflict.value.details["violations"] == [{"ids": [1, 2]}]
    db.test.delete_one({"_id": 2})
    db.command("collMod", "test", index={"keyPattern": {"x": 1}, "unique": True})
    assert next(i for i in db.test.list_indexes() if i["name"] == "x_1")["unique"] is True


def test_cursor_ids_are_longs_as_a_server_sends_them(db):
    """A server's cursor id is always a NumberLong, 0 included; the simulator sent an int32
    for small ids, and the load balancer tests' ``id: {$$type: long}`` failed on it."""
    from bson import Int64
    db.c.insert_many([{"_id": i} for i in range(3)])
    open_cursor = db.command("find", "c", batchSize=1)["cursor"]
    exhausted = db.command("find", "c")["cursor"]
    more = db.command("getMore", open_cursor["id"], collection="c", batchSize=1)["cursor"]
    assert [type(c["id"]) for c in (open_cursor, exhausted, more)] == [Int64] * 3
    assert exhausted["id"] == 0


def test_group_over_no_document_returns_no_document(db):
    """MongoDB's ``$group`` outputs one document per group of its input: none for no input,
    even with ``_id: null`` (the engine made one, ``{"_id": None, "n": 0}``), as on an empty
    collection or after a ``$match`` that keeps nothing. With input, one group as before."""
    pipeline = [{"$group": {"_id": None, "n": {"$sum": 1}}}]
    assert list(db.empty.aggregate(pipeline)) == []
    db.c.insert_many([{"a": 1}, {"a": 2}])
    assert list(db.c.aggregate([{"$match": {"a": 9}}, *pipeline])) == []
    assert list(db.c.aggregate(pipeline)) == [{"_id": None, "n": 2}]


def test_an_unknown_aggregate_option_is_refused_as_the_server_refuses_it(db):
    """MongoDB parses the aggregate command strictly: an unknown field is error 40415
    ("BSON field 'aggregate.x' is an unknown field."); the simulator ignored it."""
    with pytest.raises(OperationFailure) as refused:
        db.command("aggregate", "c", pipeline=[], cursor={}, bogusOption=1)
    assert refused.value.code == 40415
    assert "aggregate.bogusOption" in str(refused.value)
    assert db.command("aggregate", "c", pipeline=[], cursor={}, allowDiskUse=True,
                      comment="x", let={"v": 1}, maxTimeMS=100)["ok"] == 1


def test_group_outputs_the_id_first_then_the_accumulators_in_order(db):
    """Simulator rule (issue 48, MongoDB's $group): each output document is ``_id`` followed by
    the accumulator fields in the order the stage names them. The engine put ``_id`` last, so
    a program (or the CLI guide's example) printing a group saw ``{"n": 1, "_id": ...}``."""
    db.orders.insert_many([{"item": "tea", "qty": 3}, {"item": "tea", "qty": 1},
                           {"item": "oat", "qty": 2}])
    groups = list(db.orders.aggregate([
        {"$group": {"_id": "$item", "n": {"$sum": 1}, "total": {"$sum": "$qty"}}},
        {"$sort": {"_id": 1}}]))
    assert [list(g) for g in groups] == [["_id", "n", "total"]] * 2
    assert groups == [{"_id": "oat", "n": 1, "total": 2}, {"_id": "tea", "n": 2, "total": 4}]


@pytest.mark.parametrize("command", [
    {"getMore": 5, "collection": "c"},
    {"killCursors": "c", "cursors": [5]},
])
def test_a_cursor_id_that_is_not_a_long_is_a_type_mismatch(db, command):
    """getMore's id and killCursors' ids are longs (MongoDB's getMore and killCursors pages);
    mongod and FerretDB refuse an int32 with TypeMismatch (14). The simulator took it, so a
    driver that sent int32 ids passed every test here and failed against a real server."""
    with pytest.raises(OperationFailure) as raised:
        db.command(command)
    assert raised.value.code == 14
    assert "expected type 'long'" in str(raised.value)


def test_a_write_error_has_the_fields_the_insert_page_lists(db):
    """The insert command's output (MongoDB's manual): each writeErrors entry has index, code
    and errmsg (and keyPattern, keyValue for a duplicate key); no codeName, which only a
    command error has. FerretDB answers the same; the simulator added a codeName."""
    db.c.insert_one({"_id": 1})
    reply = db.command("insert", "c", documents=[{"_id": 1}])
    (error,) = reply["writeErrors"]
    assert sorted(error) == ["code", "errmsg", "index", "keyPattern", "keyValue"]
