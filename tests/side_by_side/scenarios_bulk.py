"""bulk_write with every write model, ordered and unordered, and its errors."""
from .harness import S
from .differences import PER_COMMAND_RETRYABILITY

DOCS = [{"_id": i, "a": i} for i in range(1, 5)]


def _mixed(m):
    return [m.InsertOne({"_id": 10}), m.UpdateOne({"_id": 1}, {"$set": {"u": 1}}),
            m.UpdateMany({"a": {"$gt": 2}}, {"$inc": {"a": 100}}),
            m.ReplaceOne({"_id": 2}, {"r": True}), m.DeleteOne({"_id": 3}),
            m.DeleteMany({"a": {"$gt": 100}}),
            m.UpdateOne({"_id": 20}, {"$set": {"up": 1}}, upsert=True),
            m.ReplaceOne({"_id": 21}, {"rep": 1}, upsert=True), m.InsertOne({"_id": 11})]


def _details(exc_run):
    def run(c, m):
        try:
            exc_run(c, m)
        except m.errors.BulkWriteError as exc:
            return exc.details, exc.code
        return "no error"
    return run


SCENARIOS = [
    S("bulk_write mixed ordered", lambda c, m: c.bulk_write(_mixed(m)), DOCS,
      difference=PER_COMMAND_RETRYABILITY),
    S("bulk_write mixed unordered", lambda c, m: c.bulk_write(_mixed(m), ordered=False), DOCS,
      difference=PER_COMMAND_RETRYABILITY),
    S("bulk_write result api", lambda c, m: c.bulk_write(_mixed(m)).bulk_api_result, DOCS,
      difference=PER_COMMAND_RETRYABILITY),
    S("bulk_write upserted_ids", lambda c, m: c.bulk_write(_mixed(m)).upserted_ids, DOCS,
      difference=PER_COMMAND_RETRYABILITY),
    S("bulk_write ordered error stops", _details(lambda c, m: c.bulk_write(
        [m.InsertOne({"_id": 50}), m.InsertOne({"_id": 1}), m.InsertOne({"_id": 51})])), DOCS),
    S("bulk_write unordered error continues", _details(lambda c, m: c.bulk_write(
        [m.InsertOne({"_id": 50}), m.InsertOne({"_id": 1}), m.InsertOne({"_id": 51}),
         m.UpdateOne({"_id": 2}, {"$set": {"_id": 3}})], ordered=False)), DOCS),
    S("bulk_write error in an update", _details(lambda c, m: c.bulk_write(
        [m.UpdateOne({"_id": 1}, {"$set": {"u": 1}}),
         m.UpdateOne({"_id": 2}, {"$set": {"_id": 99}})])), DOCS),
    S("bulk_write error type", lambda c, m: c.bulk_write([m.InsertOne({"_id": 1})]), DOCS),
    S("bulk_write empty", lambda c, m: c.bulk_write([]), DOCS),
    S("bulk_write not a model", lambda c, m: c.bulk_write([{"insertOne": {}}]), DOCS),
    S("bulk_write not a list", lambda c, m: c.bulk_write(m.InsertOne({"_id": 9})), DOCS),
    S("bulk_write bad update", lambda c, m: c.bulk_write([m.UpdateOne({}, {"x": 1})]), DOCS),
    S("bulk_write bad replacement", lambda c, m: c.bulk_write(
        [m.ReplaceOne({}, {"$set": {"x": 1}})]), DOCS),
    S("bulk_write comment and let", lambda c, m: c.bulk_write(
        [m.UpdateMany({"$expr": {"$gt": ["$a", "$$v"]}}, {"$set": {"big": True}})],
        comment="b", let={"v": 2}), DOCS),
    S("bulk_write bypass validation", lambda c, m: c.bulk_write(
        [m.InsertOne({"_id": 70})], bypass_document_validation=True), DOCS),
    S("bulk_write array_filters hint collation", lambda c, m: c.bulk_write(
        [m.UpdateOne({"_id": 1}, {"$set": {"x.$[e]": 1}}, array_filters=[{"e": 0}],
                     hint="_id_", collation=m.Collation("en")),
         m.DeleteMany({"_id": 4}, hint=[("_id", 1)])]), DOCS,
      difference=PER_COMMAND_RETRYABILITY),
    S("bulk_write w0", lambda c, m: c.with_options(write_concern=m.WriteConcern(w=0))
      .bulk_write([m.InsertOne({"_id": 80})]).acknowledged, DOCS),
    S("bulk_write pipeline update", lambda c, m: c.bulk_write(
        [m.UpdateMany({}, [{"$set": {"d": {"$multiply": ["$a", 2]}}}])]), DOCS),
    S("bulk_write many inserts", lambda c, m: c.bulk_write(
        [m.InsertOne({"i": i}) for i in range(50)]).inserted_count, DOCS),
    S("write models compare and print", lambda c, m: (
        m.InsertOne({"a": 1}) == m.InsertOne({"a": 1}),
        m.UpdateOne({"a": 1}, {"$set": {"b": 1}}) == m.UpdateOne({"a": 1}, {"$set": {"b": 1}}),
        repr(m.InsertOne({"a": 1})), repr(m.DeleteOne({"a": 1}))), DOCS),
]
