"""insert, update, replace, delete and find_one_and_*."""
import collections

from bson import SON
from bson.raw_bson import RawBSONDocument
import bson

from .harness import S

DOCS = [{"_id": i, "a": i % 3, "n": i, "arr": [1, 2, 3]} for i in range(1, 6)]


def _insert_one_mutates(c, m):
    doc = {"x": 1}
    result = c.insert_one(doc)
    return result, "_id" in doc, doc["_id"] == result.inserted_id


def _insert_many_generator(c, m):
    return c.insert_many({"i": i} for i in range(3))


def _unacknowledged(c, m):
    w0 = c.with_options(write_concern=m.WriteConcern(w=0))
    result = w0.insert_one({"_id": 50})
    c.find_one({"_id": 50})  # a round trip: the w:0 insert is applied before
    return result.acknowledged, result.inserted_id


def _unacknowledged_counts(c, m):
    w0 = c.with_options(write_concern=m.WriteConcern(w=0))
    result = w0.update_one({"_id": 1}, {"$set": {"w": 0}})
    c.find_one({"_id": 1})  # a round trip: the w:0 update is applied before
    return result.matched_count


def _replace_raw(c, m):
    return c.replace_one({"_id": 1}, RawBSONDocument(bson.encode({"r": 1}))).raw_result


SCENARIOS = [
    S("insert_one", lambda c, m: c.insert_one({"_id": 10, "x": 1}), DOCS),
    S("insert_one generates and sets _id", _insert_one_mutates, DOCS),
    S("insert_one duplicate key", lambda c, m: c.insert_one({"_id": 1}), DOCS),
    S("insert_one not a document", lambda c, m: c.insert_one([("a", 1)]), DOCS),
    S("insert_one SON", lambda c, m: c.insert_one(SON([("_id", 11), ("z", 1), ("a", 2)])), DOCS),
    S("insert_one RawBSONDocument",
      lambda c, m: c.insert_one(RawBSONDocument(bson.encode({"_id": 12, "raw": True}))), DOCS),
    S("insert_one bypass_document_validation",
      lambda c, m: c.insert_one({"_id": 13}, bypass_document_validation=True), DOCS),
    S("insert_one comment", lambda c, m: c.insert_one({"_id": 14}, comment="c1"), DOCS),
    S("insert_one top-level dollar key", lambda c, m: c.insert_one({"_id": 15, "$x": 1}), DOCS),
    S("insert_one dotted key", lambda c, m: c.insert_one({"_id": 16, "a.b": 1}), DOCS),
    S("insert_many", lambda c, m: c.insert_many([{"_id": 20}, {"_id": 21}]), DOCS),
    S("insert_many generated ids", lambda c, m: c.insert_many([{"v": 1}, {"v": 2}]), DOCS),
    S("insert_many generator", _insert_many_generator, DOCS),
    S("insert_many ordered duplicate", lambda c, m: c.insert_many(
        [{"_id": 30}, {"_id": 1}, {"_id": 31}]), DOCS),
    S("insert_many unordered duplicate", lambda c, m: c.insert_many(
        [{"_id": 30}, {"_id": 1}, {"_id": 31}, {"_id": 2}], ordered=False), DOCS),
    S("insert_many empty", lambda c, m: c.insert_many([]), DOCS),
    S("insert_many not documents", lambda c, m: c.insert_many([1, 2]), DOCS),
    S("insert_many comment", lambda c, m: c.insert_many([{"_id": 40}], comment="many"), DOCS),
    S("update_one", lambda c, m: c.update_one({"_id": 1}, {"$set": {"x": 1}}), DOCS),
    S("update_one no match", lambda c, m: c.update_one({"_id": 99}, {"$set": {"x": 1}}), DOCS),
    S("update_one unchanged", lambda c, m: c.update_one({"_id": 1}, {"$set": {"a": 1}}), DOCS),
    S("update_one upsert", lambda c, m: c.update_one({"_id": 99}, {"$set": {"x": 1}},
                                                      upsert=True), DOCS),
    S("update_one upsert with generated id", lambda c, m: c.update_one(
        {"k": "new"}, {"$set": {"x": 1}}, upsert=True), DOCS),
    S("update_one array_filters", lambda c, m: c.update_one(
        {"_id": 1}, {"$set": {"arr.$[e]": 0}}, array_filters=[{"e": {"$gt": 1}}]), DOCS),
    S("update_one pipeline", lambda c, m: c.update_one(
        {"_id": 2}, [{"$set": {"sum": {"$add": ["$a", "$n"]}}}]), DOCS),
    S("update_one without operators", lambda c, m: c.update_one({"_id": 1}, {"x": 1}), DOCS),
    S("update_one empty update", lambda c, m: c.update_one({"_id": 1}, {}), DOCS),
    S("update_one hint", lambda c, m: c.update_one({"_id": 1}, {"$inc": {"n": 1}},
                                                    hint=[("_id", 1)]), DOCS),
    S("update_one collation", lambda c, m: c.update_one(
        {"_id": 1}, {"$inc": {"n": 1}}, collation=m.Collation("fr")), DOCS),
    S("update_one let", lambda c, m: c.update_one(
        {"$expr": {"$eq": ["$_id", "$$t"]}}, {"$set": {"hit": True}}, let={"t": 3}), DOCS),
    S("update_one comment", lambda c, m: c.update_one({"_id": 1}, {"$set": {"c": 1}},
                                                       comment="u"), DOCS),
    S("update_one sort", lambda c, m: c.update_one({"a": 1}, {"$set": {"first": True}},
                                                    sort={"n": -1}), DOCS),
    S("update_one bad filter", lambda c, m: c.update_one("x", {"$set": {"a": 1}}), DOCS),
    S("update_many", lambda c, m: c.update_many({"a": 1}, {"$inc": {"n": 10}}), DOCS),
    S("update_many upsert", lambda c, m: c.update_many({"a": 7}, {"$set": {"z": 1}},
                                                        upsert=True), DOCS),
    S("update_many array_filters", lambda c, m: c.update_many(
        {}, {"$inc": {"arr.$[e]": 10}}, array_filters=[{"e": 3}]), DOCS),
    S("update_many raw_result", lambda c, m: c.update_many({}, {"$set": {"k": 1}}).raw_result,
      DOCS),
    S("update unknown operator", lambda c, m: c.update_one({"_id": 1}, {"$nope": {"a": 1}}),
      DOCS),
    S("replace_one", lambda c, m: c.replace_one({"_id": 1}, {"r": 1}), DOCS),
    S("replace_one upsert", lambda c, m: c.replace_one({"_id": 77}, {"r": 1}, upsert=True),
      DOCS),
    S("replace_one with operators", lambda c, m: c.replace_one({"_id": 1}, {"$set": {"a": 1}}),
      DOCS),
    S("replace_one raw document", _replace_raw, DOCS),
    S("replace_one changing _id", lambda c, m: c.replace_one({"_id": 1}, {"_id": 2}), DOCS),
    S("delete_one", lambda c, m: c.delete_one({"a": 1}), DOCS),
    S("delete_one no match", lambda c, m: c.delete_one({"a": 42}), DOCS),
    S("delete_many", lambda c, m: c.delete_many({"a": {"$lt": 2}}), DOCS),
    S("delete_many all", lambda c, m: c.delete_many({}), DOCS),
    S("delete_one hint and comment", lambda c, m: c.delete_one({"_id": 2}, hint="_id_",
                                                                comment="d"), DOCS),
    S("delete_many collation and let", lambda c, m: c.delete_many(
        {"$expr": {"$gt": ["$n", "$$min"]}}, collation=m.Collation("en"), let={"min": 3}),
      DOCS),
    S("delete with a bad filter", lambda c, m: c.delete_one(5), DOCS),
    S("w:0 insert", _unacknowledged, DOCS),
    S("w:0 counts raise", _unacknowledged_counts, DOCS),
    S("find_one_and_update before", lambda c, m: c.find_one_and_update(
        {"_id": 1}, {"$inc": {"n": 1}}), DOCS),
    S("find_one_and_update after", lambda c, m: c.find_one_and_update(
        {"_id": 1}, {"$inc": {"n": 1}}, return_document=m.ReturnDocument.AFTER), DOCS),
    S("find_one_and_update projection and sort", lambda c, m: c.find_one_and_update(
        {"a": 1}, {"$set": {"t": 1}}, projection={"n": 1}, sort=[("n", -1)]), DOCS),
    S("find_one_and_update upsert", lambda c, m: c.find_one_and_update(
        {"_id": 90}, {"$set": {"t": 1}}, upsert=True, return_document=m.ReturnDocument.AFTER),
      DOCS),
    S("find_one_and_update not found", lambda c, m: c.find_one_and_update(
        {"_id": 90}, {"$set": {"t": 1}}), DOCS),
    S("find_one_and_update array_filters and hint", lambda c, m: c.find_one_and_update(
        {"_id": 1}, {"$set": {"arr.$[e]": 9}}, array_filters=[{"e": 2}], hint="_id_"), DOCS),
    S("find_one_and_update without operators", lambda c, m: c.find_one_and_update(
        {"_id": 1}, {"n": 1}), DOCS),
    S("find_one_and_replace", lambda c, m: c.find_one_and_replace(
        {"_id": 2}, {"new": True}, return_document=m.ReturnDocument.AFTER), DOCS),
    S("find_one_and_replace with operators", lambda c, m: c.find_one_and_replace(
        {"_id": 2}, {"$set": {"a": 1}}), DOCS),
    S("find_one_and_delete", lambda c, m: c.find_one_and_delete({"a": 2}, sort=[("n", 1)]),
      DOCS),
    S("find_one_and_delete projection list", lambda c, m: c.find_one_and_delete(
        {"_id": 3}, projection=["n"]), DOCS),
    S("find_one_and_update comment and let", lambda c, m: c.find_one_and_update(
        {"$expr": {"$eq": ["$_id", "$$i"]}}, {"$set": {"l": 1}}, let={"i": 4}, comment="f"),
      DOCS),
    S("insert OrderedDict keeps order", lambda c, m: (c.insert_one(collections.OrderedDict(
        [("_id", 60), ("z", 1), ("a", 1)])), list(c.find_one({"_id": 60}))), DOCS),
]
