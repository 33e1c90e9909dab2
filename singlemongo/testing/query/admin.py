"""Server administration commands, answered as a MongoDB 7.0 ``mongod`` does with test
commands enabled: what test helpers run before anything else (``getCmdLineOpts``,
``serverStatus``, ``getParameter``) and the storage statistics programs read (``dbStats``,
``collStats``, ``validate``). Sizes are the documents' BSON sizes: the simulated server keeps
no pages, so ``storageSize`` equals ``size`` and indexes count 0 bytes."""
import datetime
import os

import bson

from singlemongo.testing.query.catalog import index_documents
from singlemongo.testing.query.codes import CommandError
from singlemongo.testing.query.reads import collection_names, exists, namespace

VERSION = "7.0.0"
# getParameter's answers for the parameters programs ask about; "*" returns them all.
PARAMETERS = {"enableTestCommands": True, "featureCompatibilityVersion": {"version": "7.0"},
              "authenticationMechanisms": ["MONGODB-X509", "SCRAM-SHA-1", "SCRAM-SHA-256"],
              "transactionLifetimeLimitSeconds": 60, "requireApiVersion": False,
              "cursorTimeoutMillis": 600000, "internalQueryFrameworkControl": "trySbeEngine",
              # mongosh's db.getLogComponents(): the default level, components inheriting it.
              "logComponentVerbosity": {"verbosity": 0, **{
                  component: {"verbosity": -1} for component in (
                      "accessControl", "command", "control", "network", "query",
                      "replication", "sharding", "storage", "write")}}}
_STARTED = datetime.datetime.now(datetime.timezone.utc)


def _port(server):
    return server.address[1]


def get_cmd_line_opts(store, server, cmd):
    """The options the server "was started with" (test commands enabled)."""
    if cmd.get("$db") != "admin":
        raise CommandError(13, "getCmdLineOpts may only be run against the admin database.")
    parsed = {"net": {"bindIp": "127.0.0.1", "port": _port(server)},
              "setParameter": {"enableTestCommands": "1"}}
    argv = ["mongod", "--port", str(_port(server)), "--setParameter", "enableTestCommands=1"]
    return {"argv": argv, "parsed": parsed, "ok": 1}


def server_status(store, server, cmd):
    now = datetime.datetime.now(datetime.timezone.utc)
    mongos = getattr(server, "role", None) == "mongos"
    return {"host": f"{server.address[0]}:{_port(server)}", "version": VERSION,
            "process": "mongos" if mongos else "mongod", "pid": os.getpid(),
            "uptime": (now - _STARTED).total_seconds(), "localTime": now,
            "connections": {"current": getattr(server, "connections", 0)},
            "storageEngine": {"name": "wiredTiger", "supportsCommittedReads": True,
                              "persistent": True, "readOnly": False},
            "ok": 1}


def get_parameter(store, server, cmd):
    """``{getParameter: "*"}`` for every parameter, or ``{getParameter: 1, name: 1, ...}``
    for those named; a name the server does not know is refused as mongod refuses it."""
    if cmd.get("$db") != "admin":
        raise CommandError(13, "getParameter may only be run against the admin database.")
    if cmd.get("getParameter") == "*":
        return {**PARAMETERS, "ok": 1}
    wanted = [k for k in cmd if k not in ("getParameter", "$db", "lsid", "$clusterTime",
                                          "$readPreference", "comment", "apiVersion",
                                          "apiStrict", "apiDeprecationErrors")]
    unknown = [k for k in wanted if k not in PARAMETERS]
    if not wanted or unknown:
        raise CommandError(72, "no option found to get")
    return {**{k: PARAMETERS[k] for k in wanted}, "ok": 1}


def _sizes(store, ns):
    docs = list(store.collection(*ns).find({}))
    size = sum(len(bson.encode(d)) for d in docs)
    return len(docs), size


def _scale(cmd):
    scale = cmd.get("scale", 1)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or scale < 1:
        raise CommandError(2, "scale has to be >= 1")
    return int(scale)


def db_stats(store, server, cmd):
    db, scale = cmd["$db"], _scale(cmd)
    names = sorted(collection_names(store, db))
    objects = size = indexes = 0
    for name in names:
        count, bytes_ = _sizes(store, (db, name))
        objects, size = objects + count, size + bytes_
        indexes += len(index_documents(store, (db, name)))
    return {"db": db, "collections": len(names), "views": 0, "objects": objects,
            "avgObjSize": size / objects if objects else 0, "dataSize": size // scale,
            "storageSize": size // scale, "indexes": indexes, "indexSize": 0,
            "totalSize": size // scale, "scaleFactor": scale, "fsUsedSize": 0,
            "fsTotalSize": 0, "ok": 1}


def coll_stats(store, server, cmd):
    """A missing collection answers zeros, as 7.0 does (not NamespaceNotFound)."""
    ns, scale = namespace(cmd, "collStats"), _scale(cmd)
    count, size = _sizes(store, ns) if exists(store, ns) else (0, 0)
    indexes = index_documents(store, ns) if exists(store, ns) else []
    options = store.collection(*ns).options() if exists(store, ns) else {}
    return {"ns": f"{ns[0]}.{ns[1]}", "size": size // scale, "count": count,
            "avgObjSize": size // count if count else 0, "storageSize": size // scale,
            "totalSize": size // scale, "nindexes": len(indexes), "totalIndexSize": 0,
            "indexSizes": {i["name"]: 0 for i in indexes}, "scaleFactor": scale,
            "capped": bool(options.get("capped")), "ok": 1}


def validate(store, server, cmd):
    ns = namespace(cmd, "validate")
    if not exists(store, ns):
        raise CommandError(26, f"Collection '{ns[0]}.{ns[1]}' does not exist to validate.")
    if cmd.get("background") and cmd.get("full"):
        raise CommandError(2, "Running the validate command with both { background: true } "
                              "and { full: true } is not supported.")
    count, _ = _sizes(store, ns)
    indexes = index_documents(store, ns)
    return {"ns": f"{ns[0]}.{ns[1]}", "uuid": bson.Binary(os.urandom(16), 4),
            "nInvalidDocuments": 0, "nNonCompliantDocuments": 0, "nrecords": count,
            "nIndexes": len(indexes), "keysPerIndex": {i["name"]: count for i in indexes},
            "indexDetails": {i["name"]: {"valid": True} for i in indexes}, "valid": True,
            "repaired": False, "warnings": [], "errors": [], "extraIndexEntries": [],
            "missingIndexEntries": [], "corruptRecords": [], "ok": 1}


def fsync(store, server, cmd):
    """fsync: nothing to flush in memory; ``lock`` is refused, as the simulator cannot hold
    writes back."""
    if cmd.get("lock"):
        raise CommandError(238, "the simulated server cannot lock writes (fsync lock)")
    return {"ok": 1, "numFiles": 1}


COMMANDS = {"getCmdLineOpts": get_cmd_line_opts, "serverStatus": server_status,
            "getParameter": get_parameter, "dbStats": db_stats, "collStats": coll_stats,
            "validate": validate, "fsync": fsync}
