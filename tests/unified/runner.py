"""The unified test format runner (unified-test-format spec, schema 1.x as far as the
project's directories need), on the simulated deployments of ``singlemongo.testing``.

Written from ``../shared/reference/unified-test-format.md``. Setup and outcome use the
simulated server's store directly (the spec's "internal client"); fail points are
configured through the test's own client entities, as the spec says, and cleared after.
"""
import logging
import time

from bson import json_util

from singlemongo.clock import FakeClock
from singlemongo.errors import OperationFailure, SingleMongoError
from singlemongo.testing.query.collection_options import create as create_collection

from .entities import EntityMap, LogTap, event_name
from .environment import SCHEMA_MAJOR, Environment, choose_topology
from .matching import MatchError, match, plain
from .operations import run_entity_operation
from .schema import problems
from .skips import (FILE_SKIP, MONITOR, Skip,
                    missing_api, monitor_test, seed_policy, seed_policy_for, simulator_gap,
                    simulator_lacks)

ROOT_ITEM_OPERATIONS = frozenset({"find", "aggregate", "listCollections", "listDatabases",
                                  "listIndexes", "runCursorCommand", "listCollectionObjects",
                                  "listDatabaseObjects"})
COMMAND_EVENTS = ("commandStartedEvent", "commandSucceededEvent", "commandFailedEvent")
SDAM_PREFIXES = ("server", "topology")


_CONFORMING = set()


def refuse_malformed(file_name, file_doc):
    """Test Format: a file that breaks the format's schema is refused before anything runs
    (checked once per file)."""
    if file_name in _CONFORMING:
        return
    found = problems(file_doc)
    if found:
        raise AssertionError(f"{file_name} does not conform to the unified test format: "
                             + "; ".join(found[:5]))
    _CONFORMING.add(file_name)


def _walk(value):
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from _walk(v)
    elif isinstance(value, list):
        for v in value:
            yield from _walk(v)


# Events a client that has run no operation publishes only with a background monitor (SDAM,
# and a pool made ready by the monitor's check or filled to minPoolSize in the background).
MONITOR_EVENTS = ("server", "topology", "pool", "connection")


def _client_of(entities):
    """{entity id: the client entity it comes from} for the file's and test's entities."""
    owner = {}
    for spec in entities:
        (kind, args), = spec.items()
        parent = args.get("client") or args.get("database")
        owner[args["id"]] = owner.get(parent, parent) if parent else args["id"]
    return owner


def _needs_monitor(file_doc, test):
    """True when the test waits for SDAM, heartbeat or pool events on a client that has run
    no operation yet: only a background monitor produces those. A single-threaded driver checks
    servers inline, before an operation, and never in a constructor."""
    owner = _client_of(file_doc.get("createEntities", ()))
    active = set()
    for op in test["operations"]:
        args = op.get("arguments") or {}
        if op["object"] != "testRunner":
            active.add(owner.get(op["object"], op["object"]))
        elif op["name"] == "createEntities":
            owner.update(_client_of(args["entities"]))
        elif op["name"] in ("failPoint", "targetedFailPoint"):
            active = set()  # what a server does from now on is seen by the next operation
        elif op["name"] == "waitForPrimaryChange":
            return True
        elif op["name"] == "waitForEvent" and args["client"] not in active and \
                next(iter(args["event"])).startswith(MONITOR_EVENTS):
            return True
    return False


def check_feasible(file_doc, test, file_name):
    """Skip what this driver cannot do by design, before touching a deployment."""
    for node in _walk(test):
        if node.get("name") in ("runOnThread", "waitForThread") and node.get("object") == "testRunner":
            raise Skip(seed_policy("one socket per server (DESIGN.md): threads sharing a "
                                   "client take turns, one operation at a time, where these "
                                   "tests run operations side by side"))
        if "timeoutMode" in node.get("arguments", {}):
            # As PyMongo's runner: the face is PyMongo 4.20's, which has no timeoutMode.
            raise Skip(missing_api("timeoutMode (client-side operations timeout's cursor "
                                   "option, which PyMongo 4.20 does not offer either)"))
    if _needs_monitor(file_doc, test) or monitor_test(file_name, test["description"]):
        raise Skip(MONITOR)
    gap = simulator_gap(test["operations"])
    if gap:
        raise Skip(simulator_lacks(gap))
    for node in _walk(test):
        if node.get("awaited") is True or node.get("serverMonitoringMode") == "stream":
            raise Skip(MONITOR)


class Runner:
    def __init__(self, request, file_doc, test, file_name, only_topology=None):
        self.file_doc, self.test, self.file_name = file_doc, test, file_name
        self.only_topology = only_topology
        self.env = Environment(request)
        self.clock = FakeClock()
        self.clients = []
        self.entities = EntityMap(self)
        self.topology = None
        self.deployment = None
        self.log_tap = None

    # ----- the test ------------------------------------------------------------------------

    def run(self):
        refuse_malformed(self.file_name, self.file_doc)
        major = int(str(self.file_doc.get("schemaVersion", "1")).split(".")[0])
        assert major == SCHEMA_MAJOR, f"schema version {self.file_doc['schemaVersion']} unsupported"
        if self.test.get("skipReason"):
            raise Skip(f"{FILE_SKIP}: {self.test['skipReason']}")
        policy = seed_policy_for(self.file_name, self.test["description"])
        if policy:
            raise Skip(policy)
        check_feasible(self.file_doc, self.test, self.file_name)
        self.topology, self.env.auth = choose_topology(self.file_doc, self.test,
                                                       self.only_topology)
        self.deployment = self.env.deployment(self.topology).reset()
        try:
            self._initial_data()
            for spec in self.file_doc.get("createEntities", ()):
                self.entities.create(spec)
            self._tap_logs()
            for op in self.test["operations"]:
                self.execute(op)
        finally:
            self._tear_down()
        for expected in self.test.get("expectEvents", ()):
            self._check_events(expected)
        for expected in self.test.get("expectLogMessages", ()):
            self._check_logs(expected)
        for expected in self.test.get("outcome", ()):
            self._check_outcome(expected)

    def _initial_data(self):
        store = self.deployment.store
        for data in self.file_doc.get("initialData", ()):
            db = store.client[data["databaseName"]]
            name = data["collectionName"]
            with store.lock:
                for dropped in (name, f"enxcol_.{name}.esc", f"enxcol_.{name}.ecoc"):
                    db.drop_collection(dropped)
                create_collection(store, (data["databaseName"], name),
                                  data.get("createOptions") or {})
            store.seed(data["databaseName"], name, data["documents"])

    def _tap_logs(self):
        recorders = [r for r in self.entities.recorders.values() if r.log_levels]
        if recorders:
            self.log_tap = LogTap(recorders)
            logger = logging.getLogger("singlemongo")
            self._log_level = logger.level
            logger.setLevel(logging.DEBUG)
            logger.addHandler(self.log_tap)

    def _tear_down(self):
        if self.log_tap is not None:
            logger = logging.getLogger("singlemongo")
            logger.removeHandler(self.log_tap)
            logger.setLevel(self._log_level)
        for recorder in self.entities.recorders.values():
            recorder.freeze()  # what the test did; closing its entities (abort, endSessions) is not
        for entity in list(self.entities.values()):
            if type(entity).__name__ == "ClientSession":
                try:
                    entity.end_session()
                except Exception:
                    pass
        for client in self.clients:
            client.close()
        if self.deployment is not None:
            for server in self.deployment.servers:
                server.clear_faults()

    # ----- operations ----------------------------------------------------------------------

    def execute(self, op, propagate=False):
        """Run one operation and check what it expects; ``propagate``: an error it raised is
        raised again once checked (a withTransaction callback's, "withTransaction")."""
        name, target = op["name"], op["object"]
        args = op.get("arguments") or {}
        result = error = None
        try:
            if target == "testRunner":
                getattr(self, f"op_{name}", self._unknown_special)(args, name)
                return
            result = run_entity_operation(self, self.entities.get(target), name, args)
        except (Skip, MatchError):
            raise
        except Exception as exc:
            error = exc
        if op.get("ignoreResultAndError"):
            if propagate and error is not None:
                raise error
            return
        if "expectError" in op:
            if error is None:
                raise MatchError(f"{name}: expected an error, got {result!r}")
            check_error(op["expectError"], error, self.entities)
            if propagate:
                raise error
            return
        if error is not None:
            raise error
        if "expectResult" in op:
            actual = plain(result) if result is not None else None
            if name in ROOT_ITEM_OPERATIONS and isinstance(op["expectResult"], list):
                # "Evaluating Matches": each document of an iterated result is a root document.
                expected = op["expectResult"]
                if not isinstance(actual, list) or len(actual) != len(expected):
                    raise MatchError(f"{name}: expected {len(expected)} documents, got {actual!r}")
                for i, (e, a) in enumerate(zip(expected, actual)):
                    match(e, a, self.entities, root=True, path=f"$[{i}]")
            else:
                match(op["expectResult"], actual, self.entities, root=isinstance(actual, dict))
        if "saveResultAsEntity" in op:
            self.entities.add(op["saveResultAsEntity"], result)

    def with_transaction(self, session, args):
        operations = args.pop("callback")

        def callback(_session):
            for op in operations:
                self.execute(op, propagate=True)
        options = {k: v for k, v in args.items()}
        from .operations import python_args
        return session.with_transaction(callback, **python_args(self, "with_transaction", options))

    def _unknown_special(self, args, name):
        raise AssertionError(f"unknown testRunner operation {name!r}")

    def op_failPoint(self, args, name):
        client = self.entities.get(args["client"])
        client.admin.command(args["failPoint"])

    def op_createEntities(self, args, name):
        for spec in args["entities"]:
            self.entities.create(spec)
        self._tap_logs() if self.log_tap is None else None

    def op_assertNumberConnectionsCheckedOut(self, args, name):
        """Connections checked out, counted per holder: between two operations none, but
        behind a load balancer an open cursor or transaction keeps its connection (pinned)."""
        client = self.entities.get(args["client"])
        if not isinstance(args.get("connections"), int):
            raise AssertionError(f"assertNumberConnectionsCheckedOut: connections must be an "
                                 f"integer, not {args.get('connections')!r}")
        pool = client._topology.pool
        count = pool.total_checked_out if pool is not None else 0
        if args["connections"] != count:
            raise MatchError(f"{count} connections checked out, expected {args['connections']}")

    def _recorder(self, client_name):
        return self.entities.recorders[client_name]

    def _count(self, args):
        recorder = self._recorder(args["client"])
        (kind, _), = args["event"].items()
        count = 0
        for event in recorder.observed({kind}):
            try:
                match_event(args["event"], event, self.entities)
                count += 1
            except MatchError:
                pass
        return count

    def op_waitForEvent(self, args, name):
        # A single-threaded client publishes its events inline, during operations: what has
        # not happened by now will not happen by waiting.
        count = self._count(args)
        if count < args["count"]:
            raise MatchError(f"waitForEvent: {count} of {args['count']} {args['event']} seen")

    def op_assertEventCount(self, args, name):
        count = self._count(args)
        if count != args["count"]:
            raise MatchError(f"assertEventCount: {count} {args['event']}, expected {args['count']}")

    def op_recordTopologyDescription(self, args, name):
        self.entities.add(args["id"], self.entities.get(args["client"]).topology_description)

    def op_assertTopologyType(self, args, name):
        td = self.entities.get(args["topologyDescription"])
        if str(td.topology_type) != args["topologyType"]:
            raise MatchError(f"topology type {td.topology_type}, expected {args['topologyType']}")

    def op_wait(self, args, name):
        self.clock.advance(args["ms"] / 1000.0)
        time.sleep(min(args["ms"], 1000) / 1000.0)  # let simulated servers' blocks elapse

    def op_assertCollectionExists(self, args, name):
        names = self.deployment.store.client[args["databaseName"]].list_collection_names()
        if args["collectionName"] not in names:
            raise MatchError(f"collection {args['collectionName']} does not exist")

    def op_assertCollectionNotExists(self, args, name):
        names = self.deployment.store.client[args["databaseName"]].list_collection_names()
        if args["collectionName"] in names:
            raise MatchError(f"collection {args['collectionName']} exists")

    def _index_names(self, args):
        coll = self.deployment.store.collection(args["databaseName"], args["collectionName"])
        return set(coll.index_information())

    def op_assertIndexExists(self, args, name):
        if args["indexName"] not in self._index_names(args):
            raise MatchError(f"index {args['indexName']} does not exist")

    def op_assertIndexNotExists(self, args, name):
        if args["indexName"] in self._index_names(args):
            raise MatchError(f"index {args['indexName']} exists")

    def _session(self, args):
        return self.entities.get(args["session"])

    def op_assertSessionTransactionState(self, args, name):
        state = self._session(args)._transaction.state.value
        state = "committed" if state == "committed_empty" else state
        if state != args["state"]:
            raise MatchError(f"transaction state {state}, expected {args['state']}")

    def op_assertSessionPinned(self, args, name):
        if self._session(args)._transaction.pinned is None:
            raise MatchError("the session is not pinned")

    def op_assertSessionUnpinned(self, args, name):
        pinned = self._session(args)._transaction.pinned
        if pinned is not None:
            raise MatchError(f"the session is pinned to {pinned}")

    def _dirty(self, args):
        server_session = self._session(args)._server_session
        return bool(server_session is not None and server_session.dirty)

    def op_assertSessionDirty(self, args, name):
        if not self._dirty(args):
            raise MatchError("the session is not dirty")

    def op_assertSessionNotDirty(self, args, name):
        if self._dirty(args):
            raise MatchError("the session is dirty")

    def op_targetedFailPoint(self, args, name):
        """A fail point on the server the session is pinned to (through the simulator, the
        spec's "internal client")."""
        pinned = self._session(args)._transaction.pinned
        if pinned is None:
            raise MatchError("targetedFailPoint: the session is not pinned")
        server = next(s for s in self.deployment.servers if tuple(s.address) == tuple(pinned))
        reply = server._configure(args["failPoint"])
        if not reply.get("ok"):
            raise MatchError(f"targetedFailPoint refused: {reply}")

    def _last_two_lsids(self, args):
        events = [e for e in self._recorder(args["client"]).observed({"commandStartedEvent"})]
        return events[-2].command.get("lsid"), events[-1].command.get("lsid")

    def op_assertSameLsidOnLastTwoCommands(self, args, name):
        first, second = self._last_two_lsids(args)
        if first != second:
            raise MatchError(f"different lsids: {first} and {second}")

    def op_assertDifferentLsidOnLastTwoCommands(self, args, name):
        first, second = self._last_two_lsids(args)
        if first == second:
            raise MatchError(f"the same lsid twice: {first}")

    # ----- assertions ----------------------------------------------------------------------

    def _check_events(self, expected):
        recorder = self._recorder(expected["client"])
        kind = expected.get("eventType", "command")
        actual = [e for e in recorder.observed() if _category(event_name(e)) == kind]
        _check_sequence(f"{kind} event", expected["events"], actual,
                        lambda e, a: match_event(e, a, self.entities), _brief,
                        expected.get("ignoreExtraEvents"))

    def _check_logs(self, expected):
        recorder = self._recorder(expected["client"])
        logs = [m for m in recorder.logs if not any(
            _log_matches(i, m, self.entities) for i in expected.get("ignoreMessages", ()))]
        _check_sequence("log message", expected["messages"], logs,
                        lambda e, a: _check_log(e, a, self.entities),
                        lambda m: m["data"].get("message"), expected.get("ignoreExtraMessages"))

    def _check_outcome(self, expected):
        actual = self.deployment.store.documents(expected["databaseName"], expected["collectionName"])
        actual = plain(actual)
        match(expected["documents"], actual, self.entities, root=False)


def _check_sequence(what, wanted, actual, check, brief, ignore_extra):
    """The same number of items, each matching, in order (extra ones allowed if ignored)."""
    if ignore_extra:
        actual = actual[:len(wanted)]
    if len(actual) != len(wanted):
        raise MatchError(f"expected {len(wanted)} {what}s, got {len(actual)}: "
                         f"{[brief(a) for a in actual]}")
    for i, (e, a) in enumerate(zip(wanted, actual)):
        try:
            check(e, a)
        except MatchError as exc:
            raise MatchError(f"{what} {i}: {exc}; got {brief(a)}") from None


def _category(name):
    if name in COMMAND_EVENTS:
        return "command"
    if name.startswith(SDAM_PREFIXES):
        return "sdam"
    return "cmap"


def _brief(event):
    name = event_name(event)
    detail = getattr(event, "command_name", None) or getattr(
        getattr(event, "new_description", None), "server_type", None) or ""
    return f"{name}({detail})"


def _description_type(description):
    kind = getattr(description, "server_type", None) or getattr(description, "topology_type", None)
    return str(kind)


def match_event(expected, actual, entities):
    (name, spec), = expected.items()
    if event_name(actual) != name:
        raise MatchError(f"expected {name}, got {event_name(actual)}")
    for key, value in (spec or {}).items():
        if key in ("command", "reply"):
            match(value, plain(getattr(actual, key)), entities, True)
        elif key == "commandName":
            if actual.command_name != value:
                raise MatchError(f"commandName {actual.command_name}, expected {value}")
        elif key == "databaseName":
            if actual.database_name != value:
                raise MatchError(f"databaseName {actual.database_name}, expected {value}")
        elif key == "hasServiceId":
            if bool(getattr(actual, "service_id", None)) != value:
                raise MatchError(f"serviceId {getattr(actual, 'service_id', None)}, expected "
                                 f"{'one' if value else 'none'}")
        elif key == "hasServerConnectionId":
            server_id = getattr(actual, "server_connection_id", None)
            if (isinstance(server_id, int) and server_id > 0) != value:
                raise MatchError(f"serverConnectionId {server_id}")
        elif key in ("previousDescription", "newDescription"):
            description = getattr(actual, snake_description(key))
            if "type" in value and _description_type(description) != value["type"]:
                raise MatchError(f"{key} type {_description_type(description)}, expected "
                                 f"{value['type']}")
        elif key == "awaited":
            if actual.awaited != value:
                raise MatchError(f"awaited {actual.awaited}, expected {value}")
        elif key == "reason":
            if actual.reason != value:
                raise MatchError(f"reason {actual.reason!r}, expected {value!r}")
        elif key == "interruptInUseConnections":
            if getattr(actual, "interrupt_connections", False) != value:
                raise MatchError(f"interruptInUseConnections, expected {value}")
        else:
            raise MatchError(f"unsupported event assertion {key!r} for {name}")


def snake_description(key):
    return "previous_description" if key == "previousDescription" else "new_description"


def _log_matches(expected, actual, entities):
    try:
        _check_log(expected, actual, entities)
        return True
    except MatchError:
        return False


def _check_log(expected, actual, entities):
    for key in ("level", "component"):
        if expected[key] != actual[key]:
            raise MatchError(f"{key} {actual[key]}, expected {expected[key]}")
    data = plain(actual["data"])
    match(expected["data"], data, entities, root=True)
    if "failureIsRedacted" in expected:
        failure = str(actual["data"].get("failure", ""))
        if not failure:
            raise MatchError("a failure was expected in the log message")
        redacted = _is_redacted(failure)
        if redacted != expected["failureIsRedacted"]:
            raise MatchError(f"failure {'not ' if expected['failureIsRedacted'] else ''}redacted: "
                             f"{failure!r}")


def _is_redacted(failure):
    """This driver redacts a sensitive command's server error to a document of its code,
    code name and labels only."""
    try:
        doc = json_util.loads(failure)
    except ValueError:
        return False
    return isinstance(doc, dict) and set(doc) <= {"code", "codeName", "errorLabels"}


def top_level_error(exc):
    """The error a ClientBulkWriteException carries (the format reads the top-level error's
    code, labels and response from it), or ``exc`` itself."""
    if type(exc).__name__ == "ClientBulkWriteException" and exc.error is not None:
        return exc.error
    return exc


def check_bulk_error(key, value, exc, entities):
    """expectError's writeErrors (by model index), writeConcernErrors and expectResult (the
    partial result) of a bulk write's error."""
    if key == "expectResult":
        result = getattr(exc, "partial_result", None)
        if type(exc).__name__ == "ClientBulkWriteException":
            from .operations import client_bulk_result
            from .matching import MISSING
            match(value, MISSING if result is None else client_bulk_result(result), entities,
                  True)
        elif result is not None:
            match(value, plain(result), entities, True)
        return
    if type(exc).__name__ != "ClientBulkWriteException":
        raise MatchError(f"{key} needs a ClientBulkWriteException, got {type(exc).__name__}")
    if key == "writeErrors":
        actual = {str(e["idx"]): {"code": e.get("code"), "message": e.get("errmsg")}
                  for e in exc.write_errors}
        if set(actual) != set(value):
            raise MatchError(f"write errors at {sorted(actual)}, expected {sorted(value)}")
        for index, expected in value.items():
            match(expected, actual[index], entities, True)
        return
    actual = [{"code": e.get("code"), "message": e.get("errmsg")}
              for e in exc.write_concern_errors]
    if len(actual) != len(value):
        raise MatchError(f"{len(actual)} write concern errors, expected {len(value)}: {actual}")
    for expected, got in zip(value, actual):
        match(expected, got, entities, True)


def check_error(expected, exc, entities):
    bulk, exc = exc, top_level_error(exc)
    server = isinstance(exc, OperationFailure)
    details = getattr(exc, "details", None) or {}
    labels = set(getattr(exc, "error_labels", ()) or ())
    for key, value in expected.items():
        if key == "isError":
            continue
        if key in ("writeErrors", "writeConcernErrors", "expectResult"):
            check_bulk_error(key, value, bulk, entities)
            continue
        if key == "isClientError":
            if (not server) != value:
                raise MatchError(f"expected a {'client' if value else 'server'} error, got "
                                 f"{type(exc).__name__}: {exc}")
        elif key == "isTimeoutError":
            timeout = bool(getattr(exc, "timeout", False)) or "timed out" in str(exc).lower()
            if timeout != value:
                raise MatchError(f"timeout error {timeout}, expected {value}: {exc}")
        elif key == "errorContains":
            if value.lower() not in str(exc).lower():
                raise MatchError(f"error {str(exc)!r} does not contain {value!r}")
        elif key == "errorCode":
            if getattr(exc, "code", None) != value:
                raise MatchError(f"error code {getattr(exc, 'code', None)}, expected {value}: {exc}")
        elif key == "errorCodeName":
            if str(details.get("codeName", "")).lower() != value.lower():
                raise MatchError(f"codeName {details.get('codeName')}, expected {value}")
        elif key == "errorLabelsContain":
            missing = set(value) - labels
            if missing:
                raise MatchError(f"error labels {sorted(labels)} lack {sorted(missing)}: {exc}")
        elif key == "errorLabelsOmit":
            present = set(value) & labels
            if present:
                raise MatchError(f"error labels {sorted(labels)} include {sorted(present)}")
        elif key == "errorResponse":
            match(value, plain(details), entities, True)
        else:
            raise MatchError(f"unsupported expectError field {key!r}")
    if not isinstance(exc, (SingleMongoError, TypeError, ValueError)):
        raise exc
