"""Common mistakes people make with PyMongo, the same with both drivers (issue 18): each
gets PyMongo's exception class (and its code where the server answers), never a different
error, a silent success or a traceback from deep inside."""
from bson import ObjectId

from .harness import S

DOCS = [{"_id": i, "a": i % 2, "s": f"x{i}"} for i in range(1, 6)]


def _exhausted_twice(c, m):
    cursor = c.find()
    first = list(cursor)
    return len(first), list(cursor)


def _closed_client(c, m):
    client = m.client()
    client.close()
    return client.sbs.c.find_one()


def _cursor_index_past_the_end(c, m):
    return c.find()[10]


def _chain_after_iteration(c, m):
    cursor = c.find()
    next(cursor)
    return cursor.limit(1)


SCENARIOS = [
    S("PyMongo 3 insert", lambda c, m: c.insert({"x": 1}), DOCS),
    S("PyMongo 3 count", lambda c, m: c.count(), DOCS),
    S("PyMongo 3 update", lambda c, m: c.update({}, {"$set": {"x": 1}}), DOCS),
    S("PyMongo 3 remove", lambda c, m: c.remove({}), DOCS),
    S("PyMongo 3 find_and_modify", lambda c, m: c.find_and_modify({}, {"$set": {"x": 1}}),
      DOCS),
    S("PyMongo 3 ensure_index", lambda c, m: c.ensure_index("a"), DOCS),
    S("PyMongo 3 cursor count", lambda c, m: c.find().count(), DOCS),
    S("PyMongo 3 database_names", lambda c, m: c.database.client.database_names(), DOCS),
    S("PyMongo 3 collection_names", lambda c, m: c.database.collection_names(), DOCS),
    S("find_one by an int _id", lambda c, m: c.find_one(3), DOCS),
    S("find_one by string id", lambda c, m: c.find_one("3"), DOCS),
    S("insert_one a list", lambda c, m: c.insert_one([{"x": 1}]), DOCS),
    S("insert_many a dict", lambda c, m: c.insert_many({"x": 1}), DOCS),
    S("insert_many a string", lambda c, m: c.insert_many("abc"), DOCS),
    S("update_one without $", lambda c, m: c.update_one({"_id": 1}, {"a": 5}), DOCS),
    S("update_many an empty $set", lambda c, m: c.update_many({}, {"$set": {}}), DOCS),
    S("replace_one with $", lambda c, m: c.replace_one({"_id": 1}, {"$set": {"a": 5}}), DOCS),
    S("update_one a bad operator", lambda c, m: c.update_one({"_id": 1}, {"$sett": {"a": 1}}),
      DOCS),
    S("find a bad operator", lambda c, m: list(c.find({"a": {"$bad": 1}})), DOCS),
    S("find mixed projection", lambda c, m: list(c.find({}, {"a": 1, "s": 0})), DOCS),
    S("find a filter that is not a document", lambda c, m: c.find([("a", 1)]), DOCS),
    S("find projection of ints", lambda c, m: c.find({}, [1, 2]), DOCS),
    S("cursor sort with a dict", lambda c, m: list(c.find().sort({"a": -1, "_id": 1})), DOCS),
    S("cursor sort direction a string", lambda c, m: list(c.find().sort("a", "asc")), DOCS),
    S("cursor limit a string", lambda c, m: c.find().limit("5"), DOCS),
    S("cursor skip negative", lambda c, m: c.find().skip(-1), DOCS),
    S("cursor batch_size negative", lambda c, m: c.find().batch_size(-1), DOCS),
    S("cursor index past the end", _cursor_index_past_the_end, DOCS),
    S("cursor negative index", lambda c, m: c.find()[-1], DOCS),
    S("cursor slice with a step", lambda c, m: c.find()[0:4:2], DOCS),
    S("cursor chained after iteration", _chain_after_iteration, DOCS),
    # PyMongo refuses min/max without hint before sending: the server would pick an index.
    S("cursor min without a hint", lambda c, m: list(c.find().min([("a", 1)])), DOCS),
    S("cursor max without a hint", lambda c, m: c.find().max([("a", 1)]).explain(), DOCS),
    S("cursor iterated twice", _exhausted_twice, DOCS),
    S("aggregate a dict pipeline", lambda c, m: c.aggregate({"$match": {}}), DOCS),
    S("aggregate a bad stage", lambda c, m: list(c.aggregate([{"$nope": {}}])), DOCS),
    S("bulk_write an empty list", lambda c, m: c.bulk_write([]), DOCS),
    S("bulk_write dicts", lambda c, m: c.bulk_write([{"insertOne": {"document": {}}}]), DOCS),
    S("bulk_write a tuple", lambda c, m: c.bulk_write((m.InsertOne({}),)), DOCS),
    S("duplicate key", lambda c, m: c.insert_one({"_id": 1}), DOCS),
    S("drop a missing index", lambda c, m: c.drop_index("nope_1"), DOCS),
    S("create_index an empty list", lambda c, m: c.create_index([]), DOCS),
    S("create_index a bad direction", lambda c, m: c.create_index([("a", "up")]), DOCS),
    S("distinct a non-string key", lambda c, m: c.distinct(5), DOCS),
    S("count_documents without a filter", lambda c, m: c.count_documents(), DOCS),
    S("count_documents a bad filter", lambda c, m: c.count_documents([]), DOCS),
    S("delete_one a bad filter", lambda c, m: c.delete_one("x"), DOCS),
    S("ObjectId not hex", lambda c, m: c.find_one({"_id": ObjectId("nothex")}), DOCS),
    S("bad database name", lambda c, m: c.database.client["bad.name"], DOCS),
    S("database name not a string", lambda c, m: c.database.client[5], DOCS),
    S("bad collection name", lambda c, m: c.database["bad$name"], DOCS),
    S("collection name empty", lambda c, m: c.database[""], DOCS),
    S("get_collection not a string", lambda c, m: c.database.get_collection(5), DOCS),
    S("create an existing collection", lambda c, m: c.database.create_collection("c"), DOCS),
    S("rename to an existing collection", lambda c, m: (
        c.database.other.insert_one({}), c.rename("other"))[1], DOCS),
    S("rename to a bad name", lambda c, m: c.rename("bad$"), DOCS),
    S("database truth value", lambda c, m: bool(c.database), DOCS),
    S("collection truth value", lambda c, m: bool(c), DOCS),
    S("iterate a collection", lambda c, m: list(c), DOCS),
    S("iterate a database", lambda c, m: list(c.database), DOCS),
    S("call a database", lambda c, m: c.database(), DOCS),
    S("closed client", _closed_client, DOCS),
    S("unknown command", lambda c, m: c.database.command("nosuchcommand"), DOCS),
    S("command not a document", lambda c, m: c.database.command(5), DOCS),
    S("MongoClient port a string", lambda c, m: m.client("localhost", "27017"), DOCS),
    S("MongoClient tz_aware not a bool", lambda c, m: m.client(tz_aware="yes"), DOCS),
    S("MongoClient negative maxPoolSize", lambda c, m: m.client(maxPoolSize=-1), DOCS),
    # Auth spec: the default mechanism negotiates SCRAM, whose credential MUST have a password.
    S("MongoClient a username and no password", lambda c, m: m.client(username="u"), DOCS),
    S("MongoClient document_class not a class",
      lambda c, m: m.client(document_class=5), DOCS),
    S("WriteConcern j not a bool", lambda c, m: m.WriteConcern(j="true"), DOCS),
    S("WriteConcern w=0 with j", lambda c, m: m.WriteConcern(w=0, j=True), DOCS),
    S("with_options codec not CodecOptions",
      lambda c, m: c.with_options(codec_options={"tz_aware": True}), DOCS),
    S("with_options write concern not a WriteConcern",
      lambda c, m: c.with_options(write_concern={"w": 1}), DOCS),
    S("find_one_and_update without $", lambda c, m: c.find_one_and_update(
        {"_id": 1}, {"a": 1}), DOCS),
    S("find_one_and_replace with $", lambda c, m: c.find_one_and_replace(
        {"_id": 1}, {"$set": {"a": 1}}), DOCS),
    S("session of another client", lambda c, m: c.find_one(
        {}, session=m.client().start_session()), DOCS),
    S("ended session", lambda c, m: (lambda s: (s.end_session(), c.find_one({}, session=s)))(
        c.database.client.start_session()), DOCS),
    S("commit without a transaction", lambda c, m: c.database.client.start_session()
      .commit_transaction(), DOCS),
]
