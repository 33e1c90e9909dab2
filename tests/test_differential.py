"""Differential property tests (issue 45): arguments drawn from PyMongo's accepted domain,
the empty and falsy forms included (``[]``, ``{}``, ``None``, ``0``, ``""``, ``False``), SON
and other mappings, tuples, generators and keyword spellings, given to the same public method
of PyMongo and of singlemongo on the same simulated replica set. The return value (or the
exception class and code), what was sent to the server and the collection afterwards must be
equal. A difference is fixed, or is one of the documented ones (``DIFFERENCES``).

``make test`` runs a fast profile (HYPOTHESIS_PROFILE=default); ``make fuzz`` many examples.
Each driver keeps one client for the module, so an example costs a few milliseconds."""
import collections
import os

import bson
import pymongo
import pytest
from bson import SON
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import singlemongo
from singlemongo.testing import ReplicaSet

from .side_by_side.harness import (_PyMongoListener, _Recorder, error_signature, files_query,
                                   normalise, _Ids)

settings.register_profile("differential", max_examples=25, deadline=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                 HealthCheck.too_slow])
settings.register_profile("differential-fuzz", max_examples=1000, deadline=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                 HealthCheck.too_slow])
PROFILE = "differential-fuzz" if os.environ.get("HYPOTHESIS_PROFILE") == "fuzz" \
    else "differential"
DOCS = [{"_id": i, "a": i % 3, "b": 10 - i, "s": f"s{i}", "t": ["x", "y"][: i % 3]}
        for i in range(1, 7)]
ERRORS = (pymongo.errors.PyMongoError, singlemongo.errors.PyMongoError, TypeError,
          ValueError, KeyError, AttributeError, IndexError, NotImplementedError, LookupError)


class _Side:
    """One driver's client, its command recorder and the deployment they share."""

    def __init__(self, driver, deployment):
        self.driver, self.deployment = driver, deployment
        self.recorder = _Recorder()
        if driver == "pymongo":
            listener = _PyMongoListener()
            listener.commands = self.recorder.commands
            self.client = pymongo.MongoClient(deployment.uri, event_listeners=[listener],
                                              serverMonitoringMode="poll")
            self.lib = pymongo
        else:
            self.client = singlemongo.MongoClient(deployment.uri,
                                                  event_listeners=[self.recorder])
            self.lib = singlemongo

    def run(self, call, seed):
        """(outcome, commands, documents after) of ``call(collection, lib)``."""
        self.deployment.store.reset()
        self.deployment.store.seed("dif", "c", [dict(d) for d in seed])
        del self.recorder.commands[:]
        ids = _Ids()
        try:
            raw, failed = call(self.client.dif.c, self.lib), False
        except ERRORS as exc:
            raw, failed = exc, True
        # Generated ids are numbered in the order they were sent (then returned, then kept).
        sent = [(name, bson.decode(bson.encode(body))) for name, body in self.recorder.commands]
        sent = normalise(sent, ids)
        outcome = error_signature(raw) if failed else normalise(raw, ids)
        after = sorted(normalise(self.deployment.store.documents("dif", "c"), ids), key=repr)
        return outcome, sent, after


@pytest.fixture(scope="module")
def sides():
    with ReplicaSet(3) as rs:
        pair = (_Side("pymongo", rs), _Side("singlemongo", rs))
        yield pair
        for side in pair:
            side.client.close()


# Documented differences (docs/coming-from-pymongo.md, "Differences from PyMongo"): (predicate over the example's
# arguments, the error singlemongo raises instead). Only these may differ.
def _string_projection(projection=None, **_):
    return projection is not None and isinstance(projection.value, str)


def _negative_skip(skip=None, **_):
    return isinstance(skip, int) and skip < 0


# find(skip=-1) is refused before anything is sent, as PyMongo's Cursor.skip(-1) refuses it
# (PyMongo's find() sends it and the server refuses: OperationFailure 51024).
DIFFERENCES = [(_string_projection, TypeError), (_negative_skip, ValueError)]


def _same(sides, call, seed=DOCS, ignore=(), **arguments):
    theirs, ours = (side.run(call, seed) for side in sides)
    if ignore:  # a documented difference on the wire: those command fields are not compared
        theirs, ours = ((o, [[n, {k: v for k, v in b.items() if k not in ignore}]
                             for n, b in c], a) for o, c, a in (theirs, ours))
    for documented, error in DIFFERENCES:
        if documented(**arguments) and ours[0] != theirs[0]:
            assert isinstance(ours[0], dict) and ours[0].get("<error>") in \
                error_signature(error()).classes, ours[0]
            return
    assert ours[0] == theirs[0], f"result or error: {ours[0]!r:.300} != PyMongo's {theirs[0]!r:.300}"
    assert ours[1] == theirs[1], f"commands sent: {ours[1]!r:.400} != PyMongo's {theirs[1]!r:.400}"
    assert ours[2] == theirs[2], "the collection afterwards differs"


# ----- the accepted domain ------------------------------------------------------------------

FIELDS = st.sampled_from(["a", "b", "s", "t", "_id", "missing"])
SCALARS = st.one_of(st.none(), st.integers(-3, 12), st.sampled_from(["s1", "x", ""]),
                    st.booleans())
DIRECTIONS = st.sampled_from([1, -1, pymongo.ASCENDING, pymongo.DESCENDING])
FALSY = st.sampled_from([None, [], {}, (), 0, "", False])


class _made:
    """A factory for one argument: each driver gets its own (a generator is used once)."""

    def __init__(self, value, kind):
        self.value, self.kind = value, kind

    def __call__(self):
        if self.kind == "generator":
            return (item for item in self.value)
        if self.kind == "son":
            return SON(self.value)
        if self.kind == "tuple":
            return tuple(self.value)
        return self.value

    def __repr__(self):
        return f"{self.kind}({self.value!r})"


def _pairs():
    return st.lists(st.tuples(FIELDS, DIRECTIONS), min_size=1, max_size=3,
                    unique_by=lambda p: p[0])


SORTS = st.one_of(
    FALSY.map(lambda v: _made(v, "plain")),
    _pairs().map(lambda v: _made(v, "plain")),
    _pairs().map(lambda v: _made(v, "tuple")),
    _pairs().map(lambda v: _made(dict(v), "plain")),
    _pairs().map(lambda v: _made(v, "son")),
    FIELDS.map(lambda v: _made(v, "plain")))
CONDITIONS = st.one_of(
    SCALARS,
    st.fixed_dictionaries({}, optional={"$gt": st.integers(-1, 8), "$lt": st.integers(0, 12),
                                        "$ne": SCALARS, "$exists": st.booleans()}),
    st.lists(SCALARS, max_size=3).map(lambda v: {"$in": v}))
FILTERS = st.one_of(
    FALSY.filter(lambda v: v is None or isinstance(v, dict)).map(lambda v: _made(v, "plain")),
    st.dictionaries(FIELDS, CONDITIONS, max_size=3).map(lambda v: _made(v, "plain")),
    st.dictionaries(FIELDS, CONDITIONS, min_size=1, max_size=2).map(
        lambda v: _made(list(v.items()), "son")),
    st.dictionaries(FIELDS, CONDITIONS, min_size=1, max_size=2).map(
        lambda v: _made(collections.OrderedDict(v), "plain")))
PROJECTIONS = st.one_of(
    FALSY.map(lambda v: _made(v, "plain")),
    st.lists(FIELDS, max_size=3, unique=True).map(lambda v: _made(v, "plain")),
    st.lists(FIELDS, min_size=1, max_size=3, unique=True).map(lambda v: _made(v, "tuple")),
    st.dictionaries(FIELDS, st.sampled_from([0, 1, True, False]), max_size=3).map(
        lambda v: _made(v, "plain")))
COUNTS = st.one_of(st.none(), st.integers(-3, 8), st.booleans(), st.just(2.0),
                   st.just("2"))


# ----- the methods --------------------------------------------------------------------------

@settings(settings.get_profile(PROFILE))
@given(filter_=FILTERS, projection=PROJECTIONS, sort=SORTS, skip=COUNTS, limit=COUNTS)
def test_find_takes_every_argument_as_pymongo(sides, filter_, projection, sort, skip, limit):
    """Collection.find with its filter, projection, sort, skip and limit in every form
    PyMongo accepts (and those it refuses, refused alike). Found: sort=[] and sort={} raised
    ValueError (PyMongo: no sort; an ODM passes sort=[] on every query)."""
    def call(c, lib):
        kwargs = {"sort": sort()}
        for name, value in (("skip", skip), ("limit", limit)):
            if value is not None:
                kwargs[name] = value
        return list(c.find(filter_(), projection(), **kwargs))
    _same(sides, call, projection=projection, skip=skip)


@settings(settings.get_profile(PROFILE))
@given(filter_=FILTERS, sort=SORTS, projection=PROJECTIONS)
def test_find_one_takes_every_argument_as_pymongo(sides, filter_, sort, projection):
    """Collection.find_one: the filter may also be an _id value."""
    _same(sides, lambda c, lib: c.find_one(filter_(), projection(), sort=sort()),
          projection=projection)


@settings(settings.get_profile(PROFILE))
@given(sort=SORTS, direction=st.one_of(st.none(), DIRECTIONS, st.just("x")))
def test_cursor_sort_takes_every_argument_as_pymongo(sides, sort, direction):
    """Cursor.sort(key_or_list, direction): a key and a direction, or pairs, or a mapping;
    an empty list is refused by both (only find's sort= reads falsy as "no sort")."""
    _same(sides, lambda c, lib: list(c.find().sort(sort(), direction)))


@settings(settings.get_profile(PROFILE))
@given(filter_=FILTERS, skip=COUNTS, limit=COUNTS)
def test_count_documents_takes_every_argument_as_pymongo(sides, filter_, skip, limit):
    """Collection.count_documents(filter, skip=, limit=)."""
    def call(c, lib):
        kwargs = {k: v for k, v in (("skip", skip), ("limit", limit)) if v is not None}
        return c.count_documents(filter_() if filter_() is not None else {}, **kwargs)
    _same(sides, call)


@settings(settings.get_profile(PROFILE))
@given(key=st.one_of(FIELDS, st.just(""), st.just(1)), filter_=FILTERS)
def test_distinct_takes_every_argument_as_pymongo(sides, key, filter_):
    """Collection.distinct(key, filter)."""
    _same(sides, lambda c, lib: sorted(map(repr, c.distinct(key, filter_()))))


UPDATES = st.one_of(
    st.dictionaries(st.sampled_from(["$set", "$inc", "$unset"]),
                    st.dictionaries(FIELDS.filter(lambda f: f != "_id"),
                                    st.integers(0, 3), min_size=1, max_size=2),
                    min_size=1, max_size=2).map(lambda v: _made(v, "plain")),
    st.lists(st.fixed_dictionaries({"$set": st.dictionaries(
        FIELDS.filter(lambda f: f != "_id"), st.integers(0, 3), min_size=1, max_size=2)}),
        max_size=2).map(lambda v: _made(v, "plain")),
    FALSY.map(lambda v: _made(v, "plain")),
    st.dictionaries(FIELDS.filter(lambda f: f != "_id"), st.integers(0, 3), max_size=2).map(
        lambda v: _made(v, "plain")))
UPSERTS = st.one_of(st.none(), st.booleans(), st.just(0), st.just(1))


@settings(settings.get_profile(PROFILE))
@given(method=st.sampled_from(["update_one", "update_many"]), filter_=FILTERS,
       update=UPDATES, upsert=UPSERTS, array_filters=st.one_of(
           st.none(), st.just([]), st.just({}), st.just([{"x.a": 1}]), st.just("x")),
       sort=st.one_of(st.none(), st.just({}), st.just({"b": -1})))
def test_updates_take_every_argument_as_pymongo(sides, method, filter_, update, upsert,
                                                array_filters, sort):
    """update_one/update_many: filter, update document or pipeline, upsert, array_filters
    (a list only), sort (update_one, a mapping). PyMongo's argument checks come first."""
    def call(c, lib):
        kwargs = {"array_filters": array_filters}
        if upsert is not None:
            kwargs["upsert"] = upsert
        if sort is not None and method == "update_one":
            kwargs["sort"] = sort
        result = getattr(c, method)(filter_() if filter_() is not None else {}, update(),
                                    **kwargs)
        return result
    _same(sides, call)


@settings(settings.get_profile(PROFILE))
@given(method=st.sampled_from(["delete_one", "delete_many"]), filter_=FILTERS,
       hint=st.one_of(st.none(), st.just("_id_"), st.just([("_id", 1)]), st.just({"_id": 1}),
                      st.just([]), st.just("")))
def test_deletes_take_every_argument_as_pymongo(sides, method, filter_, hint):
    """delete_one/delete_many: filter in every form, hint as a name, pairs or a mapping."""
    def call(c, lib):
        return getattr(c, method)(filter_() if filter_() is not None else {}, hint=hint)
    _same(sides, call)


DOCUMENTS = st.one_of(
    st.dictionaries(FIELDS.filter(lambda f: f != "_id"), SCALARS, max_size=3).map(
        lambda v: _made(v, "plain")),
    st.dictionaries(FIELDS.filter(lambda f: f != "_id"), SCALARS, min_size=1, max_size=2).map(
        lambda v: _made(list(v.items()), "son")),
    st.sampled_from([None, [], (), 0, "", False, [("a", 1)]]).map(lambda v: _made(v, "plain")),
    st.integers(1, 8).map(lambda i: _made({"_id": i}, "plain")))


@settings(settings.get_profile(PROFILE))
@given(documents=st.lists(DOCUMENTS, max_size=3), ordered=st.one_of(st.booleans(),
                                                                    st.just(0)),
       as_generator=st.booleans())
def test_insert_many_takes_every_argument_as_pymongo(sides, documents, ordered, as_generator):
    """insert_many: a list or a generator of documents (SON, dicts; not mappings of another
    kind), ordered; an empty list is refused; duplicate keys fail alike."""
    def call(c, lib):
        docs = [make() for make in documents]
        return c.insert_many((d for d in docs) if as_generator else docs, ordered=ordered)
    _same(sides, call)


@settings(settings.get_profile(PROFILE))
@given(document=DOCUMENTS)
def test_insert_one_takes_every_argument_as_pymongo(sides, document):
    """insert_one: a document (a mapping); anything else is a TypeError."""
    _same(sides, lambda c, lib: c.insert_one(document()))


@settings(settings.get_profile(PROFILE))
@given(method=st.sampled_from(["find_one_and_update", "find_one_and_replace",
                               "find_one_and_delete"]),
       filter_=FILTERS, projection=PROJECTIONS, sort=SORTS,
       return_document=st.one_of(st.booleans(), st.none()), upsert=st.booleans())
def test_find_and_modify_take_every_argument_as_pymongo(sides, method, filter_, projection,
                                                        sort, return_document, upsert):
    """find_one_and_*: projection and sort in every form (here an empty sort is refused by
    both), return_document."""
    def call(c, lib):
        filt = filter_() if filter_() is not None else {}
        if method == "find_one_and_delete":
            return c.find_one_and_delete(filt, projection(), sort=sort())
        second = {"$set": {"z": 1}} if method == "find_one_and_update" else {"z": 1}
        return getattr(c, method)(filt, second, projection(), sort=sort(), upsert=upsert,
                                  return_document=return_document)
    _same(sides, call, projection=projection)


@settings(settings.get_profile(PROFILE))
@given(pipeline=st.one_of(
    FALSY.map(lambda v: _made(v, "plain")),
    st.lists(st.sampled_from([{"$match": {"a": 1}}, {"$sort": {"b": 1}}, {"$limit": 2},
                              {"$project": {"a": 1}}, {"$count": "n"}]), max_size=3).map(
        lambda v: _made(v, "plain")),
    st.lists(st.just({"$match": {}}), min_size=1, max_size=2).map(lambda v: _made(v, "tuple"))),
    options=st.dictionaries(st.sampled_from(["batchSize", "allowDiskUse", "comment",
                                             "maxTimeMS", "explain", "cursor"]),
                            st.one_of(st.integers(0, 3), st.booleans(), st.just("c"),
                                      st.just({})), max_size=2))
def test_aggregate_takes_every_argument_as_pymongo(sides, pipeline, options):
    """aggregate(pipeline, **options): a list (or tuple) of stages; reserved options
    (explain, cursor) refused as PyMongo refuses them."""
    _same(sides, lambda c, lib: list(c.aggregate(pipeline(), **options)))


@settings(settings.get_profile(PROFILE))
@given(keys=st.one_of(SORTS, st.just(lambda: [("t", pymongo.TEXT)]),
                      st.just(lambda: [("a", "hashed")])),
       options=st.dictionaries(st.sampled_from(["unique", "name", "sparse", "background",
                                                "expireAfterSeconds"]),
                               st.one_of(st.booleans(), st.just("n"), st.integers(0, 5)),
                               max_size=2))
def test_create_index_takes_every_argument_as_pymongo(sides, keys, options):
    """create_index(keys, **options): a key, pairs or a mapping; an empty one is refused."""
    _same(sides, lambda c, lib: (c.create_index(keys(), **options),
                                 sorted(c.index_information())))


@settings(settings.get_profile(PROFILE))
@given(filter_=st.one_of(st.none(), st.just({}), st.just({"name": "c"}),
                         st.just({"type": "collection"}), st.just([("name", "c")]),
                         st.just(SON([("name", "c")])), st.just({"name": {"$regex": "^c"}})),
       name_only=st.one_of(st.none(), st.booleans()))
def test_list_collection_names_takes_every_argument_as_pymongo(sides, filter_, name_only):
    """Database.list_collection_names(filter=, **kwargs). Found: nameOnly was sent with a
    filter on more than the name (the Enumerating Collections spec forbids it)."""
    def call(c, lib):
        kwargs = {} if name_only is None else {"nameOnly": name_only}
        return sorted(c.database.list_collection_names(filter=filter_, **kwargs))
    _same(sides, call)


@settings(settings.get_profile(PROFILE))
@given(chain=st.lists(st.tuples(
    st.sampled_from(["skip", "limit", "batch_size", "max_time_ms", "comment", "hint",
                     "collation", "allow_disk_use", "max_await_time_ms", "where"]),
    st.one_of(st.none(), st.integers(-2, 5), st.booleans(), st.just("_id_"), st.just("x"),
              st.just([("_id", 1)]), st.just({"locale": "en"}), st.just({}), st.just([]))),
    max_size=3))
def test_cursor_methods_take_every_argument_as_pymongo(sides, chain):
    """Cursor's chaining methods (skip, limit, batch_size, max_time_ms, comment, hint,
    collation, allow_disk_use, max_await_time_ms, where) with values of every kind: the
    same documents, or the same error, and the same find command."""
    def call(c, lib):
        cursor = c.find()
        for method, value in chain:
            cursor = getattr(cursor, method)(value)
        return list(cursor)
    _same(sides, call)


OPERATIONS = st.sampled_from([
    ("InsertOne", ({"z": 1},)), ("InsertOne", ({"_id": 1},)), ("InsertOne", ([],)),
    ("UpdateOne", ({"_id": 1}, {"$set": {"z": 2}})), ("UpdateOne", ({}, {"z": 2})),
    ("UpdateMany", ({"a": 1}, {"$inc": {"b": 1}})), ("UpdateMany", ({}, [])),
    ("ReplaceOne", ({"_id": 2}, {"z": 3})), ("ReplaceOne", ({}, {"$set": {"z": 3}})),
    ("DeleteOne", ({"_id": 3},)), ("DeleteMany", ({"a": 0},)),
    # DeleteMany(None) is left out: a documented difference (README).
])


@settings(settings.get_profile(PROFILE))
@given(operations=st.lists(OPERATIONS, max_size=4), ordered=st.booleans(),
       as_tuple=st.booleans())
def test_bulk_write_takes_every_argument_as_pymongo(sides, operations, ordered, as_tuple):
    """Collection.bulk_write with operations of every kind, valid or not (a replacement with
    operators, an update without, an empty list, a tuple of requests): the same result or
    error, the same commands and the same contents."""
    def call(c, lib):
        requests = [getattr(lib, name)(*[bson.decode(bson.encode({"v": a}))["v"]
                                         if a is not None else a for a in args])
                    for name, args in operations]
        return c.bulk_write(tuple(requests) if as_tuple else requests, ordered=ordered)
    # README, "Bulk retryability per command": txnNumber is decided per command.
    _same(sides, call, ignore=("txnNumber",))


URI_OPTIONS = st.sampled_from([
    "connectTimeoutMS", "socketTimeoutMS", "serverSelectionTimeoutMS", "timeoutMS",
    "maxPoolSize", "w", "journal", "readPreference", "readPreferenceTags", "replicaSet",
    "tls", "ssl", "tlsInsecure", "tlsAllowInvalidHostnames", "retryWrites", "appname",
    "compressors", "zlibCompressionLevel", "uuidRepresentation", "loadBalanced",
    "directConnection", "authSource", "authMechanism", "heartbeatFrequencyMS",
    "localThresholdMS", "maxStalenessSeconds", "readConcernLevel", "wTimeoutMS"])
URI_VALUES = st.sampled_from(["0", "1", "5", "-1", "0.5", "true", "false", "majority",
                              "secondary", "standard", "zlib", "dc:ny", "", "x", "SCRAM-SHA-256"])


def _below(text, limit):
    try:
        return float(text) < limit
    except ValueError:
        return False


@settings(settings.get_profile(PROFILE))
@given(pairs=st.lists(st.tuples(URI_OPTIONS, URI_VALUES), max_size=3),
       hosts=st.sampled_from(["h", "h:27018", "a,b", "[::1]:5"]))
def test_uri_parser_reads_connection_strings_as_pymongo(pairs, hosts):
    """uri_parser.parse_uri over generated connection strings: the same hosts, credentials
    and options (by PyMongo's keys and values), or a refusal of PyMongo's error family (a
    ConfigurationError, a ValueError); warnings aside."""
    import warnings

    import pymongo.uri_parser as theirs

    from singlemongo import uri_parser as ours
    uri = f"mongodb://{hosts}/?" + "&".join(f"{k}={v}" for k, v in pairs)
    results = []
    for module in (theirs, ours):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                results.append(dict(module.parse_uri(uri)["options"]))
            except (ValueError, TypeError, pymongo.errors.PyMongoError):  # refused (the
                results.append("refused")  # classes are compared in test_pymongo_parity)
    if results[1] == "refused" and any(k == "heartbeatFrequencyMS" and _below(v, 500)
                                       for k, v in pairs):
        return  # documented: under the SDAM minimum, refused as a client refuses it
    assert results[1] == results[0], uri


KEYWORDS = st.sampled_from([
    "connectTimeoutMS", "socketTimeoutMS", "serverSelectionTimeoutMS", "maxPoolSize", "w",
    "journal", "readPreference", "replicaSet", "tls", "retryWrites", "appname",
    "compressors", "uuidRepresentation", "directConnection", "authSource", "tz_aware",
    "document_class", "read_preference", "wTimeoutMS", "localThresholdMS"])
_NUMERIC = frozenset({"connectTimeoutMS", "socketTimeoutMS", "serverSelectionTimeoutMS",
                      "maxPoolSize", "wTimeoutMS", "localThresholdMS", "w"})
KEYWORD_VALUES = st.sampled_from([None, 0, 1, 5, -1, 0.5, True, False, "", "x", "majority",
                                  "secondary", "standard", [], {}, dict])


def _family(exc):
    return TypeError if isinstance(exc, TypeError) else \
        ValueError if isinstance(exc, ValueError) else singlemongo.errors.ConfigurationError


def _pymongo_refusal(keywords):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            pymongo.MongoClient(connect=False, **keywords).close()
        except (TypeError, ValueError, pymongo.errors.PyMongoError) as exc:
            return exc
    return None


@settings(settings.get_profile(PROFILE))
@given(keywords=st.dictionaries(KEYWORDS, KEYWORD_VALUES, max_size=3))
def test_client_keywords_are_taken_as_pymongo_takes_them(keywords):
    """MongoClient(**keywords, connect=False) with option keywords of every kind: made, and
    then with PyMongo's repr, or refused with an error of PyMongo's family (TypeError,
    ValueError/ConfigurationError)."""
    import warnings

    results = []
    for make in (pymongo.MongoClient, singlemongo.MongoClient):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                client = make(connect=False, **keywords)
            except (TypeError, ValueError, pymongo.errors.PyMongoError) as exc:
                results.append(exc)
                continue
        results.append("made")
        client.close()
    theirs, ours = results
    if isinstance(ours, Exception) and (
            any(isinstance(v, bool) and k in _NUMERIC for k, v in keywords.items())
            or keywords.get("authSource") == ""):
        # Documented: a boolean for a number is refused (PyMongo takes True as 1); so is an
        # empty authSource (auth spec; PyMongo takes it when no credential is given).
        return
    if isinstance(theirs, Exception):  # refused: ours is caught as PyMongo's is, for one of
        # the keywords PyMongo refuses (which of several bad ones is named first may differ)
        families = {_family(theirs)} | {_family(e) for e in map(_pymongo_refusal, (
            {k: v} for k, v in keywords.items())) if e is not None}
        assert any(isinstance(ours, f) for f in families), (keywords, theirs, ours)
    else:
        assert ours == "made", (keywords, ours)


def _gridfs(lib):
    if lib is pymongo:
        import gridfs
        return gridfs
    from singlemongo import gridfs
    return gridfs


def _scrubbed(value):
    """Clock values (an upload date) as a placeholder: the two drivers run at other times."""
    import datetime
    if isinstance(value, dict):
        return {k: _scrubbed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_scrubbed(v) for v in value]
    if isinstance(value, tuple) and value[:1] == ("datetime",):
        return "<datetime>"
    return "<datetime>" if isinstance(value, datetime.datetime) else value


def _same_scrubbed(sides, call):
    theirs, ours = (side.run(call, DOCS) for side in sides)
    theirs, ours = ([_scrubbed(part) for part in result] for result in (theirs, ours))
    strip = lambda commands: [[n, {k: ("<datetime>" if isinstance(v, list) and v[:1] ==
                                       ["datetime"] else v) for k, v in files_query(n, b)
                                   .items()}] for n, b in commands]
    assert ours[0] == theirs[0], f"result or error: {ours[0]!r:.300} != {theirs[0]!r:.300}"
    assert strip(ours[1]) == strip(theirs[1]), "the commands sent differ"


@settings(settings.get_profile(PROFILE))
@given(data=st.one_of(st.binary(max_size=40), st.just(b""), st.just("text"), st.just(1)),
       chunk=st.one_of(st.none(), st.integers(1, 16), st.just(0)),
       metadata=st.one_of(st.none(), st.just({}), st.just({"k": 1}), st.just([])),
       name=st.one_of(st.just("f"), st.just(""), st.just(1)))
def test_gridfs_bucket_takes_every_argument_as_pymongo(sides, data, chunk, metadata, name):
    """GridFSBucket.upload_from_stream (bytes, text and non-bytes sources, chunk sizes,
    metadata, file names of every kind), then open_download_stream_by_name(...).read(),
    find(), delete(): the same results or errors and the same commands (upload dates
    aside)."""
    def call(c, lib):
        bucket = _gridfs(lib).GridFSBucket(c.database)
        kwargs = {k: v for k, v in (("chunk_size_bytes", chunk), ("metadata", metadata))
                  if v is not None}
        file_id = bucket.upload_from_stream(name, data, **kwargs)
        read = bucket.open_download_stream_by_name(name).read()
        found = sorted((f.filename, f.length, f.chunk_size) for f in bucket.find())
        bucket.delete(file_id)
        return read, found, list(bucket.find())
    _same_scrubbed(sides, call)


@settings(settings.get_profile(PROFILE))
@given(data=st.one_of(st.binary(max_size=40), st.just("text")),
       options=st.dictionaries(st.sampled_from(["filename", "chunkSize", "content_type",
                                                "encoding", "_id", "metadata"]),
                               st.one_of(st.just("x"), st.integers(1, 8), st.just("utf-8"),
                                         st.just({}), st.none()), max_size=3).filter(
           # chunkSize=None: both refuse it, PyMongo after one more command (not compared)
           lambda o: "chunkSize" not in o or o["chunkSize"] is not None))
def test_gridfs_put_and_get_take_every_argument_as_pymongo(sides, data, options):
    """GridFS.put(data, **kwargs) with text (encoding needed), ids, chunk sizes and other
    fields; get, exists, list, find_one, delete: the same results or errors and commands."""
    def call(c, lib):
        fs = _gridfs(lib).GridFS(c.database)
        file_id = fs.put(data, **options)
        out = fs.get(file_id)
        result = (out.read(), out.filename, out.chunk_size, fs.exists(file_id), fs.list())
        fs.delete(file_id)
        return result, fs.exists(file_id)
    if isinstance(data, str) and options.get("encoding") not in (None, "utf-8"):
        # Documented: text with an unknown encoding is a LookupError naming it (PyMongo
        # fails with "'str' object has no attribute 'read'").
        outcome = sides[1].run(call, DOCS)[0]
        assert isinstance(outcome, dict) and outcome.get("<error>") in (
            "LookupError", "TypeError"), outcome
        return
    _same_scrubbed(sides, call)


@settings(settings.get_profile(PROFILE))
@given(name=st.one_of(st.just("other"), st.just(""), st.just("a$b"), st.just(1),
                      st.just("system.x")),
       options=st.dictionaries(st.sampled_from(["capped", "size", "max", "validator"]),
                               st.one_of(st.booleans(), st.integers(0, 4096),
                                         st.just({"a": {"$type": "int"}})), max_size=2))
def test_database_methods_take_every_argument_as_pymongo(sides, name, options):
    """Database.create_collection(name, **options), list_collection_names, drop_collection
    and MongoClient.list_database_names/drop_database with names of every kind: the same
    results or errors, and the same commands."""
    def call(c, lib):
        db = c.database
        db.create_collection(name, **options)
        names = sorted(db.list_collection_names())
        db.drop_collection(name)
        return names, sorted(db.list_collection_names()), "dif" in \
            db.client.list_database_names()
    _same(sides, call)
