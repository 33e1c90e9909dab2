"""The simulator judged against a real server. The simulator's query, update and aggregation
battery (tests/query_battery.py: each case MongoDB's documented result) runs on FerretDB too,
and generated filters run on both, their answers compared.

Where the simulator and FerretDB differ, MongoDB's documentation decides. A FerretDB departure
from it is listed here with its cause and never copied into the simulator; each simulator
fault found this way got its own fix and its own battery case (tests/query_battery.py, the
cases marked "Found by running the simulator beside FerretDB")."""
import datetime

import pymongo
import pytest
from bson import Int64, ObjectId
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from singlemongo.testing import Standalone

from .. import query_battery
from .unsupported import COMMANDS, DIFF

NOT_IMPLEMENTED = f"not implemented in FerretDB v1.24 ({COMMANDS}, its aggregation and operator pages)"
NESTED = f"{DIFF}, 3: no nested arrays"
UNICODE_FLAG = ("FerretDB refuses the regular expression flag 'u' that PyMongo sends for a "
                "compiled Python pattern (51108); MongoDB takes it")
NO_KEY_DETAILS = ("FerretDB's duplicate key error has no keyPattern or keyValue (MongoDB 4.4+ "
                  "sends both; the insert page)")
UNIQUE = ("FerretDB's unique indexes depart from MongoDB's \"Unique Indexes\" page (a second "
          "missing value, an index over duplicates: 11000)")
IGNORED = f"FerretDB ignores hint ({COMMANDS}: find, hint 'Ignored')"
OTHER_CODE = "FerretDB answers another code than MongoDB documents"
ID_KINDS = ("FerretDB closes the connection on a numeric _id of another type or an array _id "
            "(MongoDB: 11000, and 2 for an array _id)")
ARRAY_ELEMENTS = ("FerretDB does not apply the operator to each array element, as MongoDB's "
                  "\"Query an Array\" pages say it does")

# Battery cases FerretDB v1.24 answers otherwise than MongoDB documents, by cause.
FERRETDB_DEPARTS = {
    **{name: UNICODE_FLAG for name in ("re.compile filter", "$in with a regex",
                                       "$not with a regex matches missing",
                                       "regex matches array elements")},
    "$elemMatch on scalars": ARRAY_ELEMENTS,
    "$not $eq on a path through an array matches no element": ARRAY_ELEMENTS,
    **{name: NOT_IMPLEMENTED for name in (
        "$elemMatch on documents", "$expr compares fields", "$slice projection",
        "$elemMatch projection", "$push with $each, $sort and $slice", "$pull with a condition",
        "$pull documents matching a query", "positional $ update", "all positional $[] update",
        "filtered positional $[x] with array_filters", "pipeline update", "$group accumulators",
        "$group $push, $addToSet, $first, $last", "$unwind preserveNullAndEmptyArrays",
        "$project computed dotted field", "$project expressions",
        "$addFields with $cond and $ifNull", "$sortByCount", "$replaceRoot", "$facet",
        "$bucket", "$lookup", "partial unique index", "index options are kept (TTL, sparse)")},
    **{name: NO_KEY_DETAILS for name in (
        "duplicate key on a unique index: 11000 with keyPattern and keyValue",
        "duplicate _id: 11000")},
    **{name: ID_KINDS for name in ("duplicate numeric _id across types: 11000",
                                   "a document _id holding an array")},
    **{name: UNIQUE for name in ("unique index over existing duplicates is refused",
                                 "unique index allows one missing only",
                                 "update into a duplicate key: 11000")},
    "hint naming no index: 2 BadValue": IGNORED,
    "unknown pipeline stage: 40324": OTHER_CODE + " (40234)",
    "index key that names no index type: 67 CannotCreateIndex": OTHER_CODE + " (27)",
}


@pytest.fixture(scope="module")
def battery_db(ferretdb):
    client = pymongo.MongoClient(ferretdb.uri(), serverSelectionTimeoutMS=10000)
    yield client.battery
    client.close()


def test_every_listed_departure_is_a_battery_case():
    assert set(FERRETDB_DEPARTS) <= {case.name for case in query_battery.ALL}


@pytest.mark.parametrize("case", query_battery.ALL, ids=[c.name for c in query_battery.ALL])
def test_ferretdb_gives_mongodbs_documented_result(battery_db, case):
    """FerretDB answers each battery case as MongoDB documents it, or departs as listed (and
    a listed departure that FerretDB no longer shows fails, so the list stays true)."""
    coll = battery_db[f"c{query_battery.ALL.index(case)}"]
    coll.drop()
    battery_db.prices.drop()
    try:
        query_battery.seed(coll, case)
        difference = query_battery.check(coll, case)
    except pymongo.errors.PyMongoError as exc:  # the server refused the seed or the call
        difference = f"raised {exc!r:.200}"
    if case.name in FERRETDB_DEPARTS:
        assert difference is not None, f"FerretDB now gives MongoDB's result: {case.name}"
    else:
        assert difference is None


# ----- generated filters on both servers ---------------------------------------------------

DOCS = [
    {"_id": 1, "a": 1, "b": "x", "c": [1, 2], "d": {"e": 1}},
    {"_id": 2, "a": 2.5, "b": "y", "c": [3], "d": {"e": 2, "f": "z"}},
    {"_id": 3, "a": None, "b": "X", "c": [], "d": None},
    {"_id": 4, "b": 5, "c": "str", "d": {"e": [1, 2]}},
    {"_id": 5, "a": Int64(7), "b": True, "c": [{"e": 1}, {"e": 3}], "d": {}},
    {"_id": 6, "a": -1, "b": datetime.datetime(2024, 1, 2), "c": [1, "a"], "d": {"e": None}},
    {"_id": 7, "a": "10", "b": ObjectId("65a000000000000000000001"), "c": [2, 2],
     "d": [{"e": 5}]},
]
SCALAR_FIELDS = ["a", "b", "_id", "missing", "d.f"]
ARRAY_FIELDS = ["c", "d", "d.e", "c.e", "c.0"]  # they reach an array in some document
VALUES = st.sampled_from([1, 2, 2.5, -1, 0, None, "x", "X", "10", True, False, [], [1, 2],
                          {"e": 1}, Int64(7), datetime.datetime(2024, 1, 2)])
COMPARISONS = st.sampled_from(["$eq", "$gt", "$gte", "$lt", "$lte"])
TYPES = st.sampled_from(["number", "string", "array", "object", "null", "bool", "int",
                         "double", "long", "date", "objectId", 3, 16])


def _conditions(array_field):
    """A field's condition. On a field that reaches an array, not $ne, $nin, $mod or $not:
    FerretDB does not apply them to each element (ARRAY_ELEMENTS; found for $not by this
    property: {"c.e": {"$not": {"$eq": 1}}} matched a document whose c holds e: 1)."""
    common = [VALUES, st.builds(lambda op, v: {op: v}, COMPARISONS, VALUES),
              st.lists(VALUES, min_size=1, max_size=3).map(lambda v: {"$in": v}),
              st.booleans().map(lambda v: {"$exists": v}), TYPES.map(lambda t: {"$type": t}),
              st.integers(0, 2).map(lambda n: {"$size": n}),
              st.lists(st.sampled_from([1, 2, 3, "a"]), min_size=1, max_size=2,
                       unique=True).map(lambda v: {"$all": v}),
              st.builds(lambda p, o: {"$regex": p, "$options": o},
                        st.sampled_from(["^x", "X", "y$"]), st.sampled_from(["", "i"]))]
    if not array_field:
        common += [st.builds(lambda op, v: {"$not": {op: v}}, COMPARISONS, VALUES),
                   VALUES.map(lambda v: {"$ne": v}),
                   st.lists(VALUES, min_size=1, max_size=2).map(lambda v: {"$nin": v}),
                   st.sampled_from([0, 1]).map(lambda r: {"$mod": [2, r]})]
    return st.one_of(common)


FIELD_CONDITIONS = st.one_of(
    st.sampled_from(SCALAR_FIELDS).flatmap(lambda f: _conditions(False).map(lambda c: (f, c))),
    st.sampled_from(ARRAY_FIELDS).flatmap(lambda f: _conditions(True).map(lambda c: (f, c))))
FILTERS = st.recursive(
    st.lists(FIELD_CONDITIONS, min_size=1, max_size=2).map(dict),
    lambda inner: st.builds(lambda op, parts: {op: parts}, st.sampled_from(["$and", "$or", "$nor"]),
                            st.lists(inner, min_size=1, max_size=2)), max_leaves=4)


@pytest.fixture(scope="module")
def both(ferretdb):
    """The same documents in FerretDB and in a simulated standalone."""
    with Standalone() as simulator:
        clients = [pymongo.MongoClient(uri, serverSelectionTimeoutMS=10000)
                   for uri in (ferretdb.uri(), simulator.uri)]
        collections = [client.judged.c for client in clients]
        for coll in collections:
            coll.drop()
            coll.insert_many([dict(d) for d in DOCS])
        yield collections
        for client in clients:
            client.close()


def _ids(coll, query):
    try:
        return sorted(d["_id"] for d in coll.find(query))
    except pymongo.errors.OperationFailure as exc:
        return ("error", exc.code)


@settings(max_examples=300, deadline=None, suppress_health_check=[
    HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(query=FILTERS)
def test_the_simulator_and_ferretdb_find_the_same_documents(both, query):
    """Generated filters over documents of every shape (arrays, strings, null, embedded
    documents, paths through them): the simulator and FerretDB match the same documents, or
    refuse with the same code."""
    ferretdb, simulator = both
    assert _ids(simulator, query) == _ids(ferretdb, query)
