"""aggregate, count, distinct, indexes, collections, databases and the client."""

from .harness import S

DOCS = [{"_id": i, "k": "abc"[i % 3], "n": i} for i in range(1, 9)]


def _indexes(c):
    return sorted((name, sorted(info.items())) for name, info in
                  c.index_information().items())


def _members(c, m):
    """PyMongo's monitors find the secondaries in the background: wait for them (singlemongo
    has them after the first operation's scan)."""
    import time
    client = c.database.client
    c.find_one()
    for _ in range(100):
        if len(client.nodes) == 3:
            break
        time.sleep(0.05)
    return client.primary, sorted(client.secondaries), sorted(client.arbiters), len(client.nodes)


SCENARIOS = [
    # aggregate
    S("aggregate group", lambda c, m: sorted(c.aggregate(
        [{"$group": {"_id": "$k", "t": {"$sum": "$n"}}}]), key=lambda d: d["_id"]), DOCS),
    S("aggregate sort limit", lambda c, m: list(c.aggregate(
        [{"$sort": {"n": -1}}, {"$limit": 3}])), DOCS),
    S("aggregate batchSize", lambda c, m: list(c.aggregate([{"$match": {}}], batchSize=3)), DOCS),
    S("aggregate allowDiskUse comment let", lambda c, m: list(c.aggregate(
        [{"$match": {"$expr": {"$gt": ["$n", "$$m"]}}}], allowDiskUse=True, comment="agg",
        let={"m": 5})), DOCS),
    S("aggregate maxTimeMS", lambda c, m: list(c.aggregate([{"$count": "n"}], maxTimeMS=1000)),
      DOCS),
    S("aggregate $out", lambda c, m: (list(c.aggregate([{"$match": {"k": "a"}},
                                                          {"$out": "out"}])),
                                      list(c.database.out.find())), DOCS),
    S("aggregate bad stage", lambda c, m: list(c.aggregate([{"$nope": {}}])), DOCS),
    S("aggregate not a list", lambda c, m: list(c.aggregate({"$match": {}})), DOCS),
    S("aggregate cursor to_list", lambda c, m: c.aggregate([{"$project": {"n": 1}}],
                                                           batchSize=2).to_list(), DOCS),
    # counts and distinct
    S("count_documents", lambda c, m: c.count_documents({"k": "b"}), DOCS),
    S("count_documents all with skip limit", lambda c, m: c.count_documents(
        {}, skip=2, limit=3), DOCS),
    S("count_documents hint", lambda c, m: c.count_documents({}, hint="_id_"), DOCS),
    S("count_documents bad filter", lambda c, m: c.count_documents(None), DOCS),
    S("estimated_document_count", lambda c, m: c.estimated_document_count(), DOCS),
    S("distinct", lambda c, m: sorted(c.distinct("k")), DOCS),
    S("distinct with filter", lambda c, m: sorted(c.distinct("n", {"k": "a"})), DOCS),
    S("distinct non-string key", lambda c, m: c.distinct(5), DOCS),
    # indexes
    S("create_index single", lambda c, m: (c.create_index("k"), _indexes(c)), DOCS),
    S("create_index compound list", lambda c, m: (
        c.create_index([("k", m.ASCENDING), ("n", m.DESCENDING)]), _indexes(c)), DOCS),
    S("create_index options", lambda c, m: (c.create_index(
        "n", unique=True, sparse=True, name="n_unique"), _indexes(c)), DOCS),
    S("create_index ttl", lambda c, m: (c.create_index("when", expireAfterSeconds=3600),
                                        _indexes(c)), DOCS),
    S("create_index partial", lambda c, m: (c.create_index(
        [("k", 1)], partialFilterExpression={"n": {"$gt": 3}}), _indexes(c)), DOCS),
    S("create_index collation", lambda c, m: c.create_index("k", collation=m.Collation("en")),
      DOCS),
    S("create_index hashed", lambda c, m: c.create_index([("k", m.HASHED)]), DOCS),
    S("create_index unique violation", lambda c, m: c.create_index("k", unique=True), DOCS),
    S("create_index bad key", lambda c, m: c.create_index(5), DOCS),
    S("create_indexes models", lambda c, m: (c.create_indexes(
        [m.IndexModel("k"), m.IndexModel([("n", -1)], name="by_n", unique=True)]),
        _indexes(c)), DOCS),
    S("create_indexes not models", lambda c, m: c.create_indexes(["k"]), DOCS),
    S("IndexModel document", lambda c, m: (m.IndexModel([("a", 1), ("b", -1)], unique=True)
                                           .document, m.IndexModel("a").document), DOCS),
    S("list_indexes", lambda c, m: (c.create_index("k"), [dict(i) for i in c.list_indexes()]),
      DOCS),
    S("drop_index by name", lambda c, m: (c.create_index("k"), c.drop_index("k_1"),
                                          _indexes(c)), DOCS),
    S("drop_index by key", lambda c, m: (c.create_index([("k", 1), ("n", 1)]),
                                         c.drop_index([("k", 1), ("n", 1)]), _indexes(c)), DOCS),
    S("drop_index missing", lambda c, m: c.drop_index("nope_1"), DOCS),
    S("drop_indexes", lambda c, m: (c.create_index("k"), c.create_index("n"),
                                    c.drop_indexes(), _indexes(c)), DOCS),
    S("index_information on a missing collection",
      lambda c, m: c.database.nothing.index_information(), DOCS),
    # collections
    S("drop", lambda c, m: (c.drop(), c.database.list_collection_names()), DOCS),
    S("drop a missing collection", lambda c, m: c.database.nothing.drop(), DOCS),
    S("rename", lambda c, m: (c.rename("renamed"), c.database.list_collection_names()), DOCS),
    S("rename onto an existing collection", lambda c, m: (
        c.database.other.insert_one({}), c.rename("other")), DOCS),
    S("rename dropTarget", lambda c, m: (c.database.other.insert_one({}),
                                         c.rename("other", dropTarget=True)), DOCS),
    S("rename bad name", lambda c, m: c.rename("$bad"), DOCS),
    S("options", lambda c, m: c.options(), DOCS),
    S("create_collection", lambda c, m: (c.database.create_collection("made").name,
                                         sorted(c.database.list_collection_names())), DOCS),
    S("create_collection with a validator", lambda c, m: (c.database.create_collection(
        "valid", validator={"n": {"$type": "int"}}).options(),
        c.database.valid.insert_one({"n": "x"})), DOCS),
    S("create_collection existing", lambda c, m: c.database.create_collection("c"), DOCS),
    S("list_collection_names filter", lambda c, m: (c.database.create_collection("z1").name,
                                                    c.database.list_collection_names(
                                                        filter={"name": "c"})), DOCS),
    # Issue 45: a filter on more than the name sends no nameOnly (Enumerating Collections).
    S("list_collection_names filter on type", lambda c, m: sorted(
        c.database.list_collection_names(filter={"type": "collection"})), DOCS),
    S("list_collection_names filter on name and type", lambda c, m: sorted(
        c.database.list_collection_names(filter={"name": "c", "type": "collection"})), DOCS),
    S("list_collection_names empty filter", lambda c, m: sorted(
        c.database.list_collection_names(filter={})), DOCS),
    S("list_collection_names filter not a mapping", lambda c, m:
      c.database.list_collection_names(filter=[("name", "c")]), DOCS),
    S("list_collections", lambda c, m: sorted(d["name"] for d in
                                              c.database.list_collections()), DOCS),
    S("drop_collection by object", lambda c, m: (c.database.drop_collection(c),
                                                 c.database.list_collection_names()), DOCS),
    S("collection name and full_name", lambda c, m: (c.name, c.full_name, c.database.name,
                                                     repr(c.database.name)), DOCS),
    S("sub-collection", lambda c, m: (c.sub.full_name, c["x.y"].name), DOCS),
    S("invalid collection names", lambda c, m: c.database["$bad"], DOCS),
    S("empty collection name", lambda c, m: c.database[""], DOCS),
    S("collection equality", lambda c, m: (c == c.database.c, c != c.database.d,
                                           c.database == c.database.client.sbs), DOCS),
    S("mistyped collection method", lambda c, m: c.find_onee({}), DOCS),
    S("collection is not iterable", lambda c, m: iter(c), DOCS),
    S("collection with_options read preference", lambda c, m: (
        c.with_options(read_preference=m.ReadPreference.SECONDARY).read_preference,
        c.read_preference), DOCS),
    S("collection with_options write concern", lambda c, m: c.with_options(
        write_concern=m.WriteConcern(w="majority", wtimeout=1000)).insert_one({"_id": 99}),
      DOCS),
    S("collection with_options read concern", lambda c, m: list(c.with_options(
        read_concern=m.ReadConcern("majority")).find({"n": 1})), DOCS),
    S("collection secondary reads", lambda c, m: list(c.with_options(
        read_preference=m.ReadPreference.SECONDARY_PREFERRED).find({"n": 2})), DOCS),
    S("collection tagged secondary", lambda c, m: c.with_options(
        read_preference=m.read_preferences.Secondary([{"dc": "nowhere"}])).find_one(), DOCS,
      compare_commands=False),
    # databases
    S("database command ping", lambda c, m: c.database.command("ping"), DOCS),
    S("database command document", lambda c, m: c.database.command({"count": "c"}), DOCS),
    S("database command with value and kwargs", lambda c, m: c.database.command(
        "count", "c", query={"k": "a"}), DOCS),
    S("database command error", lambda c, m: c.database.command("noSuchCommand"), DOCS),
    S("database command check=False", lambda c, m: c.database.command(
        "noSuchCommand", check=False)["ok"], DOCS, compare_commands=False),
    S("database get_collection", lambda c, m: c.database.get_collection("c").find_one(), DOCS),
    S("database with_options", lambda c, m: c.database.with_options(
        read_preference=m.ReadPreference.NEAREST).c.find_one({"_id": 1}), DOCS),
    S("database aggregate", lambda c, m: list(c.database.aggregate(
        [{"$documents": [{"x": 1}, {"x": 2}]}])), DOCS),
    S("database name and repr", lambda c, m: (c.database.name, c.database.c.name), DOCS),
    S("invalid database name", lambda c, m: c.database.client["a.b"], DOCS),
    S("mistyped database method", lambda c, m: c.database.list_collection_name(), DOCS),
    # client
    S("list_database_names", lambda c, m: "sbs" in c.database.client.list_database_names(),
      DOCS),
    S("list_databases", lambda c, m: sorted(d["name"] for d in
                                            c.database.client.list_databases()), DOCS),
    S("drop_database", lambda c, m: (c.database.client.drop_database("sbs"),
                                     "sbs" in c.database.client.list_database_names()), DOCS),
    S("server_info", lambda c, m: sorted(k for k in c.database.client.server_info()
                                         if k in ("version", "versionArray", "ok")), DOCS),
    S("client address", lambda c, m: (c.find_one(), c.database.client.address)[1], DOCS,
      compare_commands=False),
    S("client primary and secondaries", _members, DOCS, compare_commands=False),
    S("client is_primary is_mongos", lambda c, m: (
        c.database.client.is_primary, c.database.client.is_mongos), DOCS,
      compare_commands=False),
    S("client get_database options", lambda c, m: c.database.client.get_database(
        "sbs", read_preference=m.ReadPreference.SECONDARY_PREFERRED).c.find_one({"_id": 2}),
      DOCS),
    S("client get_default_database without one", lambda c, m:
      c.database.client.get_default_database(), DOCS),
    S("client get_default_database default", lambda c, m:
      c.database.client.get_default_database("fallback").name, DOCS),
    S("client get_default_database from URI", lambda c, m: m.client(
        m.uri.replace("/?", "/named?")).get_default_database().name, DOCS),
    S("client attribute is a database", lambda c, m: c.database.client.sbs.name, DOCS),
    S("client item is a database", lambda c, m: c.database.client["sbs"]["c"].full_name, DOCS),
    S("mistyped client method", lambda c, m: c.database.client.list_database_name(), DOCS),
    S("client is not iterable", lambda c, m: next(c.database.client), DOCS),
    S("client read preference and concerns", lambda c, m: (
        c.database.client.read_preference, c.database.client.write_concern,
        c.database.client.read_concern), DOCS),
    S("client close then use", lambda c, m: _close_then_use(m), DOCS),
    S("client with read preference in the URI", lambda c, m: m.client(
        m.uri + "&readPreference=secondary").sbs.c.find_one({"_id": 1}), DOCS),
    S("client keyword write concern", lambda c, m: m.client(w=1, journal=True).sbs.c.insert_one(
        {"_id": 123}), DOCS),
    S("client username keywords", lambda c, m: m.client(
        username="u", password="p", authSource="admin").sbs.c.find_one(), DOCS,
      compare_commands=False, note="the simulated deployment has no users here: both fail"),
]


def _close_then_use(m):
    client = m.client()
    client.sbs.c.find_one()
    client.close()
    return client.sbs.c.find_one()
