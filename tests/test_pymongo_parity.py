"""PyMongo's behaviour where its own test suite and libraries found singlemongo different
(issue 45). PyMongo itself is the oracle: the same call is made on both, in this process
(PyMongo imported as itself, singlemongo by its own names). Each test failed before its fix;
its docstring names the rule it guards."""
import datetime

import pytest
from bson import ObjectId

import pymongo.monitoring as pm_monitoring

from singlemongo import monitoring

from .util import eventually


def _event_arguments():
    address, tid = ("localhost", 27017), ObjectId("000000000000000000000001")
    return [
        ("ServerHeartbeatStartedEvent", (address,)),
        ("ServerHeartbeatSucceededEvent", (0.1, {"ok": 1}, address)),
        ("ServerHeartbeatFailedEvent", (0.1, "ERROR", address)),
        ("ServerOpeningEvent", (address, tid)),
        ("ServerClosedEvent", (address, tid)),
        ("ServerDescriptionChangedEvent", ("PREV", "NEW", address, tid)),
        ("TopologyOpenedEvent", (tid,)),
        ("TopologyClosedEvent", (tid,)),
        ("TopologyDescriptionChangedEvent", ("PREV", "NEW", tid)),
    ]


@pytest.mark.parametrize("name,args", _event_arguments(), ids=lambda v: v if isinstance(v, str) else "")
def test_sdam_events_take_pymongos_arguments_and_print_as_pymongos(name, args):
    """PyMongo's test_monitoring builds each SDAM event with PyMongo's positional arguments
    and compares its repr; before, ours took (topology_id, ...) first and printed as records,
    and ``pymongo.monitoring.TopologyEvent`` did not exist (every change-stream test of
    PyMongo's suite imports it)."""
    ours = getattr(monitoring, name)(*args)
    theirs = getattr(pm_monitoring, name)(*args)
    assert repr(ours) == repr(theirs)
    for attribute in ("topology_id", "server_address", "connection_id", "duration", "reply",
                      "previous_description", "new_description", "awaited"):
        if hasattr(theirs, attribute):
            assert getattr(ours, attribute) == getattr(theirs, attribute), attribute
    for base in ("TopologyEvent",):
        assert isinstance(ours, getattr(monitoring, base)) == isinstance(
            theirs, getattr(pm_monitoring, base))


def _errors_pair():
    import pymongo.errors as theirs
    from singlemongo import errors as ours
    return theirs, ours


ERROR_CONSTRUCTIONS = [
    ("OperationFailure", ("operation failure test", 10, {"errmsg": "error"})),
    ("OperationFailure", ("unicode \U0001f40d", 10, {"errmsg": "unicode \U0001f40d"})),
    ("OperationFailure", ("error",)),
    ("OperationFailure", ("error", 5, {}, 7)),
    ("NotPrimaryError", ("not primary test", {"errmsg": "error"})),
    ("NotPrimaryError", ("unicode \U0001f40d", {"errmsg": "unicode \U0001f40d"})),
    ("WriteError", ("m", 1, {"a": 1})),
    ("DuplicateKeyError", ("m", 11000, {"errorLabels": ["X"]})),
    ("WriteConcernError", ("m", 64, {"errInfo": {}})),
    ("CursorNotFound", ("m", 43, {})),
    ("ExecutionTimeout", ("m", 50, {"x": 1})),
    ("BulkWriteError", ({"n": 1},)),
]


@pytest.mark.parametrize("name,args", ERROR_CONSTRUCTIONS, ids=lambda v: str(v)[:30])
def test_an_error_a_program_makes_reads_and_pickles_as_pymongos(name, args):
    """Issue 45, PyMongo's test_errors: an error a program constructs itself (a test double,
    a library re-raising) has PyMongo's str() ("msg, full error: {details}"), args, code,
    details and labels, and survives pickling unchanged. Before, str() was the bare message
    and the fourth argument was taken as the server's address."""
    import pickle
    theirs, ours = _errors_pair()
    mine, reference = getattr(ours, name)(*args), getattr(theirs, name)(*args)
    assert str(mine) == str(reference) and mine.args == reference.args
    for attribute in ("code", "details", "error_labels", "max_wire_version"):
        if hasattr(reference, attribute):
            assert getattr(mine, attribute) == getattr(reference, attribute), attribute
    again = pickle.loads(pickle.dumps(mine))
    assert type(again) is type(mine) and str(again) == str(mine) and again.args == mine.args
    assert getattr(again, "details", None) == getattr(mine, "details", None)
    assert getattr(again, "code", None) == getattr(mine, "code", None)


def test_an_error_the_driver_raises_keeps_its_own_message(mongo_replica_set):
    """The deliberate difference (README): an error from a server's reply says what was
    tried and where ("command failed on host:port: ... (code N, Name)"), not PyMongo's
    "full error" dump."""
    from singlemongo import MongoClient
    from singlemongo.errors import OperationFailure
    client = MongoClient(mongo_replica_set.uri)
    with pytest.raises(OperationFailure) as info:
        client.admin.command("noSuchCommand")
    assert str(info.value).startswith("command failed on ") and "full error" not in str(info.value)
    assert info.value.code == 59 and info.value.address is not None
    client.close()


CLIENT_ARGUMENTS = [
    ((), {}),
    (("mongodb://u:p@h:1/?replicaSet=rs&w=1&authSource=admin",),
     {"serverSelectionTimeoutMS": 100, "tz_aware": True}),
    ((["a:1", "b"],), {"socketTimeoutMS": None, "appname": "x",
                       "authMechanismProperties": "AWS_SESSION_TOKEN:secret",
                       "authMechanism": "MONGODB-AWS", "username": "a", "password": "b",
                       "maxPoolSize": 5, "tlsInsecure": True,
                       "tlsCertificateKeyFilePassword": "zz", "w": 0, "journal": False,
                       "readPreference": "secondary", "connectTimeoutMS": 2000}),
    (("h", 27018), {"document_class": __import__("bson").son.SON,
                    "uuidRepresentation": "standard", "maxStalenessSeconds": 120,
                    "readPreference": "secondaryPreferred"}),
    (("mongodb://h/?heartbeatFrequencyMS=1000&compressors=zlib&retryWrites=false",), {}),
]


def _repr_parts(text):
    """A client repr as (prefix, set of hosts, options in order, implied TLS options as a
    set): PyMongo keeps its seeds, and what tlsInsecure implies, in sets."""
    import re
    hosts = re.search(r"host=\[([^]]*)\]", text)
    rest = text.replace(hosts.group(0), "")
    client_end = rest.index(")", rest.rindex("="))  # the client's own closing parenthesis
    options = re.split(r", (?=[a-z_]+=)", rest[:client_end]) + [rest[client_end:]]
    implied = {o for o in options if o.startswith(("tlsallowinvalid", "tlsdisableocsp"))}
    return (set(hosts.group(1).split(", ")), [o for o in options if o not in implied],
            implied)


@pytest.mark.parametrize("args,kwargs", CLIENT_ARGUMENTS)
def test_client_repr_is_pymongos_with_secrets_redacted(args, kwargs):
    """Issue 45: ``repr(MongoClient(...))`` was ``MongoClient(ClientOptions(seeds=...))``;
    PyMongo prints ``MongoClient(host=[...], document_class=dict, tz_aware=..., connect=...,
    <options given>)`` and a caching library's tests assert on that text. Database and
    Collection reprs embed it. Credentials and sensitive options never appear."""
    import warnings

    import pymongo

    from singlemongo import MongoClient
    kwargs = dict(kwargs, connect=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours, theirs = MongoClient(*args, **kwargs), pymongo.MongoClient(*args, **kwargs)
    assert _repr_parts(repr(ours)) == _repr_parts(repr(theirs))
    assert _repr_parts(repr(ours.db.coll)) == _repr_parts(repr(theirs.db.coll))
    if len(ours.topology_description.servers) == 1 and "tlsInsecure" not in kwargs:
        assert repr(ours) == repr(theirs)  # PyMongo orders these by a set otherwise
    for secret in ("secret", "'p'", "'b'", "zz"):
        assert secret not in repr(ours)
    ours.close()
    theirs.close()


def test_nodes_do_no_io_with_connect_false_until_the_first_operation(mongo_replica_set):
    """Issue 45: PyMongo starts no monitor with ``connect=False``, so ``nodes``, ``primary``
    and ``secondaries`` stay empty until the first operation (Flask-PyMongo's "doesn't
    connect by default" test); singlemongo scanned the deployment. After an operation they
    are known, as PyMongo's monitors would have found them."""
    import pymongo

    from singlemongo import MongoClient
    before = mongo_replica_set.total_connections()
    ours = MongoClient(mongo_replica_set.uri, connect=False)
    theirs = pymongo.MongoClient(mongo_replica_set.uri, connect=False)
    for client in (ours, theirs):
        assert client.nodes == frozenset() and client.primary is None
        assert client.secondaries == set() and client.arbiters == set()
    assert mongo_replica_set.total_connections() == before
    theirs.close()
    ours.admin.command("ping")
    assert len(ours.nodes) == 3 and ours.primary is not None
    ours.close()


def _command_event_arguments():
    delta, address = datetime.timedelta(milliseconds=100), ("localhost", 27017)
    return [
        ("CommandStartedEvent", ({"ping": 1}, "admin", 1, address, 2), {}),
        ("CommandStartedEvent", ({"saslStart": 1, "payload": b"x"}, "admin", 1, address, 2),
         {}),
        ("CommandSucceededEvent", (delta, {"ok": 1}, "ping", 1, address, 2),
         {"database_name": "admin"}),
        ("CommandSucceededEvent", (delta, {"ok": 1, "speculativeAuthenticate": {}}, "hello",
                                   1, address, 2), {"database_name": "admin"}),
        ("CommandFailedEvent", (delta, {"ok": 0}, "ping", 1, address, 2),
         {"database_name": "admin", "service_id": ObjectId("000000000000000000000002")}),
    ]


@pytest.mark.parametrize("name,args,kwargs", _command_event_arguments(),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_command_events_take_pymongos_arguments_and_print_as_pymongos(name, args, kwargs):
    """Issue 45, PyMongo's TestEventClasses: command events built with PyMongo's positional
    arguments (a timedelta duration) print as PyMongo's and redact sensitive commands and
    replies the same way; before, ours took keywords only."""
    ours = getattr(monitoring, name)(*args, **kwargs)
    theirs = getattr(pm_monitoring, name)(*args, **kwargs)
    assert repr(ours) == repr(theirs)
    for attribute in ("command_name", "database_name", "request_id", "connection_id",
                      "operation_id", "service_id", "duration_micros", "command", "reply",
                      "failure", "server_connection_id"):
        if hasattr(theirs, attribute):
            assert getattr(ours, attribute) == getattr(theirs, attribute), attribute


@pytest.mark.parametrize("name,argument", [
    ("InsertOneResult", 0), ("InsertManyResult", [1, 2, 3]),
    ("UpdateResult", {"n": 1, "nModified": 1, "upserted": None}), ("DeleteResult", {"n": 5}),
    ("BulkWriteResult", {"nInserted": 1, "nUpserted": 0, "nMatched": 0, "nModified": 0,
                         "nRemoved": 0, "upserted": [], "writeErrors": [],
                         "writeConcernErrors": []})])
def test_results_print_as_pymongos(name, argument):
    """Issue 45, PyMongo's test_results: ``InsertOneResult(0, acknowledged=True)``; before,
    ``InsertOneResult(inserted_id=0, acknowledged=True)``."""
    import pymongo.results as theirs

    from singlemongo import results as ours
    for acknowledged in (True, False):
        assert repr(getattr(ours, name)(argument, acknowledged)) == \
            repr(getattr(theirs, name)(argument, acknowledged))


URIS = [
    "mongodb://h/?connectTimeoutMS=0", "mongodb://h/?connectTimeoutMS=0.1",
    "mongodb://h/?timeoutMS=0", "mongodb://h/?timeoutMS=1.5", "mongodb://h/?socketTimeoutMS=5",
    "mongodb://h/?serverSelectionTimeoutMS=0", "mongodb://h/?uuidRepresentation=standard",
    "mongodb://h/?maxStalenessSeconds=120",
    "mongodb://h/?readPreferenceTags=dc:ny&readPreferenceTags=",
    "mongodb://h/?authMechanismProperties=SERVICE_NAME:x,CANONICALIZE_HOST_NAME:true",
    "mongodb://h/?tlsInsecure=true", "mongodb://h/?ssl=true&tls=true",
    "mongodb://h/?ssl=true&tls=false", "mongodb://h/?tlsInsecure=true&tlsAllowInvalidHostnames=false",
    "mongodb://h/?tlsAllowInvalidCertificates=true&tlsDisableOCSPEndpointCheck=true",
    "mongodb://a,b/?loadBalanced=true", "mongodb://h/?loadBalanced=true&replicaSet=rs",
    "mongodb://h/?srvMaxHosts=2", "mongodb://h/?srvServiceName=x",
    "mongodb://a,b/?directConnection=true", "mongodb://h/?ssl=true&tls=true;appname=foo",
    "mongodb://localhost/test.name/with \"delimiters", "mongodb://user%40domain.com@localhost/foo",
    "mongodb://localhost/rejected_database_name$bad", "mongodb://example.com%2Cexample.org%3A27017/",
    "mongodb://[fe80::1%25eth0]:27017", "mongodb://localhost:65536", "mongodb://h/?authSource=",
    "mongodb://h/?authMechanism=foo", "mongodb://h/?readPreference=nope",
    "mongodb://h/?socketTimeoutMS=-1", "mongodb://h/?connectTimeoutMS=inf",
]


def _parsed(module, uri):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = module.parse_uri(uri)
        except Exception as exc:  # noqa: BLE001 (either driver's errors, by family)
            return {c.__name__ for c in type(exc).__mro__} & {
                "InvalidURI", "ConfigurationError", "ValueError", "TypeError",
                "FileNotFoundError"}
    return {k: (dict(v) if k == "options" else v) for k, v in result.items()}


@pytest.mark.parametrize("uri", URIS)
def test_uri_parser_parse_uri_reports_what_pymongo_does(uri):
    """Issue 45, PyMongo's test_uri_parser and test_uri_spec: parse_uri refuses the URI
    options spec's conflicts (tls/ssl, tlsInsecure beside what it implies, loadBalanced with
    several hosts or a replicaSet, SRV options in mongodb://), mixed '&' and ';', an empty
    authSource, an unknown authMechanism and a percent-encoded host name; it reports
    timeouts as PyMongo does (fractions of a millisecond, timeoutMS=0 kept, seconds),
    tlsInsecure with what it implies, PyMongo's key spellings and an empty password for a
    user without one. A refusal is of PyMongo's error family at least."""
    import pymongo.uri_parser as theirs

    from singlemongo import uri_parser as ours
    mine, reference = _parsed(ours, uri), _parsed(theirs, uri)
    if isinstance(reference, set):
        assert isinstance(mine, set) and reference <= mine | {"ValueError"}, (mine, reference)
    else:
        assert mine == reference


def test_uri_parser_errors_use_pymongos_words_and_do_not_echo_secrets():
    """Programs match PyMongo's messages ("Port must be an integer between 0 and 65535",
    "Not a valid read preference", "Malformed auth mechanism properties"); a database name
    or an unknown option key read out of a URI is not echoed (it may be a mistyped
    password)."""
    from singlemongo import uri_parser
    from singlemongo.errors import ConfigurationError
    for uri, words in (("mongodb://localhost:65536", "Port must be an integer between 0"),
                       ("mongodb://localhost: 27017", "Port contains whitespace character"),
                       ("mongodb://h/?readPreference=x", "Not a valid read preference"),
                       ("mongodb://h/?authMechanismProperties=AWS_SESSION_TOKEN",
                        "Malformed auth mechanism properties")):
        with pytest.raises(ValueError, match=words):
            uri_parser.parse_uri(uri)
    for uri, secret in (("mongodb://localhost/rejected_db_name$bad", "rejected_db_name"),
                        ("mongodb://localhost/?rejected_option_key=1", "rejected_option_key")):
        with pytest.raises(ConfigurationError) as info:
            uri_parser.parse_uri(uri)
        assert secret not in str(info.value)


def test_split_options_warns_and_refuses_as_pymongo():
    """PyMongo's split_options: a repeated option warns ("Duplicate URI option"), a bad value
    with warn=True warns instead of raising, an unknown key from DNS (from_uri=False) is
    named."""
    import warnings

    from singlemongo.errors import ConfigurationError
    from singlemongo.uri_parser import split_options
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert split_options("appname=foo&appname=bar") == {"appname": "bar"}
    assert len(caught) == 1 and "Duplicate URI option" in str(caught[0].message)
    for bad in ("socketTimeoutMS=0.0", "authMechanism=foo", "connectTimeoutMS=inf"):
        with pytest.warns(Warning):
            split_options(bad, warn=True)
        with pytest.raises(ValueError):
            split_options(bad)
    with pytest.raises(ConfigurationError, match="rejected_option_key"):
        split_options("rejected_option_key=1", warn=False, from_uri=False)


def test_to_list_on_a_change_stream_cursor_returns_what_there_is(mongo_replica_set):
    """Issue 45, PyMongo's test_command_cursor_to_list: ``aggregate([{"$changeStream": {}}])``
    gives a command cursor that stays alive; ``to_list()`` returns at its first empty batch
    (PyMongo's rule), where it waited for ever (every getMore empty, the cursor alive)."""
    from singlemongo import MongoClient
    client = MongoClient(mongo_replica_set.uri)
    cursor = client.db.coll.aggregate([{"$changeStream": {}}], maxAwaitTimeMS=1)
    assert cursor.to_list() == [] and cursor.alive
    client.db.coll.insert_one({"_id": 1})
    changes = cursor.to_list()
    assert [c["documentKey"] for c in changes] == [{"_id": 1}]
    cursor.close()
    client.close()


@pytest.mark.parametrize("host", ["host.cosmos.azure.com", "host.docdb.amazonaws.com",
                                  "a.docdb-elastic.amazonaws.com,b", "normal.host.com"])
def test_a_cosmos_or_documentdb_host_is_said_once_as_pymongo_says_it(host):
    """Issue 45, PyMongo's test_detected_environment_warning: a client for CosmosDB or
    DocumentDB hosts warns (a UserWarning) when nothing logs INFO, once per client; a normal
    host says nothing. Before, nothing was said."""
    import warnings

    import pymongo

    from singlemongo import MongoClient
    said = []
    for make in (pymongo.MongoClient, MongoClient):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            make(host, connect=False).close()
        said.append([str(w.message) for w in caught if issubclass(w.category, UserWarning)])
    assert said[1] == said[0]


def test_a_slice_sets_both_bounds_of_a_cursor_as_pymongo(mongo_replica_set):
    """PyMongo's test_getitem_slice_index (the counts below are the ones it asserts):
    ``find()[40:45][20:]`` is skip 20 with no limit (a slice replaces the earlier one's
    bounds); the second slice kept the first one's limit of 5."""
    from singlemongo import MongoClient
    mongo_replica_set.store.seed("sl", "c", [{"_id": i} for i in range(100)])
    client = MongoClient(mongo_replica_set.uri)
    coll = client.sl.c
    counts = [len(list(cursor)) for cursor in (
        coll.find()[40:45][20:], coll.find()[40:45].limit(0).skip(20),
        coll.find().limit(10).skip(40)[20:], coll.find()[10:10].limit(0).skip(20),
        coll.find()[20:25], coll.find()[99:1000], coll.find()[:0])]
    client.close()
    assert counts == [80, 80, 80, 80, 5, 1, 0]


def _commands_of(client_class, uri, call, **kwargs):
    """The commands ``call(client)`` sends (name, body), through either driver's listener."""
    from tests.side_by_side.harness import _PyMongoListener, _Recorder
    recorder = _Recorder()
    if client_class.__module__.startswith("pymongo"):
        listener = _PyMongoListener()
        listener.commands = recorder.commands
    else:
        listener = recorder
    client = client_class(uri, event_listeners=[listener], **kwargs)
    try:
        call(client)
    finally:
        client.close()
    return recorder.commands


def test_max_commit_time_ms_zero_is_not_sent_as_pymongo(mongo_replica_set):
    """Found by the differential session test: ``start_transaction(max_commit_time_ms=0)``
    sent ``maxTimeMS: 0`` with commitTransaction; PyMongo sends no maxTimeMS for 0 (the
    server's "no limit"). A positive value is sent by both."""
    import pymongo

    from singlemongo import MongoClient

    def call(client):
        for ms in (0, 7):
            with client.start_session() as session:
                session.start_transaction(max_commit_time_ms=ms)
                client.tx.c.insert_one({}, session=session)
                session.commit_transaction()
    sent = [[body.get("maxTimeMS") for name, body in
             _commands_of(cls, mongo_replica_set.uri, call) if name == "commitTransaction"]
            for cls in (MongoClient, pymongo.MongoClient)]
    assert sent[0] == sent[1] == [None, 7]


def test_a_snapshot_session_refuses_a_transaction_before_its_options(mongo_replica_set):
    """Found by the differential session test: ``with_transaction(cb, max_commit_time_ms="1")``
    on a snapshot session raised TypeError (the options were checked first); PyMongo says
    InvalidOperation, "Transactions are not supported in snapshot sessions", first."""
    import pymongo

    from singlemongo import MongoClient
    outcomes = []
    for cls in (MongoClient, pymongo.MongoClient):
        client = cls(mongo_replica_set.uri)
        with client.start_session(snapshot=True) as session:
            for start in (lambda: session.with_transaction(lambda s: 1, max_commit_time_ms="1"),
                          lambda: session.start_transaction(max_commit_time_ms="1")):
                with pytest.raises(Exception) as caught:
                    start()
                outcomes.append((type(caught.value).__name__, str(caught.value)))
        client.close()
    assert outcomes[:2] == outcomes[2:]
    assert outcomes[0] == ("InvalidOperation",
                           "Transactions are not supported in snapshot sessions")


def test_a_repeated_tls_option_uses_its_last_value_as_pymongo():
    """Found by the differential parse_uri property: ``tls=0&tls=true`` was refused as an
    ssl/tls conflict; PyMongo, as the URI options spec says of a repeated key, warns and uses
    the last value. tls and ssl with different final values still conflict."""
    import warnings

    import pymongo.uri_parser as pm_uri

    from singlemongo import uri_parser
    from singlemongo.errors import InvalidURI
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        uri = "mongodb://h/?tls=0&tls=true"
        assert uri_parser.parse_uri(uri)["options"] == dict(pm_uri.parse_uri(uri)["options"])
        with pytest.raises(InvalidURI):
            uri_parser.parse_uri("mongodb://h/?ssl=false&tls=true")


def test_a_hedged_read_preference_is_deprecated_as_in_pymongo():
    """PyMongo 4.12+ deprecates ``hedge`` (hedged reads are deprecated in MongoDB 8.0):
    the same DeprecationWarning, with PyMongo's message, from each mode that takes one."""
    import warnings

    import pymongo.read_preferences as theirs

    import singlemongo.read_preferences as ours
    for name in ("PrimaryPreferred", "Secondary", "SecondaryPreferred", "Nearest"):
        messages = []
        for module in (theirs, ours):
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                getattr(module, name)(hedge={"enabled": True})
            assert [w.category for w in seen] == [DeprecationWarning]
            messages.append(str(seen[0].message))
        assert messages[0] == messages[1]


@pytest.mark.parametrize("let", [10, "str", [], False])
def test_find_refuses_a_let_that_is_not_a_document_as_pymongo(let):
    """PyMongo's Cursor checks ``let`` when it is made (TypeError); singlemongo's find let it
    through to the server (PyMongo's test_helpers_with_let)."""
    import pymongo

    import singlemongo
    messages = []
    for module in (pymongo, singlemongo):
        coll = module.MongoClient("mongodb://localhost:1", connect=False).db.coll
        with pytest.raises(TypeError) as info:
            coll.find({}, let=let)
        messages.append(str(info.value))
    assert messages[1].startswith(messages[0])  # and names the type given


@pytest.mark.parametrize("method", ["max", "min"])
@pytest.mark.parametrize("spec", [10, {"j": 10}])
def test_cursor_min_and_max_take_a_list_of_pairs_as_pymongo(method, spec):
    """PyMongo's Cursor.max/min take a list or tuple of (key, value) pairs: anything else,
    a dict included, is a TypeError (PyMongo's test_max and test_min)."""
    import pymongo

    import singlemongo
    for module in (pymongo, singlemongo):
        cursor = module.MongoClient("mongodb://localhost:1", connect=False).db.coll.find()
        with pytest.raises(TypeError):
            getattr(cursor, method)(spec)


def test_a_cursor_id_is_an_int64_as_in_pymongo(mongo_replica_set):
    """``cursor_id`` is what a program passes back in killCursors or getMore: PyMongo's is a
    bson Int64, and a real server (FerretDB) refuses a plain int there (TypeMismatch, 14)."""
    from bson import Int64
    from singlemongo import MongoClient
    with MongoClient(mongo_replica_set.uri) as client:
        client.db.c.insert_many([{"_id": i} for i in range(3)])
        cursor = client.db.c.find().batch_size(1)
        next(cursor)
        command_cursor = client.db.c.aggregate([], batchSize=1)
        next(command_cursor)
        assert type(cursor.cursor_id) is Int64 and type(command_cursor.cursor_id) is Int64
        client.db.command({"killCursors": "c", "cursors": [cursor.cursor_id]})


# Each password in each form a user writes it in (raw only where a connection string can
# hold it as it is: no '@', ':', '/' or '%').
_PASSWORDS = ["p a+s/s%w@rd:x", "a+b", "sp ace", "plain", "ü+ß"]
_FORMS = [(p, f) for p in _PASSWORDS for f in ("quote_plus", "quote", "raw")
          if f != "raw" or not any(c in p for c in "@:/%")]


@pytest.mark.parametrize("password, form", _FORMS)
def test_user_info_is_decoded_as_pymongo_decodes_it(password, form):
    """PyMongo's documentation tells users to quote the password with quote_plus; a space
    became '+' and stayed '+' here (PyMongo reads a space): the password was wrong. User info
    is decoded as PyMongo decodes it in each form (the spec suite's "Subdelimiters" case is
    the documented difference: its '+' reads as a space)."""
    import urllib.parse
    import pymongo.uri_parser as theirs
    from singlemongo import uri_parser as ours
    if form == "raw":
        encoded = password
    else:
        encoded = getattr(urllib.parse, form)(password, safe="")
    uri = f"mongodb://user:{encoded}@h/"
    assert ours.parse_uri(uri)["password"] == theirs.parse_uri(uri)["password"]


@pytest.mark.parametrize("concern", [{}, {"w": 1}, {"w": 0}, {"w": "majority", "j": True}])
def test_command_takes_write_concern_as_pymongo_does(mongo_replica_set, concern):
    """Issue 56: PyMongo's Database.command takes ``write_concern=`` (programs pass it) and
    sends it as writeConcern, unless it is the server's default; singlemongo put the object
    itself in the command and failed to encode it."""
    import pymongo
    import pymongo.write_concern

    import singlemongo
    import singlemongo.write_concern

    def call_with(module):
        def call(client):
            client.db.command("insert", "c", documents=[{}],
                              write_concern=module.WriteConcern(**concern))
        return call

    sent = [_commands_of(driver.MongoClient, mongo_replica_set.uri, call_with(module))
            for driver, module in ((pymongo, pymongo.write_concern),
                                   (singlemongo, singlemongo.write_concern))]
    assert [c for c in sent[1] if c[0] == "insert"] == [c for c in sent[0] if c[0] == "insert"]


@pytest.mark.parametrize("keywords", [{}, {"maxPoolSize": None, "minPoolSize": 5},
                                      {"maxPoolSize": 0, "minPoolSize": 5}, {"maxPoolSize": 7}])
def test_max_pool_size_reads_back_as_pymongo(keywords):
    """Issue 56: maxPoolSize None or 0 is "no maximum" and reads back as given, beside any
    minPoolSize (PyMongo 4.20, PYTHON-6149); singlemongo read None back as 100."""
    import pymongo

    import singlemongo
    read = [driver.MongoClient(connect=False, **keywords).options.pool_options
            for driver in (pymongo, singlemongo)]
    assert [(o.max_pool_size, o.min_pool_size) for o in read[1:]] == \
        [(read[0].max_pool_size, read[0].min_pool_size)]


def _parse_with_srv_answer(module, host, target, **kwargs):
    """``module.uri_parser.parse_uri`` of mongodb+srv://host with dnspython's resolve answering
    one SRV record for ``target`` (and an empty TXT record), as PyMongo's own tests mock it."""
    from unittest import mock

    class Record:
        port = 27017
        strings = [b""]

        class target:  # noqa: N801 dnspython's Name, as much of it as the drivers read
            @staticmethod
            def to_text(omit_final_dot=False):
                return target if omit_final_dot else target + "."

    with mock.patch("dns.resolver.resolve", side_effect=lambda *a, **k: [Record()]):
        try:
            return module.uri_parser.parse_uri(f"mongodb+srv://{host}", **kwargs)["nodelist"]
        except Exception as exc:  # noqa: BLE001 the class and words are compared
            return type(exc).__name__, str(exc).split(";")[0].split(" (")[0]


@pytest.mark.parametrize("host, target, kwargs", [
    ("blogs.mongodb.com", "db.blogs.mongodb.com", {}),
    ("blogs.mongodb.com", "blogs.evil.com", {"srv_host_validator": lambda host: True}),
    ("blogs.mongodb.com", "db.blogs.mongodb.com", {"srv_host_validator": lambda host: False}),
    ("127.0.0.1", "x", {}),
])
def test_parse_uri_resolves_srv_as_pymongo(host, target, kwargs):
    """Issue 56: parse_uri took srv_host_validator and ignored it, read an SRV target as
    str(Name) (mocked answers became '<MagicMock ...>'), refused an empty TXT record, and
    looked up mongodb+srv://127.0.0.1 in DNS; PyMongo (the oracle) does none of these."""
    import pymongo
    import pymongo.uri_parser  # noqa: F401

    import singlemongo
    import singlemongo.uri_parser  # noqa: F401
    theirs = _parse_with_srv_answer(pymongo, host, target, **kwargs)
    ours = _parse_with_srv_answer(singlemongo, host, target, **kwargs)
    if isinstance(theirs, tuple):  # an error: PyMongo's words begin ours
        assert ours[1].startswith(theirs[1].split(" (")[0]) or theirs[1].startswith(ours[1])
    else:
        assert [tuple(node) for node in ours] == [tuple(node) for node in theirs]


def test_log_messages_under_pymongo_names_are_pymongos_json(mongo_replica_set, caplog):
    """Issue 56: under install_as_pymongo() a log record's message is PyMongo's: one JSON
    document ("message" first, then "clientId", then the spec's fields), which PyMongo's
    own tests and programs parse with json_util.loads; it was the spec's unstructured
    text."""
    import logging

    import pymongo
    from bson import json_util

    import singlemongo
    from singlemongo.monitoring import use_pymongo_logger_names

    caplog.set_level(logging.DEBUG, logger="pymongo.command")

    def command_messages(driver):
        caplog.clear()
        client = driver.MongoClient(mongo_replica_set.uri)
        client.db.c.insert_one({"a": 1})
        client.close()
        return [json_util.loads(r.getMessage()) for r in caplog.records
                if r.name == "pymongo.command" and "insert" in r.getMessage()]

    theirs = command_messages(pymongo)
    use_pymongo_logger_names(True)
    try:
        ours = command_messages(singlemongo)
    finally:
        use_pymongo_logger_names(False)
    assert [(m["message"], sorted(m)) for m in ours] == \
        [(m["message"], sorted(m)) for m in theirs]
    assert list(ours[0])[:2] == ["message", "clientId"]


@pytest.mark.parametrize("write", [False, True], ids=["read", "write"])
def test_a_retry_is_logged_as_pymongo_logs_it(mongo_replica_set, write, caplog):
    """Issue 56: PyMongo logs "Retrying read attempt number 1" (or write) at DEBUG on its
    command logger when it retries; singlemongo logged nothing of a retry."""
    import logging

    import pymongo

    import singlemongo

    def retry_messages(driver, logger_name):
        caplog.set_level(logging.DEBUG, logger=logger_name)
        caplog.clear()
        client = driver.MongoClient(mongo_replica_set.uri)
        try:
            client.admin.command({"configureFailPoint": "failCommand", "mode": {"times": 1},
                                  "data": {"failCommands": ["insert" if write else "find"],
                                           "errorCode": 6}})
            client.db.c.insert_one({}) if write else client.db.c.find_one()
        finally:
            client.close()
        return [str(r.msg) for r in caplog.records
                if r.name == logger_name and "Retrying" in str(r.msg)]

    theirs = retry_messages(pymongo, "pymongo.command")
    ours = retry_messages(singlemongo, "singlemongo.command")
    assert len(ours) == len(theirs) == 1
    assert ours[0].startswith(f"Retrying {'write' if write else 'read'} attempt number 1")


def test_batch_size_true_is_sent_as_pymongo_sends_it(mongo_replica_set):
    """Found by the FerretDB tier's differential property: ``find().batch_size(True)`` sent
    batchSize 1 with the find and true with the getMore; PyMongo sends true (the value as
    given; only a batch size equal to the limit is raised by one)."""
    import pymongo

    from singlemongo import MongoClient

    def call(client):
        client.db.c.delete_many({})
        client.db.c.insert_many([{} for _ in range(3)])
        list(client.db.c.find().batch_size(True))
        list(client.db.c.find().limit(2).batch_size(2))

    sent = [[body.get("batchSize") for name, body in
             _commands_of(cls, mongo_replica_set.uri, call) if name in ("find", "getMore")]
            for cls in (MongoClient, pymongo.MongoClient)]
    assert sent[0] == sent[1]
    assert sent[0][0] is True


def test_a_checks_hello_holds_naive_utc_datetimes_as_pymongos(mongo_replica_set):
    """A check's hello is decoded as PyMongo decodes it (issue 59): localTime and
    lastWrite.lastWriteDate are naive UTC datetimes in the heartbeat event's reply and in
    the description's hello (bson makes naive ones in a fifth fewer instructions; a scan
    decodes one a member). Before, they were aware, unlike PyMongo's."""
    import pymongo

    from singlemongo import MongoClient

    def times(make, listener_base):
        replies = []

        class Heartbeats(listener_base):
            def started(self, event):
                pass

            def succeeded(self, event):
                replies.append(event.reply)

            def failed(self, event):
                pass
        client = make(mongo_replica_set.uri, event_listeners=[Heartbeats()])
        try:
            client.admin.command("ping")
            assert eventually(lambda: len(replies) >= 3)
            hello = getattr(replies[0], "document", replies[0])  # PyMongo's is a Hello
            return [type(hello["localTime"]), hello["localTime"].tzinfo,
                    hello["lastWrite"]["lastWriteDate"].tzinfo]
        finally:
            client.close()
    assert times(MongoClient, monitoring.ServerHeartbeatListener) == times(
        pymongo.MongoClient, pm_monitoring.ServerHeartbeatListener) == [
            datetime.datetime, None, None]
