"""find, find_one and cursors."""
from .harness import S

DOCS = [{"_id": i, "a": i % 3, "b": 10 - i, "s": f"s{i}", "tags": ["x", "y"][: i % 3]}
        for i in range(1, 8)]


def _all(cursor):
    return list(cursor)


SCENARIOS = [
    S("find all", lambda c, m: _all(c.find()), DOCS),
    S("find with a filter", lambda c, m: _all(c.find({"a": 1})), DOCS),
    S("find with a projection document", lambda c, m: _all(c.find({}, {"a": 1, "_id": 0})), DOCS),
    S("find with a projection list", lambda c, m: _all(c.find({}, ["a", "s"])), DOCS),
    S("find positional skip and limit", lambda c, m: _all(c.find({}, None, 2, 3)), DOCS),
    S("find sort keyword", lambda c, m: _all(c.find(sort=[("b", 1)])), DOCS),
    S("find sort chained field and direction", lambda c, m: _all(c.find().sort("b", -1)), DOCS),
    S("find sort chained list", lambda c, m: _all(c.find().sort([("a", 1), ("b", -1)])), DOCS),
    S("find sort chained field alone", lambda c, m: _all(c.find().sort("b")), DOCS),
    S("find skip and limit chained", lambda c, m: _all(c.find().sort("_id", 1).skip(2).limit(2)),
      DOCS),
    S("find negative limit", lambda c, m: _all(c.find().limit(-2)), DOCS),
    S("find batch size sends getMores", lambda c, m: _all(c.find().batch_size(2)), DOCS),
    S("find limit with batch size", lambda c, m: _all(c.find(limit=5, batch_size=2)), DOCS),
    S("find max_time_ms", lambda c, m: _all(c.find().max_time_ms(5000)), DOCS),
    S("find hint by name", lambda c, m: _all(c.find().hint("_id_")), DOCS),
    S("find hint by key list", lambda c, m: _all(c.find().hint([("_id", 1)])), DOCS),
    S("find comment", lambda c, m: _all(c.find({}, comment="hello")), DOCS),
    S("find comment chained", lambda c, m: _all(c.find().comment("again")), DOCS),
    S("find allow_disk_use", lambda c, m: _all(c.find(allow_disk_use=True)), DOCS),
    S("find no_cursor_timeout", lambda c, m: _all(c.find(no_cursor_timeout=True)), DOCS),
    S("find collation", lambda c, m: _all(c.find(collation=m.Collation("en"))), DOCS),
    S("find let", lambda c, m: _all(c.find({"$expr": {"$eq": ["$a", "$$x"]}}, let={"x": 2})),
      DOCS),
    S("find max and min", lambda c, m: _all(c.find().hint([("_id", 1)]).min([("_id", 2)])
                                            .max([("_id", 5)])), DOCS),
    S("find_one", lambda c, m: c.find_one(), DOCS),
    S("find_one by _id value", lambda c, m: c.find_one(3), DOCS),
    S("find_one with a filter and projection", lambda c, m: c.find_one({"a": 2}, {"s": 1}),
      DOCS),
    S("find_one not found", lambda c, m: c.find_one({"a": 99}), DOCS),
    S("find_one with sort", lambda c, m: c.find_one(sort=[("b", 1)]), DOCS),
    S("find_one with skip", lambda c, m: c.find_one(skip=2, sort=[("_id", 1)]), DOCS),
    S("cursor next and alive", lambda c, m: _next_alive(c), DOCS),
    S("cursor to_list", lambda c, m: c.find().batch_size(3).to_list(), DOCS),
    S("cursor to_list with a length", lambda c, m: c.find().batch_size(2).to_list(3), DOCS),
    S("cursor as a context manager", lambda c, m: _with(c), DOCS),
    S("cursor close then iterate", lambda c, m: _closed(c), DOCS),
    S("cursor clone", lambda c, m: _clone(c), DOCS),
    S("cursor rewind", lambda c, m: _rewind(c), DOCS),
    S("cursor distinct", lambda c, m: sorted(c.find({"a": {"$gt": 0}}).distinct("a")), DOCS),
    S("cursor index", lambda c, m: c.find().sort("_id", 1)[2], DOCS),
    S("cursor slice", lambda c, m: list(c.find().sort("_id", 1)[1:3]), DOCS),
    S("cursor retrieved and id", lambda c, m: _retrieved(c), DOCS),
    S("cursor where", lambda c, m: _all(c.find().where("this.a == 1")), DOCS),
    S("cursor explain keys", lambda c, m: sorted(c.find({"a": 1}).explain())[:1], DOCS,
      compare_commands=False, note="explain output is the server's; only its presence counts"),
    S("find with a non-mapping filter", lambda c, m: _all(c.find([("a", 1)])), DOCS),
    S("sort after iteration starts", lambda c, m: _sort_late(c), DOCS),
    S("find on a missing collection", lambda c, m: _all(c.database.missing.find()), DOCS),
    S("find with $regex and nested fields", lambda c, m: _all(c.find({"s": {"$regex": "^s[12]"}})),
      DOCS),
    S("find array field", lambda c, m: _all(c.find({"tags": "y"})), DOCS),
    # Issue 45: an empty or falsy sort is no sort (an ODM passes sort=[] on every query).
    S("find sort=[]", lambda c, m: list(c.find(sort=[])), DOCS),
    S("find sort={}", lambda c, m: list(c.find(sort={})), DOCS),
    S("find sort=None", lambda c, m: list(c.find(sort=None)), DOCS),
    S("find_one sort=[]", lambda c, m: c.find_one({}, sort=[]), DOCS),
    S("find_one_and_update sort=[]", lambda c, m: c.find_one_and_update(
        {"_id": 1}, {"$set": {"x": 1}}, sort=[]), DOCS),
]


def _next_alive(c):
    cur = c.find().batch_size(2)
    first = next(cur)
    alive = cur.alive
    rest = list(cur)
    return first, alive, len(rest), cur.alive


def _with(c):
    with c.find().batch_size(2) as cur:
        first = cur.next()
    return first, cur.alive


def _closed(c):
    cur = c.find().batch_size(2)
    next(cur)
    cur.close()
    return list(cur), cur.alive


def _clone(c):
    cur = c.find({"a": 1}).sort("_id", -1).limit(2)
    first = list(cur)
    return first, list(cur.clone())


def _rewind(c):
    cur = c.find().sort("_id", 1).limit(3)
    first = list(cur)
    cur.rewind()
    return first, list(cur)


def _retrieved(c):
    cur = c.find().batch_size(2)
    next(cur)
    before = cur.retrieved
    list(cur)
    return before, cur.retrieved, cur.cursor_id


def _sort_late(c):
    cur = c.find()
    next(cur)
    cur.sort("a")
