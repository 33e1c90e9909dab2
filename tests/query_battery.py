"""A battery of queries, updates, aggregations, index constraints and error codes, each with the
result MongoDB documents for it (the manual's pages on query, projection, update and
aggregation operators, sort order, indexes and error codes; noted per case where it helps).

Each case seeds a collection, runs one PyMongo-style call and compares with ``expected``: a
value, or ``Err(code)`` for a server error with that code (and, optionally, fields of its
details). The same cases run against the simulated deployment through a client, and were
used to choose the query engine behind it.
"""
import datetime
import re

from bson import Decimal128, Int64, Regex

DT = datetime.datetime(2024, 1, 2, 3, 4, 5)


class Err:
    """A server error: its code and, optionally, fields its details must have."""

    def __init__(self, code, **fields):
        self.code, self.fields = code, fields

    def __repr__(self):
        return f"Err({self.code}, {self.fields})"


class Case:
    def __init__(self, name, docs, run, expected, indexes=()):
        self.name, self.docs, self.run, self.expected, self.indexes = (
            name, docs, run, expected, indexes)


def ids(cursor):
    return [d["_id"] for d in cursor]


def find_ids(filt, **kw):
    return lambda c: ids(c.find(filt, sort=[("_id", 1)], **kw))


def find_docs(filt, projection, **kw):
    return lambda c: list(c.find(filt, projection, sort=[("_id", 1)], **kw))


def update_then(method, filt, update, **kw):
    """Run an update, then return every document (sorted by _id)."""
    def run(c):
        getattr(c, method)(filt, update, **kw)
        return list(c.find({}, sort=[("_id", 1)]))
    return run


def pipeline(stages):
    return lambda c: list(c.aggregate(stages))


FRUIT = [{"_id": 1, "s": "Apple"}, {"_id": 2, "s": "banana"}, {"_id": 3, "s": "apricot"},
         {"_id": 4, "n": 5}]
TAGS = [{"_id": 1, "tags": ["a", "b"]}, {"_id": 2, "tags": ["b", "a"]},
        {"_id": 3, "tags": ["a", "b", "c"]}, {"_id": 4, "tags": "a"}]
ITEMS = [{"_id": 1, "items": [{"q": 1, "r": "x"}, {"q": 5, "r": "y"}]},
         {"_id": 2, "items": [{"q": 2, "r": "y"}]}, {"_id": 3, "items": []}]
TYPES = [{"_id": 1, "v": 1}, {"_id": 2, "v": "x"}, {"_id": 3, "v": 2.5}, {"_id": 4, "v": None},
         {"_id": 5}, {"_id": 6, "v": [1, "a"]}, {"_id": 7, "v": DT}, {"_id": 8, "v": True}]
SCORES = [{"_id": 1, "scores": [82, 85, 88]}, {"_id": 2, "scores": [75, 88, 89]}]
# "c" as an array, a string, an empty array, a document, documents, null and a number.
MIXED_C = [{"_id": 1, "c": [1, 2]}, {"_id": 2, "c": [3]}, {"_id": 3, "c": []},
           {"_id": 4, "c": "str"}, {"_id": 5, "c": [{"e": "x"}, {"e": 3}]}, {"_id": 6, "c": None},
           {"_id": 7, "c": {"f": 1}}]
SALES = [{"_id": 1, "item": "tea", "qty": 2, "price": 10, "day": 1},
         {"_id": 2, "item": "jam", "qty": 1, "price": 20, "day": 1},
         {"_id": 3, "item": "tea", "qty": 5, "price": 10, "day": 2},
         {"_id": 4, "item": "oat", "price": 5, "day": 2}]

QUERY = [
    # $regex with $options, a compiled pattern, and regexes in $in ($regex, $in pages).
    Case("regex with $options i", FRUIT, find_ids({"s": {"$regex": "^a", "$options": "i"}}), [1, 3]),
    Case("re.compile filter", FRUIT, find_ids({"s": re.compile("^a", re.I)}), [1, 3]),
    Case("bson Regex filter", FRUIT, find_ids({"s": Regex("an")}), [2]),
    Case("$in with a regex", FRUIT, find_ids({"s": {"$in": [re.compile("^b"), "Apple"]}}), [1, 2]),
    Case("$not with a regex matches missing", FRUIT, find_ids({"s": {"$not": re.compile("^a")}}),
         [1, 2, 4]),
    Case("regex matches array elements", TAGS, find_ids({"tags": re.compile("^c")}), [3]),
    # Query on arrays ("Query an Array").
    Case("array equality is exact and ordered", TAGS, find_ids({"tags": ["a", "b"]}), [1]),
    Case("scalar matches an array element", TAGS, find_ids({"tags": "b"}), [1, 2, 3]),
    Case("$all", TAGS, find_ids({"tags": {"$all": ["b", "a"]}}), [1, 2, 3]),
    Case("$size", TAGS, find_ids({"tags": {"$size": 2}}), [1, 2]),
    Case("$elemMatch on scalars", SCORES,
         find_ids({"scores": {"$elemMatch": {"$gte": 80, "$lt": 85}}}), [1]),
    Case("compound conditions without $elemMatch", SCORES,
         find_ids({"scores": {"$gt": 85, "$lt": 80}}), [2]),
    Case("$elemMatch on documents", ITEMS,
         find_ids({"items": {"$elemMatch": {"q": {"$gte": 2}, "r": "y"}}}), [1, 2]),
    Case("dotted path through an array of documents", ITEMS, find_ids({"items.q": {"$gt": 4}}), [1]),
    Case("array index in a path", ITEMS, find_ids({"items.0.q": 1}), [1]),
    Case("$not $eq on a path through an array matches no element", ITEMS,
         find_ids({"items.q": {"$not": {"$eq": 1}}}), [2, 3]),
    Case("$size 0", ITEMS, find_ids({"items": {"$size": 0}}), [3]),
    # $type, $exists and null ("Query for Null or Missing Fields", $type).
    Case("$type string (matches arrays holding one)", TYPES, find_ids({"v": {"$type": "string"}}),
         [2, 6]),
    Case("$type number", TYPES, find_ids({"v": {"$type": "number"}}), [1, 3, 6]),
    Case("$type null", TYPES, find_ids({"v": {"$type": "null"}}), [4]),
    Case("$type by number (2 is string)", TYPES, find_ids({"v": {"$type": 2}}), [2, 6]),
    Case("$type date and bool", TYPES, find_ids({"v": {"$type": ["date", "bool"]}}), [7, 8]),
    Case("equality to null matches missing", TYPES, find_ids({"v": None}), [4, 5]),
    Case("$exists false", TYPES, find_ids({"v": {"$exists": False}}), [5]),
    Case("$ne null", TYPES, find_ids({"v": {"$ne": None}}), [1, 2, 3, 6, 7, 8]),
    Case("$nin includes missing", TYPES, find_ids({"v": {"$nin": [1, "x"]}}), [3, 4, 5, 7, 8]),
    # Comparison ("Comparison/Sort Order": type bracketing; numbers compare across types).
    Case("$gt does not cross types", TYPES, find_ids({"v": {"$gt": 0}}), [1, 3, 6]),
    Case("int equals double", [{"_id": 1, "n": 1}, {"_id": 2, "n": 2.0}],
         find_ids({"n": {"$in": [1.0, Int64(2)]}}), [1, 2]),
    Case("$lt on dates", TYPES, find_ids({"v": {"$lt": datetime.datetime(2030, 1, 1)}}), [7]),
    Case("$mod", [{"_id": i, "n": i} for i in range(1, 9)], find_ids({"n": {"$mod": [4, 0]}}), [4, 8]),
    Case("$expr compares fields", [{"_id": 1, "a": 5, "b": 3}, {"_id": 2, "a": 1, "b": 3}],
         find_ids({"$expr": {"$gt": ["$a", "$b"]}}), [1]),
    Case("$or / $nor / $and", SALES,
         find_ids({"$and": [{"$or": [{"item": "tea"}, {"qty": 1}]}, {"$nor": [{"day": 2}]}]}),
         [1, 2]),
    Case("embedded document equality is exact", [{"_id": 1, "a": {"x": 1, "y": 2}},
                                                  {"_id": 2, "a": {"y": 2, "x": 1}}],
         find_ids({"a": {"x": 1, "y": 2}}), [1]),
    Case("dotted equality into a document", [{"_id": 1, "a": {"x": 1, "y": 2}}, {"_id": 2}],
         find_ids({"a.x": 1}), [1]),
    Case("count_documents with a filter", SALES, lambda c: c.count_documents({"item": "tea"}), 2),
    Case("distinct flattens arrays", TAGS, lambda c: sorted(c.distinct("tags")), ["a", "b", "c"]),
    Case("distinct through an array of documents", ITEMS, lambda c: sorted(c.distinct("items.r")),
         ["x", "y"]),
    Case("distinct with a filter", SALES, lambda c: sorted(c.distinct("item", {"day": 1})),
         ["jam", "tea"]),
    Case("distinct returns values in BSON order", [{"_id": 1, "x": 33}, {"_id": 2, "x": 11},
                                                   {"_id": 3, "x": "a"}, {"_id": 4, "x": 22.0}],
         lambda c: c.distinct("x"), [11, 22.0, 33, "a"]),
    # Found by running the simulator beside FerretDB (tests/ferretdb). "$size": it matches
    # arrays only, never a string, a document or a scalar.
    Case("$size matches arrays only", MIXED_C, find_ids({"c": {"$size": 1}}), [2]),
    Case("$size 0 matches an empty array, not an empty document", MIXED_C,
         find_ids({"c": {"$size": 0}}), [3]),
    Case("$size on a path to scalars matches nothing", MIXED_C,
         find_ids({"c.0": {"$size": 1}}), []),
    # "$mod", "Negative Dividend": the remainder keeps the dividend's sign (truncation).
    Case("$mod with a negative dividend", [{"_id": i, "a": v} for i, v in
                                           enumerate([-3, -1, 1, 3, 4], 1)],
         find_ids({"a": {"$mod": [2, 1]}}), [3, 4]),
    Case("$mod with a negative remainder", [{"_id": i, "a": v} for i, v in
                                            enumerate([-3, -1, 1, 3, 4], 1)],
         find_ids({"a": {"$mod": [2, -1]}}), [1, 2]),
    # "Query for Null or Missing Fields": a path that leads nowhere (through a string, an
    # empty array, null or a scalar) is a missing field: null, $not and $exists see it so.
    Case("null matches a path through a string, an empty array or null", MIXED_C,
         find_ids({"c.e": None}), [1, 2, 3, 4, 6, 7]),
    Case("$not matches a path through a string", MIXED_C,
         find_ids({"c.0": {"$not": {"$lte": 2}}}), [2, 3, 4, 5, 6, 7]),
    Case("$exists false on a path through a string or an empty array", MIXED_C,
         find_ids({"c.e": {"$exists": False}}), [1, 2, 3, 4, 6, 7]),
    # "Query for Null or Missing Fields", "Comparison Query Operators": $lte and $gte null
    # match null and a missing field, as {field: null} does; $lt and $gt null match nothing.
    Case("$lte null and $gte null match null and missing", TYPES,
         find_ids({"$and": [{"v": {"$lte": None}}, {"v": {"$gte": None}}]}), [4, 5]),
    Case("$lt null and $gt null match nothing", TYPES,
         find_ids({"$or": [{"v": {"$lt": None}}, {"v": {"$gt": None}}]}), []),
    Case("$regex over a path into mixed arrays", MIXED_C,
         find_ids({"c.e": {"$regex": "X", "$options": "i"}}), [5]),
]

PROJECTION_AND_SORT = [
    Case("dotted inclusion projection", [{"_id": 1, "a": {"b": 1, "c": 2}, "d": 3}],
         find_docs({}, {"a.b": 1, "_id": 0}), [{"a": {"b": 1}}]),
    Case("dotted projection through an array", ITEMS[:1],
         find_docs({}, {"items.q": 1, "_id": 0}), [{"items": [{"q": 1}, {"q": 5}]}]),
    Case("exclusion projection", [{"_id": 1, "a": 1, "b": 2}], find_docs({}, {"a": 0}),
         [{"_id": 1, "b": 2}]),
    Case("$slice projection", SCORES[:1], find_docs({}, {"scores": {"$slice": -2}}),
         [{"_id": 1, "scores": [85, 88]}]),
    Case("$elemMatch projection", ITEMS[:1],
         find_docs({}, {"items": {"$elemMatch": {"r": "y"}}}), [{"_id": 1, "items": [{"q": 5, "r": "y"}]}]),
    Case("positional $ projection", SCORES, find_docs({"scores": {"$gte": 89}}, {"scores.$": 1}),
         [{"_id": 2, "scores": [89]}]),
    Case("sort across types (null < numbers < strings < objects < arrays < bool < date)",
         [{"_id": 1, "v": "a"}, {"_id": 2, "v": True}, {"_id": 3, "v": 3}, {"_id": 4, "v": None},
          {"_id": 5, "v": {"x": 1}}, {"_id": 6, "v": DT}],
         lambda c: ids(c.find({}, sort=[("v", 1)])), [4, 3, 1, 5, 2, 6]),
    Case("ascending sort on arrays uses the smallest element",
         [{"_id": 1, "a": [5, 1]}, {"_id": 2, "a": 2}, {"_id": 3, "a": [3]}],
         lambda c: ids(c.find({}, sort=[("a", 1)])), [1, 2, 3]),
    Case("descending sort on arrays uses the largest element",
         [{"_id": 1, "a": [5, 1]}, {"_id": 2, "a": 2}, {"_id": 3, "a": [3]}],
         lambda c: ids(c.find({}, sort=[("a", -1)])), [1, 3, 2]),
    Case("sort on two keys with skip and limit", SALES,
         lambda c: ids(c.find({}, sort=[("day", -1), ("_id", 1)], skip=1, limit=2)), [4, 1]),
]

UPDATES = [
    # Found by running the simulator beside FerretDB (tests/ferretdb): "Update Operators",
    # where a path cannot go (PathNotViable, 28), what the removing operators do with a path
    # that leads nowhere, and the BSON order $min and $max compare in.
    Case("$set through null: 28", [{"_id": 1, "d": None}],
         update_then("update_one", {}, {"$set": {"d.f": 1}}), Err(28)),
    Case("$set of a field of an array: 28", [{"_id": 1, "d": [{"e": 5}]}],
         update_then("update_one", {}, {"$set": {"d.e": 1}}), Err(28)),
    Case("$unset and $pop of paths that lead nowhere change nothing", [{"_id": 1, "d": None}],
         update_then("update_one", {}, {"$unset": {"d.f": ""}, "$pop": {"z.y": 1}}),
         [{"_id": 1, "d": None}]),
    Case("$min and $max compare in BSON order across types",
         [{"_id": 1, "a": None, "b": "x", "c": [1]}],
         update_then("update_one", {}, {"$max": {"a": -1, "b": 2}, "$min": {"c": 7}}),
         [{"_id": 1, "a": -1, "b": "x", "c": 7}]),
    Case("$pop of a non-array: 14 TypeMismatch", [{"_id": 1, "a": 1}],
         update_then("update_one", {}, {"$pop": {"a": 1}}), Err(14)),
    Case("$setOnInsert leaves a matched document alone", [{"_id": 1, "d": None}],
         update_then("update_one", {}, {"$setOnInsert": {"d.e": 1}, "$set": {"x": 1}}),
         [{"_id": 1, "d": None, "x": 1}]),
    Case("$mul past an array's end pads it with null", [{"_id": 1, "c": []}],
         update_then("update_one", {}, {"$mul": {"c.1": 2}}), [{"_id": 1, "c": [None, 0]}]),
    Case("$set creates a nested path", [{"_id": 1}],
         update_then("update_one", {}, {"$set": {"a.b.c": 1}}), [{"_id": 1, "a": {"b": {"c": 1}}}]),
    Case("$unset", [{"_id": 1, "a": 1, "b": 2}], update_then("update_one", {}, {"$unset": {"a": ""}}),
         [{"_id": 1, "b": 2}]),
    Case("$inc on an array element path", [{"_id": 1, "scores": [{"s": 1}, {"s": 2}]}],
         update_then("update_one", {}, {"$inc": {"scores.0.s": 10, "n": 1}}),
         [{"_id": 1, "scores": [{"s": 11}, {"s": 2}], "n": 1}]),
    Case("$push with $each", [{"_id": 1, "a": [1]}],
         update_then("update_one", {}, {"$push": {"a": {"$each": [2, 3]}}}), [{"_id": 1, "a": [1, 2, 3]}]),
    Case("$push with $each, $sort and $slice", [{"_id": 1, "a": [5, 1]}],
         update_then("update_one", {}, {"$push": {"a": {"$each": [3, 9], "$sort": -1, "$slice": 3}}}),
         [{"_id": 1, "a": [9, 5, 3]}]),
    Case("$addToSet with $each skips duplicates", [{"_id": 1, "a": ["x"]}],
         update_then("update_one", {}, {"$addToSet": {"a": {"$each": ["x", "y", "y"]}}}),
         [{"_id": 1, "a": ["x", "y"]}]),
    Case("$pull with a condition", [{"_id": 1, "a": [1, 6, 3, 8]}],
         update_then("update_one", {}, {"$pull": {"a": {"$gte": 6}}}), [{"_id": 1, "a": [1, 3]}]),
    Case("$pull documents matching a query", ITEMS[:1],
         update_then("update_one", {}, {"$pull": {"items": {"r": "x"}}}),
         [{"_id": 1, "items": [{"q": 5, "r": "y"}]}]),
    Case("$pullAll", [{"_id": 1, "a": [1, 2, 1, 3]}],
         update_then("update_one", {}, {"$pullAll": {"a": [1, 3]}}), [{"_id": 1, "a": [2]}]),
    Case("$pop first and last", [{"_id": 1, "a": [1, 2, 3], "b": [1, 2, 3]}],
         update_then("update_one", {}, {"$pop": {"a": -1, "b": 1}}),
         [{"_id": 1, "a": [2, 3], "b": [1, 2]}]),
    Case("$rename", [{"_id": 1, "a": 1, "n": {"x": 2}}],
         update_then("update_one", {}, {"$rename": {"a": "b", "n.x": "y"}}),
         [{"_id": 1, "n": {}, "b": 1, "y": 2}]),
    Case("$min, $max and $mul", [{"_id": 1, "lo": 5, "hi": 5, "m": 3}],
         update_then("update_one", {}, {"$min": {"lo": 2}, "$max": {"hi": 9}, "$mul": {"m": 2}}),
         [{"_id": 1, "lo": 2, "hi": 9, "m": 6}]),
    Case("positional $ update", [{"_id": 1, "g": [80, 85, 80]}],
         update_then("update_one", {"g": 80}, {"$set": {"g.$": 82}}), [{"_id": 1, "g": [82, 85, 80]}]),
    Case("all positional $[] update", [{"_id": 1, "g": [1, 2]}],
         update_then("update_one", {}, {"$inc": {"g.$[]": 10}}), [{"_id": 1, "g": [11, 12]}]),
    Case("filtered positional $[x] with array_filters", [{"_id": 1, "g": [95, 102, 90]}],
         update_then("update_one", {}, {"$set": {"g.$[e]": 100}}, array_filters=[{"e": {"$gte": 100}}]),
         [{"_id": 1, "g": [95, 100, 90]}]),
    Case("upsert copies equality fields and $setOnInsert", [],
         update_then("update_one", {"k": "a", "n": {"$gt": 1}, "d.e": 2},
                     {"$set": {"x": 1}, "$setOnInsert": {"new": True}}, upsert=True),
         [{"k": "a", "d": {"e": 2}, "x": 1, "new": True}]),
    Case("a null _id in the query is the upserted _id", [],
         lambda c: (c.update_one({"_id": None}, {"$set": {"a": 1}}, upsert=True),
                    list(c.find({"_id": {"$type": "null"}})))[1], [{"_id": None, "a": 1}]),
    Case("replace_one keeps _id", [{"_id": 1, "a": 1}],
         update_then("replace_one", {"_id": 1}, {"b": 2}), [{"_id": 1, "b": 2}]),
    Case("pipeline update", [{"_id": 1, "a": 2, "b": 3}],
         update_then("update_one", {}, [{"$set": {"t": {"$add": ["$a", "$b"]}}}, {"$unset": "a"}]),
         [{"_id": 1, "b": 3, "t": 5}]),
    Case("update counts: matched and modified", [{"_id": 1, "a": 1}, {"_id": 2, "a": 2}],
         lambda c: (lambda r: (r.matched_count, r.modified_count))(
             c.update_many({}, {"$set": {"a": 2}})), (2, 1)),
    Case("find_one_and_update returns the new document", [{"_id": 1, "n": 1}],
         lambda c: c.find_one_and_update({"_id": 1}, {"$inc": {"n": 1}}, return_document=True),
         {"_id": 1, "n": 2}),
    Case("delete_many", SALES, lambda c: c.delete_many({"item": "tea"}).deleted_count, 2),
]

AGGREGATION = [
    Case("$group accumulators", SALES, pipeline([
        {"$group": {"_id": "$item", "n": {"$sum": 1}, "q": {"$sum": "$qty"}, "avg": {"$avg": "$qty"},
                    "lo": {"$min": "$qty"}, "hi": {"$max": "$qty"}}}, {"$sort": {"_id": 1}}]),
         [{"_id": "jam", "n": 1, "q": 1, "avg": 1.0, "lo": 1, "hi": 1},
          {"_id": "oat", "n": 1, "q": 0, "avg": None, "lo": None, "hi": None},
          {"_id": "tea", "n": 2, "q": 7, "avg": 3.5, "lo": 2, "hi": 5}]),
    Case("$group $push, $addToSet, $first, $last", SALES, pipeline([
        {"$sort": {"_id": 1}},
        {"$group": {"_id": "$day", "items": {"$push": "$item"}, "set": {"$addToSet": "$price"},
                    "first": {"$first": "$item"}, "last": {"$last": "$item"}}},
        {"$sort": {"_id": 1}}, {"$project": {"set": 0}}]),
         [{"_id": 1, "items": ["tea", "jam"], "first": "tea", "last": "jam"},
          {"_id": 2, "items": ["tea", "oat"], "first": "tea", "last": "oat"}]),
    Case("$group by null with $count", SALES,
         pipeline([{"$group": {"_id": None, "n": {"$count": {}}}}]), [{"_id": None, "n": 4}]),
    Case("$group on a compound key", SALES, pipeline([
        {"$group": {"_id": {"d": "$day", "i": "$item"}, "n": {"$sum": 1}}},
        {"$sort": {"_id.d": 1, "_id.i": 1}}]),
         [{"_id": {"d": 1, "i": "jam"}, "n": 1}, {"_id": {"d": 1, "i": "tea"}, "n": 1},
          {"_id": {"d": 2, "i": "oat"}, "n": 1}, {"_id": {"d": 2, "i": "tea"}, "n": 1}]),
    Case("$unwind", TAGS[:1], pipeline([{"$unwind": "$tags"}, {"$project": {"_id": 0}}]),
         [{"tags": "a"}, {"tags": "b"}]),
    Case("$unwind preserveNullAndEmptyArrays", ITEMS[1:], pipeline([
        {"$unwind": {"path": "$items", "preserveNullAndEmptyArrays": True}},
        {"$project": {"q": "$items.q"}}]), [{"_id": 2, "q": 2}, {"_id": 3}]),
    # $project: a computed field on a dotted path sets a field of an embedded document (the
    # engine made a field named "a.b"; conformance.py, found by the change_streams suite).
    Case("$project computed dotted field", [{"_id": 1, "a": {"keep": 1}, "x": 5}], pipeline([
        {"$project": {"a.b": {"$add": ["$x", 1]}, "a.keep": 1, "c.d": "$x"}}]),
         [{"_id": 1, "a": {"keep": 1, "b": 6}, "c": {"d": 5}}]),
    Case("$project expressions", SALES[:1], pipeline([{"$project": {
        "_id": 0, "total": {"$multiply": ["$qty", "$price"]},
        "label": {"$concat": [{"$toUpper": "$item"}, "-", {"$toString": "$day"}]}}}]),
         [{"total": 20, "label": "TEA-1"}]),
    Case("$addFields with $cond and $ifNull", SALES[2:], pipeline([{"$addFields": {
        "big": {"$cond": [{"$gte": ["$qty", 3]}, "yes", "no"]},
        "qty": {"$ifNull": ["$qty", 0]}}}, {"$project": {"big": 1, "qty": 1}}]),
         [{"_id": 3, "qty": 5, "big": "yes"}, {"_id": 4, "qty": 0, "big": "no"}]),
    Case("$match, $sort, $skip, $limit", SALES, pipeline([
        {"$match": {"price": {"$gte": 10}}}, {"$sort": {"_id": -1}}, {"$skip": 1}, {"$limit": 1},
        {"$project": {"_id": 1}}]), [{"_id": 2}]),
    Case("$count stage", SALES, pipeline([{"$match": {"item": "tea"}}, {"$count": "n"}]),
         [{"n": 2}]),
    Case("$sortByCount", SALES, pipeline([{"$sortByCount": "$item"}, {"$limit": 1}]),
         [{"_id": "tea", "count": 2}]),
    Case("$replaceRoot", [{"_id": 1, "in": {"a": 1}}], pipeline([{"$replaceRoot": {"newRoot": "$in"}}]),
         [{"a": 1}]),
    Case("$facet", SALES, pipeline([{"$facet": {
        "n": [{"$count": "n"}], "teas": [{"$match": {"item": "tea"}}, {"$project": {"_id": 1}}]}}]),
         [{"n": [{"n": 4}], "teas": [{"_id": 1}, {"_id": 3}]}]),
    Case("$bucket", SALES, pipeline([{"$bucket": {"groupBy": "$price", "boundaries": [0, 10, 50],
                                                  "default": "other"}}]),
         [{"_id": 0, "count": 1}, {"_id": 10, "count": 3}]),
    Case("$lookup", SALES[:2], lambda c: list(c.aggregate([
        {"$lookup": {"from": "prices", "localField": "item", "foreignField": "name", "as": "p"}},
        {"$project": {"p._id": 0}}])), [
            {"_id": 1, "item": "tea", "qty": 2, "price": 10, "day": 1, "p": [{"name": "tea", "v": 1}]},
            {"_id": 2, "item": "jam", "qty": 1, "price": 20, "day": 1, "p": []}]),
    Case("$unset stage", SALES[:1], pipeline([{"$unset": ["qty", "price", "day"]}]),
         [{"_id": 1, "item": "tea"}]),
]

INDEXES_AND_ERRORS = [
    Case("duplicate key on a unique index: 11000 with keyPattern and keyValue", [{"_id": 1, "e": "a"}],
         lambda c: c.insert_one({"_id": 2, "e": "a"}),
         Err(11000, keyPattern={"e": 1}, keyValue={"e": "a"}), indexes=[([("e", 1)], {"unique": True})]),
    # _id values compare as BSON values: a Decimal128 equals the same int (unique _id index).
    Case("duplicate numeric _id across types: 11000", [{"_id": 0}],
         lambda c: c.insert_one({"_id": Decimal128("0.000")}), Err(11000)),
    Case("a document _id holding an array", [],
         lambda c: [c.insert_one({"_id": {"a": [1, Decimal128("2")]}}).inserted_id,
                    c.find_one({"_id": {"a": [1, Decimal128("2")]}})["_id"]],
         [{"a": [1, Decimal128("2")]}] * 2),
    Case("duplicate _id: 11000", [{"_id": 1}], lambda c: c.insert_one({"_id": 1}),
         Err(11000, keyPattern={"_id": 1}, keyValue={"_id": 1})),
    Case("unique index over existing duplicates is refused", [{"_id": 1, "e": "a"}, {"_id": 2, "e": "a"}],
         lambda c: c.create_index("e", unique=True), Err(11000)),
    Case("compound unique index", [{"_id": 1, "a": 1, "b": 1}],
         lambda c: [c.insert_one({"_id": 2, "a": 1, "b": 2}).inserted_id,
                    c.insert_one({"_id": 3, "a": 1, "b": 1})],
         Err(11000), indexes=[([("a", 1), ("b", 1)], {"unique": True})]),
    Case("sparse unique index allows many missing", [{"_id": 1}],
         lambda c: c.insert_one({"_id": 2}).inserted_id, 2,
         indexes=[([("e", 1)], {"unique": True, "sparse": True})]),
    Case("unique index allows one missing only", [{"_id": 1}],
         lambda c: c.insert_one({"_id": 2}), Err(11000),
         indexes=[([("e", 1)], {"unique": True})]),
    Case("partial unique index", [{"_id": 1, "e": "a", "on": False}],
         lambda c: c.insert_one({"_id": 2, "e": "a", "on": False}).inserted_id, 2,
         indexes=[([("e", 1)], {"unique": True, "partialFilterExpression": {"on": True}})]),
    Case("update into a duplicate key: 11000", [{"_id": 1, "e": "a"}, {"_id": 2, "e": "b"}],
         lambda c: c.update_one({"_id": 2}, {"$set": {"e": "a"}}), Err(11000),
         indexes=[([("e", 1)], {"unique": True})]),
    Case("$set on _id: 66 ImmutableField", [{"_id": 1}],
         lambda c: c.update_one({"_id": 1}, {"$set": {"_id": 2}}), Err(66)),
    Case("hint naming no index: 2 BadValue", [{"_id": 1}],
         lambda c: list(c.find({}, hint="nope_1")), Err(2)),
    Case("unknown query operator: 2 BadValue", [{"_id": 1}],
         lambda c: list(c.find({"a": {"$foo": 1}})), Err(2)),
    Case("unknown update operator: 9 FailedToParse", [{"_id": 1}],
         lambda c: c.update_one({}, {"$foo": {"a": 1}}), Err(9)),
    Case("$inc on a string: 14 TypeMismatch", [{"_id": 1, "a": "x"}],
         lambda c: c.update_one({}, {"$inc": {"a": 1}}), Err(14)),
    Case("$push to a non-array: 2 BadValue", [{"_id": 1, "a": 1}],
         lambda c: c.update_one({}, {"$push": {"a": 1}}), Err(2)),
    Case("conflicting update paths: 40 ConflictingUpdateOperators", [{"_id": 1}],
         lambda c: c.update_one({}, {"$set": {"a": 1}, "$inc": {"a": 1}}), Err(40)),
    Case("unknown pipeline stage: 40324", [{"_id": 1}],
         lambda c: list(c.aggregate([{"$nope": {}}])), Err(40324)),
    Case("$group without _id: 15955", [{"_id": 1}],
         lambda c: list(c.aggregate([{"$group": {"n": {"$sum": 1}}}])), Err(15955)),
    Case("list_indexes shows _id_ and the created index", [{"_id": 1}],
         lambda c: sorted(i["name"] for i in c.list_indexes()), ["_id_", "e_1"],
         indexes=[([("e", 1)], {})]),
    Case("drop_index", [{"_id": 1}],
         lambda c: (c.drop_index("e_1"), sorted(i["name"] for i in c.list_indexes()))[1], ["_id_"],
         indexes=[([("e", 1)], {})]),
    Case("index options are kept (TTL, sparse)", [{"_id": 1}],
         lambda c: {k: v for k, v in c.index_information()["t_1"].items() if k in ("expireAfterSeconds",
                                                                               "sparse")},
         {"expireAfterSeconds": 60, "sparse": True},
         indexes=[([("t", 1)], {"expireAfterSeconds": 60, "sparse": True})]),
    Case("drop_index of a missing index: 27 IndexNotFound", [{"_id": 1}],
         lambda c: c.drop_index("nope_1"), Err(27)),
    Case("rename onto an existing collection: 48 NamespaceExists", [{"_id": 1}],
         lambda c: (c.database.other.insert_one({"_id": 1}), c.rename("other")), Err(48)),
    # Found by running the simulator beside FerretDB (tests/ferretdb): MongoDB's codes.
    Case("sort direction that is not a number: 15974", [{"_id": 1}],
         lambda c: list(c.find(sort=[("a", "asc")])), Err(15974)),  # sort_pattern: "Illegal key"
    Case("inclusion and exclusion in one projection: 31254", [{"_id": 1, "a": 1}],
         lambda c: list(c.find({}, {"a": 1, "s": 0})), Err(31254)),  # "Projection" page
    Case("index key that names no index type: 67 CannotCreateIndex", [{"_id": 1}],
         lambda c: c.create_index([("a", "up")]), Err(67)),  # "Unknown index plugin 'up'"
    Case("$match of a non-document: 15959", [{"_id": 1}],
         lambda c: list(c.aggregate([{"$match": []}])), Err(15959)),  # "$match" page
]

ALL = QUERY + PROJECTION_AND_SORT + UPDATES + AGGREGATION + INDEXES_AND_ERRORS


def seed(coll, case):
    """Seed ``coll`` (a PyMongo-like collection) for ``case``."""
    if case.docs:
        coll.insert_many([dict(d) for d in case.docs])
    for keys, options in case.indexes:
        coll.create_index(keys, **options)
    if case.name == "$lookup":
        coll.database.prices.insert_one({"_id": 9, "name": "tea", "v": 1})


def outcome(coll, case):
    """What the call returned, or Err(code) with the error's details."""
    try:
        return case.run(coll)
    except Exception as exc:
        code = getattr(exc, "code", None)
        if code is None:
            raise
        details = getattr(exc, "details", None) or {}
        return Err(code, **{k: v for k, v in details.items() if k != "code"})


def check(coll, case):
    """None if the outcome is MongoDB's documented result, else a description of the difference."""
    got = outcome(coll, case)
    want = case.expected
    if isinstance(want, Err):
        if not isinstance(got, Err) or got.code != want.code or any(
                got.fields.get(k) != v for k, v in want.fields.items()):
            return f"expected {want}, got {got!r}"
        return None
    if case.name.startswith("upsert"):  # the upserted _id is a fresh ObjectId
        got = [{k: v for k, v in d.items() if k != "_id"} for d in got]
    if got != want:
        return f"expected {want!r}, got {got!r}"
    return None
