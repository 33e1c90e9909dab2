"""install_as_pymongo() and the PyMongo surface libraries use (issue 18). Each test failed
before the change; its docstring says what broke. The install runs in a child process: this
one imports PyMongo itself for the side-by-side tests."""
import json
from pathlib import Path
import subprocess
import sys
import threading

import pymongo
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import singlemongo
from singlemongo import CursorType, MongoClient, errors
from singlemongo.testing import ReplicaSet, Sharded

PUBLIC_MODULES = ("mongo_client", "database", "collection", "cursor", "command_cursor",
                  "errors", "results", "operations", "read_preferences", "read_concern",
                  "write_concern", "uri_parser", "driver_info", "common", "monitoring",
                  "client_session", "server_api", "collation", "change_stream",
                  "encryption_options", "encryption", "client_options", "typings",
                  "event_loggers", "server_description", "topology_description",
                  "server_type", "database_shared", "auth_oidc", "synchronous",
                  "synchronous.collection", "synchronous.mongo_client", "asynchronous",
                  "asynchronous.mongo_client")


def _child(code):
    """Run ``code`` in a fresh interpreter after install_as_pymongo(); its JSON output."""
    program = "import json, singlemongo\nsinglemongo.install_as_pymongo()\n" + code
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_pymongo_and_gridfs_import_singlemongo():
    """Every public pymongo module (and gridfs) a library imports resolves to singlemongo's,
    as the same objects. Before, there was no install_as_pymongo() at all: mongoengine and
    Flask-PyMongo imported PyMongo itself, or nothing without it."""
    out = _child(f"""
import importlib, pymongo, gridfs, gridfs.errors, gridfs.grid_file
names = {list(PUBLIC_MODULES)!r}
mods = {{n: importlib.import_module("pymongo." + n).__name__ for n in names}}
from pymongo import MongoClient, ReadPreference, uri_parser, collection
from gridfs import GridFS, GridFSBucket, NoFile
print(json.dumps({{"mods": mods, "client": MongoClient is singlemongo.MongoClient,
    "gridfs": GridFS.__module__, "nofile": NoFile.__module__,
    "version": pymongo.version, "tuple": list(pymongo.version_tuple),
    "own": singlemongo.__version__, "has_c": pymongo.has_c(),
    "rp": ReadPreference is singlemongo.ReadPreference,
    "coll": collection.Collection is singlemongo.collection.Collection}}))
""")
    assert all(name.startswith("singlemongo.") for name in out["mods"].values()), out["mods"]
    assert out["client"] and out["rp"] and out["coll"]
    assert out["gridfs"].startswith("singlemongo.gridfs") and \
        out["nofile"] == "singlemongo.gridfs.errors"
    assert out["version"] == "4.20.0" and out["tuple"] == [4, 20, 0]
    assert out["own"] == singlemongo.__version__ != out["version"]
    assert out["has_c"] is False


def test_what_is_not_offered_fails_where_it_is_used_not_at_import():
    """Encryption and the async API import cleanly and fail where they are made, naming
    what and why; a private PyMongo module is a ModuleNotFoundError naming it."""
    out = _child("""
import pymongo
from pymongo.encryption_options import AutoEncryptionOpts
from pymongo.encryption import ClientEncryption, Algorithm
from pymongo.asynchronous.mongo_client import AsyncMongoClient
from pymongo import AsyncMongoClient as Top
from pymongo.auth_oidc import OIDCCallback
class Mine(OIDCCallback):
    def fetch(self, context): return None
Mine()
found = []
for make in (lambda: AutoEncryptionOpts({}, "a.b"), lambda: AsyncMongoClient(),
             lambda: pymongo.MongoClient(auto_encryption_opts=object())):
    try:
        make()
    except NotImplementedError as exc:
        found.append(str(exc))
try:
    import pymongo.pool
except ModuleNotFoundError as exc:
    found.append(str(exc))
print(json.dumps(found))
""")
    assert len(out) == 4
    assert "AutoEncryptionOpts" in out[0] and "encryption" in out[0]
    assert "synchronous driver" in out[1]
    assert "pymongo.pool" in out[3] and "public modules" in out[3]


def test_install_after_pymongo_was_imported_warns_and_replaces():
    """A program that imported PyMongo first is told that earlier imports keep PyMongo's
    objects; later imports get singlemongo's."""
    done = subprocess.run([sys.executable, "-W", "always", "-c", """
import pymongo.errors, singlemongo, warnings
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    singlemongo.install_as_pymongo()
import pymongo
print(pymongo.MongoClient is singlemongo.MongoClient, str(seen[0].message)[:60])
"""], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("True install_as_pymongo(): PyMongo was imported before")


def test_uri_parser_reports_what_pymongo_does():
    """pymongo.uri_parser.parse_uri (mongoengine and Flask-PyMongo read connection strings
    with it): PyMongo's keys and value types."""
    from singlemongo.uri_parser import parse_uri, split_hosts
    parsed = parse_uri("mongodb://u:p%40ss@a:1,b/db.coll?replicaSet=rs&connectTimeoutMS=5000"
                       "&readPreference=secondary&uuidRepresentation=standard&ssl=true")
    assert parsed["nodelist"] == [("a", 1), ("b", 27017)]
    assert parsed["username"] == "u" and parsed["password"] == "p@ss"
    assert "p@ss" not in repr(parsed)
    assert (parsed["database"], parsed["collection"]) == ("db", "coll")
    assert parsed["options"] == {"replicaSet": "rs", "connectTimeoutMS": 5.0,
                                 "readPreference": "secondary", "uuidrepresentation": 4,
                                 "tls": True}  # PyMongo's key spelling for it
    assert split_hosts("a,[::1]:2") == [("a", 27017), ("::1", 2)]
    # PyMongo's split_hosts and parse_host take a UNIX socket path as it is; they refused it.
    assert split_hosts("/tmp/m.sock,a") == [("/tmp/m.sock", None), ("a", 27017)]
    with pytest.raises(errors.ConfigurationError, match=r"Unknown option\.") as unknown:
        parse_uri("mongodb://a/?foo=1")
    assert "foo" not in str(unknown.value)  # a key from a URI is not named (a secret?)


def test_client_options_are_pymongos(mongo_replica_set):
    """client.options is PyMongo's ClientOptions (libraries read pool_options,
    read_preference, server_selection_timeout); it was singlemongo's record."""
    from singlemongo.driver_info import DriverInfo
    client = MongoClient(mongo_replica_set.uri, read_preference=singlemongo.ReadPreference
                         .SECONDARY, connectTimeoutMS=5000, maxPoolSize=7,
                         driver=DriverInfo("Lib", "2.0"))
    options = client.options
    assert options.read_preference == singlemongo.ReadPreference.SECONDARY
    assert options.server_selection_timeout == 30.0 and options.heartbeat_frequency == 60.0
    assert options.pool_options.connect_timeout == 5.0
    assert options.pool_options.max_pool_size == 7
    assert options.replica_set_name == "rs" and client._options.replica_set_name == "rs"
    assert options.pool_options.metadata["driver"]["name"] == "singlemongo|Lib"
    assert options.codec_options.document_class is dict
    assert options.heartbeat_frequency_ms == 60000  # singlemongo's own names still read
    client.close()


def test_wrapping_library_metadata_reaches_the_handshake(mongo_replica_set):
    """MongoClient(driver=DriverInfo(...)) (Flask-PyMongo) was an unknown option; the
    handshake now names the library after the driver, as the handshake spec says."""
    from singlemongo.driver_info import DriverInfo
    client = MongoClient(mongo_replica_set.uri, driver=DriverInfo("Flask-PyMongo", "3.0.1",
                                                                  "Flask 3"))
    client.test.c.find_one()
    hello = next(c for c in mongo_replica_set.servers[0].command_log if "client" in c)
    assert hello["client"]["driver"] == {"name": "singlemongo|Flask-PyMongo",
                                         "version": f"{singlemongo.__version__}|3.0.1"}
    assert hello["client"]["platform"].endswith("|Flask 3")
    client.append_metadata(DriverInfo("Other", "9"))
    assert client.options.pool_options.metadata["driver"]["name"] == \
        "singlemongo|Flask-PyMongo|Other"
    client.close()


def test_exhaust_cursor_streams_on_one_socket(mongo_replica_set):
    """CursorType.EXHAUST: one getMore with exhaustAllowed, then the server streams every
    batch (it was accepted and ignored: a getMore per batch). Another operation mid-stream
    gives the stream up (issue 60: its connection is closed, nothing more is read); the
    cursor yields what it had buffered, then raises AutoReconnect."""
    client = MongoClient(mongo_replica_set.uri)
    coll = client.test.exhaust
    coll.insert_many([{"_id": i} for i in range(10)])
    primary = mongo_replica_set.servers[0]
    before = primary.commands["getMore"]
    assert [d["_id"] for d in coll.find(cursor_type=CursorType.EXHAUST, batch_size=2)] == \
        list(range(10))
    # 8 documents after the first batch: 3 full batches streamed, and an empty last one, as
    # a server finds the end of a cursor whose batch was full on the next batch it makes.
    assert primary.commands["getMore"] - before == 1 and primary.streamed == 4
    cursor = coll.find(cursor_type=CursorType.EXHAUST, batch_size=2)
    first = [next(cursor)["_id"] for _ in range(3)]
    assert coll.count_documents({}) == 10  # the stream was given up, not drained
    assert next(cursor)["_id"] == 3  # the batch already received
    with pytest.raises(errors.AutoReconnect, match="exhaust stream"):
        next(cursor)
    assert first == [0, 1, 2]
    with pytest.raises(errors.InvalidOperation, match="limit and exhaust"):
        coll.find(cursor_type=CursorType.EXHAUST, limit=3)
    client.close()


def test_exhaust_cursor_closed_mid_stream_drops_its_connection(mongo_replica_set):
    """A stream cannot be killed: closing the cursor closes the connection (PyMongo's rule)
    and the next operation reconnects."""
    client = MongoClient(mongo_replica_set.uri)
    coll = client.test.exhaust
    coll.insert_many([{"_id": i} for i in range(10)])
    cursor = coll.find(cursor_type=CursorType.EXHAUST, batch_size=2)
    next(cursor), next(cursor), next(cursor)
    cursor.close()
    assert coll.count_documents({}) == 10
    client.close()


def test_exhaust_is_refused_on_a_mongos_older_than_7_1(monkeypatch):
    """PyMongo's rule: mongos streams exhaust getMores from MongoDB 7.1 (the simulated
    mongos says it is 7.0 here)."""
    from singlemongo.testing import deployments
    monkeypatch.setattr(deployments, "MAX_WIRE_VERSION", 21)
    with Sharded(1) as sharded:
        client = MongoClient(sharded.uri)
        client.test.c.insert_many([{"_id": i} for i in range(3)])
        with pytest.raises(errors.InvalidOperation, match="7.1"):
            list(client.test.c.find(cursor_type=CursorType.EXHAUST, batch_size=1))
        client.close()


def test_timeout_block_bounds_every_operation(mongo_replica_set):
    """singlemongo.timeout() (pymongo.timeout): one deadline for the block, its errors have
    ``timeout`` True; nested blocks only shorten it. It did not exist."""
    client = MongoClient(mongo_replica_set.uri)
    client.test.c.insert_one({"_id": 1})
    mongo_replica_set.servers[0].fail("find", action="block", block_s=0.5, times=1)
    with pytest.raises(errors.PyMongoError) as caught:
        with singlemongo.timeout(0.1):
            client.test.c.find_one()
    assert caught.value.timeout
    with singlemongo.timeout(5):
        with singlemongo.timeout(60):
            client.test.c.find_one()
    sent = [c for c in mongo_replica_set.servers[0].command_log if "find" in c][-1]
    assert 0 < sent["maxTimeMS"] <= 5000
    with pytest.raises(ValueError):
        singlemongo.timeout(-1)
    client.close()


def test_a_thread_sharing_a_client_is_served_in_turn(mongo_replica_set):
    """Libraries share one client between threads (mongoengine's thread-safety test, a Flask
    app on a threaded server): each thread's operations run in turn. They got
    InvalidOperation."""
    client = MongoClient(mongo_replica_set.uri)
    coll = client.test.threads
    failures = []

    def work(n):
        try:
            for i in range(20):
                coll.insert_one({"t": n, "i": i})
                coll.find_one({"t": n})
        except Exception as exc:  # pragma: no cover - the failure is the assertion below
            failures.append(exc)
    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures and coll.count_documents({}) == 160
    client.close()


def test_every_pymongo_error_class_is_importable_with_its_parents():
    """Rule (code written against pymongo.errors runs): every exception class PyMongo's
    ``pymongo.errors`` defines is in singlemongo.errors with the same PyMongo parents, even
    where singlemongo never raises it, so imports and ``except`` clauses keep working. Before,
    Ming's datastore module (``from pymongo.errors import ... EncryptionError``) failed at
    import."""
    import pymongo.errors as theirs
    names = [n for n, v in vars(theirs).items() if isinstance(v, type) and n[0] != "_"
             and issubclass(v, BaseException) and v.__module__ == theirs.__name__]
    assert "EncryptionError" in names and len(names) >= 20
    for name in names:
        ours = getattr(errors, name)
        parents = {c.__name__ for c in getattr(theirs, name).__mro__}
        assert parents <= {c.__name__ for c in ours.__mro__}, name
        assert ours.__module__ == "singlemongo.errors", name
    cause = ValueError("no key")
    failure = errors.EncryptionError(cause)
    assert failure.cause is cause and str(failure) == "no key" and not failure.timeout
    assert errors.EncryptedCollectionError(cause, {"fields": []}).encrypted_fields == {
        "fields": []}
    bulk = errors.ClientBulkWriteException({"writeErrors": [{"index": 0}]}, False)
    assert bulk.code == 65 and bulk.write_errors == [{"index": 0}]
    assert bulk.write_concern_errors == [] and bulk.error is None


def test_a_database_over_a_client_of_another_kind_takes_its_public_settings():
    """Rule (PyMongo's Database reads its client's public settings): a Database made over
    an object that is not a singlemongo client, as Ming's in-memory test double (mim) makes
    one (``Database.__init__(connection, name)``), inherits the codec options, read
    preference and concerns that object exposes; a Collection subclass keeps attributes of
    its own (``_indexes``), and a Cursor is made over it without a topology. Before, the
    Database looked for singlemongo's private ``_codec_options`` on it (mim's ``__getattr__``,
    a database per attribute, recursed), ``_indexes`` was a read-only property, and the
    Cursor's constructor asked the client for its topology."""
    from singlemongo.collection import Collection
    from singlemongo.database import Database
    real = MongoClient("mongodb://h", connect=False, tz_aware=True, w=2,
                       readPreference="secondary", readConcernLevel="majority")

    class Connection:
        codec_options, read_preference = real.codec_options, real.read_preference
        write_concern, read_concern = real.write_concern, real.read_concern

        def __getattr__(self, name):
            return Database(self, name)

    db = Database(Connection(), "d")
    for level in (db, Collection(db, "c"), db.get_collection("c", write_concern=None)):
        assert level.codec_options.tz_aware
        assert level.read_preference.name == "Secondary"
        assert level.write_concern.document == {"w": 2}
        assert level.read_concern.level == "majority"

    class Mim(Collection):  # mim's Collection keeps its indexes in self._indexes
        def __init__(self, database, name):
            super().__init__(database, name)
            self._indexes = {}

    coll = Mim(db, "c")
    assert coll._indexes == {} and coll.full_name == "d.c"
    # mim makes a real cursor only to have PyMongo check find()'s keywords: the constructor
    # checks them and does nothing else, as PyMongo's.
    from singlemongo.cursor import Cursor
    assert Cursor(coll, limit=5, sort=[("a", 1)]) is not None
    with pytest.raises(TypeError):
        Cursor(coll, bogus=1)
    with pytest.raises(TypeError):
        Cursor(coll, limit="5")


# (key, value) as libraries pass them to pymongo.uri_parser.validate_options: Eve checks its
# MongoClient keywords with it, connect and tz_aware among them.
VALIDATE_CASES = [
    ("connect", True), ("connect", "false"), ("tz_aware", True), ("appname", "app"),
    ("fsync", True), ("minPoolSize", 1), ("waitQueueMultiple", 2), ("tlsCRLFile", __file__),
    ("unicode_decode_error_handler", "ignore"), ("uuidRepresentation", "standard"),
    ("driver", None), ("server_api", None), ("replicaset", "rs"), ("w", 1), ("w", "majority"),
    ("maxPoolSize", None), ("connectTimeoutMS", None), ("connectTimeoutMS", 5000),
    ("heartbeatFrequencyMS", 1000), ("journal", "true"), ("readPreference", "secondary"),
    ("document_class", dict), ("username", "u"), ("password", "p"), ("tzinfo", None),
    ("type_registry", None), ("read_preference", None), ("event_listeners", []),
    ("bogus", 1), ("maxPoolSize", -1), ("connect", "sometimes"), ("fsync", "maybe")]


def _validated(module, key, value):
    """The value ``module.validate_options`` gives ``key``, or "refused" (PyMongo's errors
    are not ValueErrors: its ConfigurationError is a PyMongoError)."""
    try:
        valid = module.validate_options({key: value})
    except Exception as exc:  # noqa: BLE001 (either driver's ConfigurationError, or a type error)
        assert type(exc).__name__ in ("ConfigurationError", "ValueError", "TypeError"), exc
        return "refused"
    return valid.get(key.lower(), valid.get(key, "<missing>"))


@pytest.mark.parametrize("key, value", VALIDATE_CASES, ids=lambda x: repr(x)[:30])
def test_validate_options_accepts_and_refuses_what_pymongos_does(key, value):
    """Rule (PyMongo's uri_parser.validate_options, the oracle): the connection-string
    options and PyMongo's own (connect, tz_aware, fsync, driver, server_api,
    waitQueueMultiple, tlsCRLFile) are valid, the MongoClient-only keywords (document_class,
    username, event_listeners, ...) are unknown, and a None is what MongoClient makes of it.
    Before, connect and tz_aware were refused as unknown and Eve could not start."""
    from pymongo import uri_parser as theirs
    from singlemongo import uri_parser as ours
    assert _validated(ours, key, value) == _validated(theirs, key, value)


def test_validated_options_are_found_whatever_their_casing_as_in_pymongo():
    """Rule (PyMongo's validate_options returns the keys lower-cased, its split_options a
    case-insensitive dict; parse_uri a plain dict by the canonical names): a library reading
    ``validate_options(...)["replicaset"]`` finds the option. Before, only the canonical
    casing was found."""
    from pymongo import uri_parser as theirs
    from singlemongo import uri_parser as ours
    for module in (ours, theirs):
        valid = module.validate_options({"minPoolSize": 2, "replicaSet": "rs"})
        assert valid["minpoolsize"] == 2 and valid["replicaset"] == "rs"
        split = module.split_options("replicaSet=rs&maxPoolSize=5")
        assert split["REPLICASET"] == "rs" and split.get("maxpoolsize") == 5
        assert "MAXPOOLSIZE" in split and split == {"replicaSet": "rs", "maxPoolSize": 5}
        assert split.pop("maxpoolsize") == 5 and "maxPoolSize" not in split
        options = module.parse_uri("mongodb://a/?replicaset=rs&authsource=admin")["options"]
        assert options == {"replicaSet": "rs", "authSource": "admin"}
        assert type(options) is dict
    valid = ours.validate_options({"minPoolSize": 2, "replicaset": "rs"})
    assert list(valid) == ["minPoolSize", "replicaSet"]  # canonical names, in given order


# Classes and functions PyMongo defines in the modules install_as_pymongo() serves that
# singlemongo does not have, each for a reason: PyMongo's own helpers (validators, internals),
# client bulk write (not offered), and the topology events' common base class.
NOT_SERVED = {
    "common": "*", "helpers_shared": "*", "read_preferences": {"MovingAverage"},
    "write_concern": {"validate_boolean"}, "collation": {"validate_collation_or_none"},
    "typings": {"strip_optional"}, "topology_description": {"updated_topology_description"},
    "results": {"ClientBulkWriteResult"}, "encryption_options": {"check_min_pymongocrypt"},
    "monitoring": {"TopologyEvent"}}


def test_every_class_pymongo_defines_in_a_served_module_is_there():
    """Rule (PyMongo, the oracle: the classes and functions its public modules define):
    ``from pymongo.cursor import RawBatchCursor`` (and RawBatchCommandCursor from
    command_cursor) and ``from pymongo.monitoring import
    TopologyOpenedEvent`` (PyMongo's name for the spec's TopologyOpeningEvent, which its
    TopologyListener.opened receives) import, as every such name does but those NOT_SERVED
    gives a reason for. Before, all three were ImportErrors."""
    import inspect
    import importlib
    defined = {}
    for name in PUBLIC_MODULES:
        if name.startswith(("synchronous", "asynchronous")) or NOT_SERVED.get(name) == "*":
            continue
        module = importlib.import_module(f"pymongo.{name}")
        family = {module.__name__, f"pymongo.synchronous.{name}", f"pymongo.{name}_shared"}
        defined[name] = sorted(
            n for n, obj in vars(module).items() if not n.startswith("_")
            and (inspect.isclass(obj) or inspect.isfunction(obj))
            and obj.__module__ in family and n not in NOT_SERVED.get(name, ()))
    missing = _child(f"""
import importlib
defined = {defined!r}
print(json.dumps({{m: [n for n in names if not hasattr(importlib.import_module("pymongo." + m), n)]
                  for m, names in defined.items()}}))""")
    assert {m: names for m, names in missing.items() if names} == {}
    same = _child("""
from pymongo.monitoring import TopologyOpenedEvent, TopologyOpeningEvent
from pymongo.cursor import RawBatchCursor
from pymongo.command_cursor import RawBatchCommandCursor
from singlemongo import raw_batches
print(json.dumps([TopologyOpenedEvent is TopologyOpeningEvent,
                  RawBatchCursor is raw_batches.RawBatchCursor,
                  RawBatchCommandCursor is raw_batches.RawBatchCommandCursor]))""")
    assert same == [True, True, True]


POOL_EVENTS = ("PoolCreatedEvent", "PoolReadyEvent", "PoolClearedEvent", "PoolClosedEvent",
               "ConnectionCreatedEvent", "ConnectionReadyEvent", "ConnectionClosedEvent",
               "ConnectionCheckOutStartedEvent", "ConnectionCheckOutFailedEvent",
               "ConnectionCheckedOutEvent", "ConnectionCheckedInEvent")


def test_pool_events_take_pymongos_arguments_and_listeners_its_methods():
    """Rule (PyMongo, the oracle): a program written for PyMongo's pool events imports them,
    builds them with PyMongo's arguments (a listener's own tests do), reads the same
    attributes, and subclasses ConnectionPoolListener calling any of its methods through
    super(). They were ImportErrors, and PoolClearedEvent's flag had another name
    (``interrupt_in_use_connections``)."""
    import inspect
    import pymongo.monitoring as theirs
    from singlemongo import monitoring as ours
    for name in POOL_EVENTS:
        mine, pymongos = getattr(ours, name), getattr(theirs, name)
        params = list(inspect.signature(pymongos).parameters)
        arguments = [("h", 1)] + [i for i, _ in enumerate(params[1:], 2)]
        control = pymongos(*arguments)
        public = [a for a in dir(control) if not a.startswith("_")]
        for made in (mine(*arguments), mine(**dict(zip(params, arguments)))):
            assert {a: getattr(made, a) for a in public} == \
                {a: getattr(control, a) for a in public}, name
    for name in ("ConnectionClosedReason", "ConnectionCheckOutFailedReason"):
        values = lambda cls: {k: v for k, v in vars(cls).items() if k.isupper()}  # noqa: E731
        assert values(getattr(ours, name)) == values(getattr(theirs, name))
    methods = {m for m in dir(theirs.ConnectionPoolListener) if not m.startswith("_")}
    listener = type("Counter", (ours.ConnectionPoolListener,), {})()
    assert all(getattr(listener, m)(None) is None for m in methods)


HOST_CASES = [
    (None, None), ("a", None), ("a", 2), ("a:3", 2), ("a,b:2", None), (["a", "b:2"], None),
    (["a,b", "c"], 5), ("[::1]", None), ("[::1]:27018", 5), ("mongodb://a", 27018),
    ("mongodb://a:1,b", 27018), ("mongodb://a,a", None), (["a", "a"], None),
    (["mongodb://a:1", "b"], 5), (["b", "mongodb://a:1"], None),
    (["mongodb://u:p@a/db?replicaSet=x", "b,c:3"], None),
    (["mongodb://a", "mongodb://b"], None), ("a/b", None), ("localhost:27017/mydb", None),
    ("::1", None), ("::1:27018", None), ("fe80::1", None), ("", None), ("a,", None),
    (",a", None), ("a:x", None), ("localhost:", None), ("a:65536", None), ([], None),
    ("u:p@a", None), (["a", "u:p@b"], None),
]
# Where singlemongo decides otherwise, on purpose (docs/coming-from-pymongo.md, "Differences from PyMongo").
HOST_DIFFERENCES = {
    "a b": "refused here (a host name has no spaces); PyMongo fails when it connects",
    "/tmp/m.sock": "a bare UNIX socket path is accepted here; PyMongo wants it percent-encoded "
                   "in a connection string",
}


def _seeds(module, host, port):
    """The client's seeds as a set with its replica set name, or the family of the error
    (PyMongo's port errors are ValueErrors, ours InvalidURI, a ValueError too)."""
    try:
        client = module.MongoClient(host, port, connect=False)
    except Exception as exc:  # noqa: BLE001 (either driver's errors, compared by family)
        families = ("ConfigurationError", "ValueError", "TypeError")
        return {f for f in families if any(c.__name__ == f for c in type(exc).__mro__)}
    seeds = (client._topology_settings.seeds if module.__name__ == "pymongo"
             else client._settings.seeds)
    return set(seeds), client.options.replica_set_name


@pytest.mark.parametrize("host, port", HOST_CASES, ids=lambda x: repr(x)[:40])
def test_host_and_port_give_the_seeds_pymongo_gives(host, port):
    """Rule (PyMongo's MongoClient(host, port), the oracle): an entry of ``host`` with a '/'
    is a connection string (at most one), the others ``host[:port]`` lists, and the seeds
    are all of them, without repeats; ``port`` is the default port of every host. Before,
    ``["mongodb://a:1", "b"]`` was refused, ``"localhost:27017/mydb"`` silently connected to
    localhost and dropped the database, and a bare ``"::1"`` was taken for an address
    (``"::1:27018"`` could not be read either way)."""
    import pymongo
    ours = _seeds(singlemongo, host, port)
    theirs = _seeds(pymongo, host, port)
    if isinstance(theirs, set):  # refused: ours is refused with at least PyMongo's families
        assert isinstance(ours, set) and theirs <= ours, (ours, theirs)
    else:
        assert ours == theirs


def test_a_host_with_a_slash_and_no_scheme_is_refused_with_what_to_write():
    """Rule (bad input gets an error naming the value and a hint): ``"localhost/mydb"`` is
    refused naming the entry and the connection string it probably means."""
    with pytest.raises(errors.InvalidURI, match=r"'localhost/mydb'.*mongodb://localhost/mydb"):
        MongoClient("localhost/mydb", connect=False)
    with pytest.raises(errors.InvalidURI, match=r"u:<redacted>@a/db") as caught:
        MongoClient("u:secret@a/db", connect=False)
    assert "secret" not in str(caught.value)


def test_an_empty_host_says_so():
    """Rule (an error a person can act on): ``"a,"`` and ``""`` name the empty host, as
    PyMongo does, instead of an 'invalid host' quoting a port that is not there."""
    for host in ("", "a,", ",a", ["a", ""]):
        with pytest.raises(errors.ConfigurationError, match="empty host"):
            MongoClient(host, connect=False)


@pytest.mark.parametrize("host", sorted(HOST_DIFFERENCES))
def test_host_arguments_where_singlemongo_differs_on_purpose(host):
    """Rule (a difference is a documented line): the hosts singlemongo reads otherwise than
    PyMongo, each listed in HOST_DIFFERENCES and in docs/coming-from-pymongo.md."""
    import pymongo
    assert _seeds(singlemongo, host, None) != _seeds(pymongo, host, None)
    readme = (Path(__file__).parent.parent / "docs" / "coming-from-pymongo.md").read_text()
    assert f"`{host}`" in readme


def test_a_host_named_twice_is_one_seed_but_counts_twice_where_one_host_is_allowed():
    """Rule (PyMongo keeps its seeds in a set): a host named twice is one seed. Where exactly
    one host is allowed (directConnection, loadBalanced), PyMongo 4.20 counts the hosts as
    written, and so does singlemongo: ``mongodb://a,a:27017/?directConnection=true`` is
    refused by both."""
    assert MongoClient(["a", "b", "a"], connect=False)._settings.seeds == (
        ("a", 27017), ("b", 27017))
    for option in ("directConnection", "loadBalanced"):
        uri = f"mongodb://a,a:27017/?{option}=true"
        with pytest.raises(pymongo.errors.ConfigurationError):
            pymongo.MongoClient(uri, connect=False)
        with pytest.raises(errors.ConfigurationError, match="exactly one host"):
            MongoClient(uri, connect=False)


_NAME = st.from_regex(r"[a-z][a-z0-9]{0,4}(\.[a-z0-9]{1,3})?", fullmatch=True)
_HOST = st.one_of(_NAME, st.builds(lambda n, p: f"{n}:{p}", _NAME, st.integers(-1, 70000)),
                  st.sampled_from(["[::1]", "[::1]:5", "::1", "[fe80::1]:27018", "", "A:1"]))
_GROUP = st.lists(_HOST, min_size=1, max_size=3).map(",".join)
_ENTRY = st.one_of(_GROUP, _GROUP.map(lambda g: f"mongodb://{g}/?replicaSet=rs"),
                   _GROUP.map(lambda g: f"mongodb://u:p@{g}/db"))


@given(st.one_of(_ENTRY, st.lists(_ENTRY, max_size=3)),
       st.one_of(st.none(), st.integers(1, 65535)))
@settings(max_examples=150, deadline=None)
def test_any_host_argument_gives_the_seeds_pymongo_gives(host, port):
    """Rule (PyMongo's MongoClient(host, port), the oracle), over generated host arguments:
    host names with and without ports (some out of range), IPv6 literals with and without
    brackets, empty entries, connection strings with options or credentials, alone or in a
    list: the same seeds and replica set name, or refused where PyMongo refuses."""
    import pymongo
    ours, theirs = _seeds(singlemongo, host, port), _seeds(pymongo, host, port)
    if isinstance(theirs, set):
        assert isinstance(ours, set) and theirs <= ours, (ours, theirs)
    else:
        assert ours == theirs


def test_a_pymongo_programs_logging_configuration_catches_the_records(mongo_standalone):
    """Under install_as_pymongo(), the spec's log messages go to PyMongo's logger names
    (``pymongo.command``, ``pymongo.serverSelection``, ...), which a PyMongo program
    configures; they went to ``singlemongo.command``, where nothing listened."""
    out = _child(f"""
import logging
seen = []
class Keep(logging.Handler):
    def emit(self, record):
        seen.append((record.name, record.getMessage().split(".")[0][:40]))
logging.getLogger("pymongo").addHandler(Keep())
logging.getLogger("pymongo").setLevel(logging.DEBUG)
import pymongo
pymongo.MongoClient({mongo_standalone.uri!r}).admin.command("ping")
print(json.dumps(sorted({{name for name, _ in seen}})))
""")
    assert {"pymongo.command", "pymongo.serverSelection"} <= set(out)


def test_async_names_import_subscript_and_fail_only_when_used():
    """Libraries annotate with PyMongo's async classes (mongodb-odm: ``AsyncMongoClient[Any]``
    in its models); they import, subscript as generics and fail only when made, saying
    singlemongo is synchronous. Before, subscripting raised TypeError at import: 155 of
    mongodb-odm's tests failed."""
    out = _child("""
from typing import Any
from pymongo import AsyncMongoClient
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.cursor import AsyncCursor
from pymongo.asynchronous.command_cursor import AsyncCommandCursor
from pymongo.asynchronous.client_session import AsyncClientSession
names = [AsyncMongoClient, AsyncDatabase, AsyncCollection, AsyncCursor, AsyncCommandCursor,
         AsyncClientSession]
subscripted = [cls[Any] is cls for cls in names]
try:
    AsyncMongoClient()
    message = None
except NotImplementedError as exc:
    message = str(exc)
print(json.dumps({"subscripted": subscripted, "message": message}))
""")
    assert all(out["subscripted"]) and "synchronous" in out["message"]


def test_registered_listeners_are_in_pymongos_listeners_registry(mongo_standalone):
    """``pymongo.monitoring._LISTENERS`` (flask-mongoengine's debug panel reads it): the
    registered listeners by kind; one a library appends there reaches new clients."""
    out = _child(f"""
from pymongo import monitoring, MongoClient
class Commands(monitoring.CommandListener):
    def __init__(self): self.names = []
    def started(self, event): self.names.append(event.command_name)
    def succeeded(self, event): pass
    def failed(self, event): pass
registered, appended = Commands(), Commands()
monitoring.register(registered)
lists = monitoring._LISTENERS
lists.command_listeners.append(appended)
MongoClient({mongo_standalone.uri!r}).admin.command("ping")
print(json.dumps([registered in lists.command_listeners, lists.server_listeners,
                  "ping" in registered.names, "ping" in appended.names]))
""")
    assert out == [True, [], True, True]
