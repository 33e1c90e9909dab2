"""PyMongo's behaviour where its own test suite and libraries found singlemongo different
(issue 45). PyMongo itself is the oracle: the same call is made on both, in this process
(PyMongo imported as itself, singlemongo by its own names). Each test failed before its fix;
its docstring names the rule it guards."""
import datetime

import pytest
from bson import ObjectId

import pymongo.monitoring as pm_monitoring

from singlemongo import monitoring


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
    rest = text.replace(hosts.group(0), "").removesuffix(")")
    options = re.split(r", (?=[a-z_]+=)", rest)
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
