"""Running one scenario with both drivers and comparing what happened.

A scenario is ``S(name, run, seed=...)``: ``run(coll, m)`` gets the driver's collection
``sbs.c`` (seeded with ``seed``) and ``m``, the driver's names (``m.InsertOne``,
``m.errors``, ``m.client(**options)`` for a second client on the same deployment...). It
returns anything; both drivers' returns are normalised and compared, and so are the errors
(class name and code), the collection's contents afterwards and the commands each driver sent.

Command comparison ignores what the single-threaded design, or the two drivers' different
bookkeeping, changes and what says nothing about the operation: session ids (``lsid``),
``$clusterTime``, ``$db``, handshakes and monitoring (hello), ``endSessions``, and the
commands' order only where a scenario says so. Everything else must be equal.
"""
import datetime
import types
import uuid
from collections.abc import Mapping

import bson
import pymongo
from bson import ObjectId
from bson.raw_bson import RawBSONDocument

import singlemongo

IGNORED_FIELDS = frozenset({"lsid", "$clusterTime", "$db"})
# Reply fields whose values are the server's clock: never the same twice.
CLOCK_FIELDS = frozenset({"$clusterTime", "operationTime", "localTime", "uploadDate"})
IGNORED_COMMANDS = frozenset({"hello", "ismaster", "isMaster", "endSessions", "ping",
                              "saslStart", "saslContinue", "buildinfo", "buildInfo"})
RESULT_ATTRIBUTES = ("acknowledged", "inserted_id", "inserted_ids", "matched_count",
                     "modified_count", "upserted_id", "deleted_count", "did_upsert",
                     "inserted_count", "upserted_count", "upserted_ids", "raw_result",
                     "bulk_api_result")


class S:
    """One scenario."""

    def __init__(self, name, run, seed=(), compare_commands=True, unordered_commands=False,
                 note=None, difference=None):
        self.name, self.run, self.seed = name, run, list(seed)
        self.compare_commands, self.unordered_commands = compare_commands, unordered_commands
        self.note = note
        # A documented difference from PyMongo (DIFFERENCES): (command field, reason); that
        # field is left out of the command comparison, nothing else.
        self.difference = difference

    def __repr__(self):
        return self.name


class _Ids:
    """ObjectIds and UUIDs made during a run differ between drivers: each becomes its order of
    appearance, so equal structure still compares equal."""

    def __init__(self):
        self.seen = {}

    def __call__(self, value):
        key = repr(value)
        if key not in self.seen:
            self.seen[key] = f"<{type(value).__name__} #{len(self.seen) + 1}>"
        return self.seen[key]


def normalise(value, ids):
    """Plain, comparable data: result objects become their public attributes, documents dicts
    (with their class name), generated ids placeholders; exceptions are handled by run()."""
    if isinstance(value, (ObjectId, uuid.UUID)) or (
            isinstance(value, bson.Binary) and value.subtype in (3, 4)):
        return ids(value)
    if isinstance(value, RawBSONDocument):
        return {"<raw>": normalise(bson.decode(value.raw), ids)}
    if isinstance(value, Mapping):
        body = {str(k): normalise(v, ids) for k, v in value.items() if k not in CLOCK_FIELDS}
        kind = type(value).__name__
        return body if kind == "dict" else {f"<{kind}>": body}
    if isinstance(value, (list, tuple)):
        return [normalise(v, ids) for v in value]
    if isinstance(value, datetime.datetime):
        return ("datetime", value.isoformat(), value.tzinfo is not None)
    if isinstance(value, (str, int, float, bool, type(None), bytes)) or type(value).__module__ \
            .startswith("bson"):
        return value
    if type(value).__name__.endswith("Result"):
        return {"<result>": type(value).__name__, **{a: _attr(value, a, ids) for a in
                                                     RESULT_ATTRIBUTES if hasattr_safe(value, a)}}
    if type(value).__name__ in ("Cursor", "CommandCursor"):
        return {"<cursor>": type(value).__name__}
    return {"<object>": type(value).__name__, "repr": repr(value)}


def files_query(name, body):
    """Documented (README, "Differences from PyMongo"): GridFSBucket's files query by an id
    that is not a document is {_id: <id>}, as the project's revision of the GridFS tests
    expects; PyMongo's is {_id: {$eq: <id>}}. The same match, so both are compared as one."""
    query = body.get("filter")
    if name == "find" and str(body.get("find", "")).endswith(".files") and \
            isinstance(query, Mapping) and list(query) == ["_id"] and \
            isinstance(query["_id"], Mapping) and list(query["_id"]) == ["$eq"] and \
            not isinstance(query["_id"]["$eq"], Mapping):
        return {**body, "filter": {"_id": query["_id"]["$eq"]}}
    return body


def hasattr_safe(obj, name):
    try:
        getattr(obj, name)
        return True
    except AttributeError:
        return False
    except Exception:  # a property that raises (an unacknowledged count): it exists
        return True


def _attr(obj, name, ids):
    try:
        return normalise(getattr(obj, name), ids)
    except Exception as exc:
        return {"<raises>": type(exc).__name__}


GRIDFS_ERRORS = ("NoFile", "FileExists", "CorruptGridFile")


class ErrorSignature(dict):
    """An error as compared: its class, code and error labels. singlemongo's error equals
    PyMongo's when it has the same code and labels and is an instance of PyMongo's class (every ``except`` clause written
    for PyMongo's error catches it: a ConfigurationError where PyMongo raises ValueError, or
    singlemongo's own subclasses such as AuthenticationFailed)."""

    def __eq__(self, other):
        if not isinstance(other, ErrorSignature):
            return NotImplemented
        if self["code"] != other["code"] or self["labels"] != other["labels"]:
            return False
        return self["<error>"] in other.classes or other["<error>"] in self.classes

    __hash__ = None


def error_signature(exc):
    """The error's class (the first PyMongo or builtin class it is), code and labels."""
    code = getattr(exc, "code", None)
    names = [k.__name__ for k in type(exc).__mro__]
    if type(exc).__name__ in GRIDFS_ERRORS:
        kind = type(exc).__name__
    else:
        kind = next((k.__name__ for k in type(exc).__mro__
                     if type(exc).__module__.startswith("pymongo") or k.__name__ in
                     vars(pymongo.errors) or k.__module__ == "builtins"), type(exc).__name__)
    if code is None and isinstance(getattr(exc, "details", None), Mapping):
        code = exc.details.get("code")
    # PyMongo keeps the labels in a private set, singlemongo in ``error_labels``.
    labels = getattr(exc, "error_labels", None) or getattr(exc, "_error_labels", None) or ()
    signature = ErrorSignature({"<error>": kind, "code": code, "labels": sorted(labels)})
    signature.classes = names
    return signature


class _Recorder:
    """Commands started, as (name, normalised body), for either driver's listener API."""

    def __init__(self):
        self.commands = []

    # PyMongo's CommandListener protocol
    def started(self, event):
        self.record(event.command_name, event.command)

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass

    # singlemongo's callable protocol
    def __call__(self, event):
        if type(event).__name__ == "CommandStartedEvent":
            self.record(event.command_name, event.command)

    def record(self, name, command):
        if name in IGNORED_COMMANDS:
            return
        body = {k: v for k, v in command.items() if k not in IGNORED_FIELDS}
        # Cursor ids are the server's: each run gets new ones.
        if "getMore" in body:
            body["getMore"] = "<cursor id>"
        if "killCursors" in body:
            body["cursors"] = ["<cursor id>" for _ in body.get("cursors", ())]
        # Cluster times are the server's clock; txnNumbers count each client's own writes.
        if isinstance(body.get("readConcern"), Mapping):
            body["readConcern"] = {k: "<cluster time>" if k in ("afterClusterTime",
                                                                "atClusterTime") else v
                                   for k, v in body["readConcern"].items()}
        if "txnNumber" in body:
            body["txnNumber"] = "<txnNumber>"
        self.commands.append((name, body))


class _PyMongoListener(_Recorder, pymongo.monitoring.CommandListener):
    pass


def _names(driver, deployment, recorder, clients):
    uri = deployment.uri
    lib = pymongo if driver == "pymongo" else singlemongo
    ns = types.SimpleNamespace(driver=driver, errors=lib.errors, uri=uri, deployment=deployment,
                               timeout=lib.timeout, CursorType=lib.CursorType)
    for name in ("InsertOne", "UpdateOne", "UpdateMany", "ReplaceOne", "DeleteOne",
                 "DeleteMany", "IndexModel", "ASCENDING", "DESCENDING", "TEXT", "HASHED",
                 "GEO2D", "GEOSPHERE", "ReturnDocument", "ReadPreference", "WriteConcern",
                 "MongoClient", "ReadConcern"):
        setattr(ns, name, getattr(lib, name, None))
    if driver == "pymongo":
        import gridfs
        from pymongo.collation import Collation
        from pymongo.read_concern import ReadConcern
        from pymongo.server_api import ServerApi
        from pymongo import read_preferences as rp
    else:
        from singlemongo import gridfs
        from singlemongo.collation import Collation
        from singlemongo.read_concern import ReadConcern
        from singlemongo.server_api import ServerApi
        from singlemongo import read_preferences as rp
    ns.gridfs = gridfs
    ns.DriverInfo = (pymongo.driver_info if driver == "pymongo" else
                     singlemongo.driver_info).DriverInfo
    ns.Collation, ns.ReadConcern, ns.ServerApi, ns.read_preferences = (
        Collation, ReadConcern, ServerApi, rp)
    ns.TransactionOptions = lib.client_session.TransactionOptions if driver == "pymongo" \
        else lib.TransactionOptions

    def client(*where, **options):
        """A second client on the deployment (or where ``where`` says: host, port)."""
        made = make_client(driver, where or (uri,), recorder, **options)
        clients.append(made)
        return made
    ns.client = client
    return ns


def make_client(driver, where, recorder, **options):
    """A client of ``driver`` on ``where`` (a connection string, or host and port)."""
    where = (where,) if isinstance(where, str) else tuple(where)
    if driver == "pymongo":
        return pymongo.MongoClient(*where, event_listeners=[_PyMongoListener()]
                                   if recorder is None else [_as_pymongo(recorder)],
                                   serverMonitoringMode="poll", serverSelectionTimeoutMS=5000,
                                   **options)
    return singlemongo.MongoClient(*where, event_listeners=[recorder] if recorder else [],
                                   **options)


def _as_pymongo(recorder):
    listener = _PyMongoListener()
    listener.commands = recorder.commands
    return listener


def _settle(client, recorder):
    """Let unacknowledged writes land before the contents are read: a ping on the same
    connection is answered only after every earlier message on it (not recorded)."""
    sent = len(recorder.commands)
    try:
        client.sbs.command("ping")
    except Exception:  # a scenario may have closed the client; then nothing is in flight
        pass
    recorder.commands[sent:] = [c for c in recorder.commands[sent:] if c[0] != "ping"]


def run(driver, scenario, deployment):
    """What happened when ``driver`` ran ``scenario``: the normalised return or error, the
    collection's contents afterwards, and the commands sent."""
    deployment.store.reset()
    if scenario.seed:
        deployment.store.seed("sbs", "c", [dict(d) for d in scenario.seed])
    recorder = _Recorder()
    clients = []
    ids = _Ids()
    client = make_client(driver, deployment.uri, recorder)
    clients.append(client)
    try:
        coll = client.sbs.c
        try:
            outcome = normalise(scenario.run(coll, _names(driver, deployment, recorder,
                                                           clients)), ids)
        except (pymongo.errors.PyMongoError, singlemongo.errors.PyMongoError,
                bson.errors.BSONError, TypeError, ValueError, KeyError, AttributeError,
                IndexError, StopIteration, OSError, NotImplementedError) as exc:
            outcome = error_signature(exc)
        _settle(client, recorder)
        after = normalise(sorted(deployment.store.documents("sbs", "c"),
                                 key=lambda d: repr(d.get("_id"))), ids)
    finally:
        for c in clients:
            c.close()
    if scenario.difference is not None:
        field = scenario.difference[0]
        recorder.commands = [(name, {k: v for k, v in body.items() if k != field})
                             for name, body in recorder.commands]
    recorder.commands = [(name, files_query(name, body)) for name, body in recorder.commands]
    commands = normalise(recorder.commands, ids) if scenario.compare_commands else None
    if commands is not None and scenario.unordered_commands:
        commands = sorted(commands, key=repr)
    return {"outcome": outcome, "after": after, "commands": commands}
