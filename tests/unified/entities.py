"""Entities of a unified test (clients, databases, collections, sessions, cursors, saved
results) and what each client observed (events and log messages)."""
import inspect
import logging
import re

from singlemongo import MongoClient

from .skips import Skip, missing_api

SENSITIVE = frozenset({"authenticate", "saslstart", "saslcontinue", "getnonce", "createuser",
                       "updateuser", "copydbgetnonce", "copydbsaslstart", "copydb"})
LOG_COMPONENTS = {"singlemongo.command": "command", "singlemongo.serverSelection": "serverSelection",
                  "singlemongo.topology": "topology", "singlemongo.connection": "connection"}
LOG_LEVELS = {10: "debug", 20: "info", 30: "warn", 40: "error", 50: "critical"}
SEVERITY = ["emergency", "alert", "critical", "error", "warning", "warn", "notice", "info",
            "debug", "trace"]


def event_name(event):
    """CommandStartedEvent -> commandStartedEvent."""
    name = type(event).__name__
    return name[0].lower() + name[1:]


def await_min_pool_size(client, recorder):
    """The unified format's awaitMinPoolSizeMS: every data-bearing server's pool holds
    minPoolSize connections before the test's operations, and events before that are not the
    test's. A pool fills in the background; a single-threaded client connects at its first
    operation's scan, which here runs now: its connection to each server is the pool (one
    socket per server), so minPoolSize is met when every data-bearing server has it open."""
    topology = client._topology
    description = topology.refresh()
    bearing = [address for address, sd in description.servers.items() if sd.is_data_bearing]
    missing = [address for address in bearing if address not in topology._connections]
    if not bearing or missing:
        raise AssertionError(f"awaitMinPoolSizeMS: no connection to the data-bearing servers "
                             f"{missing or '(none known)'} after a scan")
    recorder.events.clear()
    recorder.logs.clear()


class Recorder:
    """A client's event listener and log collector."""

    def __init__(self, spec):
        self.spec = spec
        self.observe = set(spec.get("observeEvents", ()))
        self.ignore = set(spec.get("ignoreCommandMonitoringEvents", ())) | {"configureFailPoint"}
        self.sensitive = bool(spec.get("observeSensitiveCommands"))
        self.log_levels = {c: SEVERITY.index(l) for c, l in
                           (spec.get("observeLogMessages") or {}).items()}
        self.events = []
        self.frozen = False
        self.logs = []
        self.topology_id = None

    def __call__(self, event):
        if not self.frozen:
            self.events.append(event)

    def freeze(self):
        """Stop recording: the test's operations are over."""
        self.frozen = True

    def observed(self, kinds=None):
        """Events this client observes, with ignored and sensitive commands left out."""
        out = []
        sensitive_requests = set()
        for event in self.events:
            name = event_name(event)
            command = getattr(event, "command_name", None)
            if command is not None and self._sensitive(event, command, sensitive_requests):
                continue
            if name not in self.observe or (kinds is not None and name not in kinds):
                continue
            if command is not None and command in self.ignore:
                continue
            out.append(event)
        return out

    def _sensitive(self, event, command, sensitive_requests):
        """A sensitive command's events, unless the client observes them: a hello is
        sensitive when its started event was redacted (speculativeAuthenticate), and its
        succeeded or failed event goes with it (the same request id)."""
        if self.sensitive:
            return False
        if command.lower() in SENSITIVE:
            return True
        if command.lower() not in ("hello", "ismaster"):
            return False
        key = (getattr(event, "connection_id", None), event.request_id)
        if event_name(event) == "commandStartedEvent":
            if not event.command:
                sensitive_requests.add(key)
            return not event.command
        return key in sensitive_requests

    def take_log(self, record):
        component = LOG_COMPONENTS.get(record.name)
        if component not in self.log_levels:
            return
        level = LOG_LEVELS.get(record.levelno, "debug")
        if SEVERITY.index(level) > self.log_levels[component]:
            return
        self.logs.append({"level": level, "component": component,
                          "data": dict(getattr(record, "mongodb", {}))})


class LogTap(logging.Handler):
    """Collects singlemongo's log records for every client observing logs in a test."""

    def __init__(self, recorders):
        super().__init__(logging.DEBUG)
        self.recorders = recorders

    def emit(self, record):
        for recorder in self.recorders:
            topology = getattr(record, "mongodb_topology_id", None)
            if topology is None or recorder.topology_id in (None, topology):
                recorder.take_log(record)


def snake(name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def accepts(method, kwargs, what):
    """Skip unless ``method`` takes these keyword arguments (the driver may not yet)."""
    try:
        inspect.signature(method).bind(**kwargs)
    except TypeError:
        names = ", ".join(sorted(kwargs))
        raise Skip(missing_api(f"{what}({names})")) from None


class EntityMap(dict):
    def __init__(self, runner):
        super().__init__()
        self.runner = runner
        self.recorders = {}
        self.lsids = {}  # session entity id -> its lsid, recorded at creation

    def add(self, name, value):
        if name in self:
            raise AssertionError(f"entity {name!r} is already defined")
        self[name] = value

    def get(self, name, kind=None):
        if name not in self:
            raise AssertionError(f"entity {name!r} is not defined")
        return super().get(name)

    def create(self, spec):
        (kind, args), = spec.items()
        maker = getattr(self, f"_make_{kind}", None)
        if maker is None:
            raise Skip(missing_api({"clientEncryption": "ClientEncryption",
                                    "thread": "a thread entity"}.get(kind, kind)))
        self.add(args["id"], maker(args))

    def _make_client(self, spec):
        runner = self.runner
        options = dict(spec.get("uriOptions") or {})
        if runner.env.auth == "MONGODB-OIDC":  # every client of the variant logs in so
            options.pop("authMechanism", None)
            options["authMechanismProperties"] = runner.env.oidc_properties(runner.topology)
        elif "$$placeholder" in (options.get("authMechanismProperties") or {}):
            raise AssertionError("a $$placeholder outside the MONGODB-OIDC variant")
        if spec.get("serverApi"):
            options["server_api"] = server_api(spec["serverApi"])
        recorder = Recorder(spec)
        client = MongoClient(runner.env.uri_for(runner.topology, spec), clock=runner.clock,
                             event_listeners=[recorder], **options)
        recorder.topology_id = client._topology.topology_id
        self.recorders[spec["id"]] = recorder
        runner.clients.append(client)
        if options.get("minPoolSize") and spec.get("awaitMinPoolSizeMS"):
            await_min_pool_size(client, recorder)
        return client

    def _make_database(self, spec):
        client = self.get(spec["client"])
        options = collection_options(spec.get("databaseOptions"))
        accepts(client.get_database, dict(name=spec["databaseName"], **options),
                "MongoClient.get_database")
        return client.get_database(spec["databaseName"], **options)

    def _make_collection(self, spec):
        database = self.get(spec["database"])
        options = collection_options(spec.get("collectionOptions"))
        accepts(database.get_collection, dict(name=spec["collectionName"], **options),
                "Database.get_collection")
        return database.get_collection(spec["collectionName"], **options)

    def _make_bucket(self, spec):
        from singlemongo.gridfs import GridFSBucket
        database = self.get(spec["database"])
        options = {{"bucketName": "bucket_name", "chunkSizeBytes": "chunk_size_bytes"}.get(
            k, k): v for k, v in collection_options(spec.get("bucketOptions")).items()}
        return GridFSBucket(database, **options)

    def _make_session(self, spec):
        client = self.get(spec["client"])
        if not callable(getattr(type(client), "start_session", None)):
            raise Skip(missing_api("MongoClient.start_session"))
        options = session_options(spec.get("sessionOptions"))
        session = client.start_session(**options)
        # Recorded now, as PyMongo's runner does: $$sessionLsid may be asked after endSession.
        self.lsids[spec["id"]] = session.session_id
        return session


def read_preference(doc):
    from singlemongo.selection import ReadPreference
    return ReadPreference(doc["mode"], tuple(doc.get("tagSets") or ({},)),
                          doc.get("maxStalenessSeconds"), doc.get("hedge"))


def collection_options(doc):
    """Keyword arguments for get_database/get_collection from collectionOrDatabaseOptions."""
    out = {}
    for key, value in (doc or {}).items():
        if key == "readPreference":
            out["read_preference"] = read_preference(value)
        elif key == "writeConcern":
            out["write_concern"] = write_concern(value)
        elif key == "readConcern":
            out["read_concern"] = read_concern(value)
        elif key == "maxCommitTimeMS":
            out["max_commit_time_ms"] = value
        elif key in ("bucketName", "chunkSizeBytes"):
            out[key] = value
        else:
            out[snake(key)] = value
    return out


def write_concern(doc):
    try:
        from singlemongo import WriteConcern
    except (ImportError, AttributeError):
        raise Skip(missing_api("WriteConcern")) from None
    return WriteConcern(**{{"wtimeoutMS": "wtimeout", "journal": "j"}.get(k, k): v
                           for k, v in doc.items()})


def read_concern(doc):
    try:
        from singlemongo import ReadConcern
    except (ImportError, AttributeError):
        raise Skip(missing_api("ReadConcern")) from None
    return ReadConcern(doc.get("level"))


def session_options(doc):
    out = {}
    for key, value in (doc or {}).items():
        if key == "defaultTransactionOptions":
            out["default_transaction_options"] = transaction_options(value)
        elif key == "defaultTimeoutMS":  # client-side operations timeout, "Sessions"
            out["default_timeout_ms"] = value
        else:
            out[snake(key)] = value
    return out


def transaction_options(doc):
    try:
        from singlemongo import TransactionOptions
    except (ImportError, AttributeError):
        raise Skip(missing_api("TransactionOptions")) from None
    return TransactionOptions(**collection_options(doc))


def server_api(doc):
    """A client entity's serverApi as the face's ServerApi (the Stable API)."""
    from singlemongo import ServerApi
    return ServerApi(doc["version"], strict=doc.get("strict"),
                     deprecation_errors=doc.get("deprecationErrors"))
