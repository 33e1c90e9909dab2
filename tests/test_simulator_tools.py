"""What shells ask of a server (issue 57): mongosh's rs.status(), rs.conf(),
db.currentOp(), db.hostInfo(), db.getLog(), db.killOp(), connectionStatus and listCommands
failed with CommandNotFound against ``singlemongo serve``. Each reply is checked for the
fields MongoDB's reference page of the command gives, with PyMongo as the client."""
import pymongo
import pytest
from pymongo.errors import OperationFailure

from singlemongo.testing import ReplicaSet, Standalone


pytest_plugins = ["tests.simulated"]


@pytest.fixture(scope="module")
def rs():
    """Three members (tests.simulated's has one): rs.status() lists each with its state."""
    deployment = ReplicaSet(3).start()
    yield deployment
    deployment.stop()


@pytest.fixture
def admin(client):
    return client.admin


def test_repl_set_get_status_lists_every_member_with_its_state(rs, admin):
    """rs.status(): set, myState, and per member _id, name, health, state, stateStr, self."""
    status = admin.command("replSetGetStatus")
    assert status["set"] == "rs" and status["myState"] == 1
    assert [(m["name"], m["stateStr"], m["state"]) for m in status["members"]] == [
        (s.address_text, "PRIMARY" if s.role == "primary" else "SECONDARY",
         1 if s.role == "primary" else 2) for s in rs.members]
    assert [m.get("self", False) for m in status["members"]] == [True, False, False]
    assert all(m["health"] == 1 for m in status["members"])


def test_repl_set_get_config_is_the_set_s_configuration(rs, admin):
    """rs.conf(): _id (the set's name), version, members with host, priority, votes."""
    config = admin.command("replSetGetConfig")["config"]
    assert config["_id"] == "rs" and config["version"] == rs.set_version
    assert [m["host"] for m in config["members"]] == [s.address_text for s in rs.members]
    assert all(m["votes"] == 1 and m["priority"] == 1 for m in config["members"])


def test_a_secondary_answers_rs_status_too(rs):
    """A shell connected straight to a secondary runs rs.status() there (myState 2)."""
    secondary = next(s for s in rs.members if s.role == "secondary")
    client = pymongo.MongoClient(f"mongodb://{secondary.address_text}/?directConnection=true")
    try:
        assert client.admin.command("replSetGetStatus")["myState"] == 2
    finally:
        client.close()


def test_a_standalone_is_not_a_replica_set():
    """replSetGetStatus on a standalone: NoReplicationEnabled (76), as mongod answers."""
    with Standalone() as deployment:
        client = pymongo.MongoClient(deployment.uri)
        with pytest.raises(OperationFailure) as info:
            client.admin.command("replSetGetStatus")
        client.close()
    assert info.value.code == 76


def test_current_op_sees_the_operation_asking(admin):
    """db.currentOp() and the $currentOp stage: the operation in progress, with opid, op,
    ns and command; $currentOp runs on admin only (73)."""
    inprog = admin.command("currentOp")["inprog"]
    assert [op["command"].get("currentOp") for op in inprog] == [1]
    staged = list(admin.aggregate([{"$currentOp": {}}, {"$project": {"opid": 1, "op": 1}}]))
    assert len(staged) == 1 and staged[0]["op"] == "command" and "opid" in staged[0]
    with pytest.raises(OperationFailure) as info:
        admin.client.other.command("aggregate", 1, pipeline=[{"$currentOp": {}}], cursor={})
    assert info.value.code == 73


def test_kill_op_needs_an_op_and_accepts_one_not_running(admin):
    """db.killOp(opid): "attempting to kill op" (also for an operation already done)."""
    assert admin.command("killOp", 1, op=12345)["info"] == "attempting to kill op"
    with pytest.raises(OperationFailure):
        admin.command("killOp", 1)


def test_get_log_lists_and_returns_logs(admin):
    """db.adminCommand({getLog: "*"}) names the logs; a log is lines; an unknown one is an
    error."""
    assert admin.command("getLog", "*")["names"] == ["global", "startupWarnings"]
    assert admin.command("getLog", "global")["log"] == []
    with pytest.raises(OperationFailure):
        admin.command("getLog", "nosuch")


def test_connection_status_and_host_info_and_list_commands(admin):
    """connectionStatus (nobody authenticated), hostInfo (system, os, extra), listCommands
    (every command served, this one included)."""
    assert admin.command("connectionStatus")["authInfo"]["authenticatedUsers"] == []
    info = admin.command("hostInfo")
    assert {"system", "os", "extra"} <= set(info) and info["system"]["numCores"] >= 1
    commands = admin.command("listCommands")["commands"]
    assert {"find", "insert", "listCommands", "replSetGetStatus", "hello"} <= set(commands)


def test_connection_status_names_the_user_logged_in():
    """connectionStatus after SCRAM: that user, in admin."""
    with Standalone(users={"ann": "pw"}) as deployment:
        address = deployment.servers[0].address_text
        client = pymongo.MongoClient(f"mongodb://ann:pw@{address}/")
        users = client.admin.command("connectionStatus")["authInfo"]["authenticatedUsers"]
        client.close()
    assert users == [{"user": "ann", "db": "admin"}]


def test_local_system_replset_holds_the_configuration(rs, client):
    """mongosh's rs.printSecondaryReplicationInfo() reads local.system.replset: the set's
    configuration, the same as replSetGetConfig's, kept as members come and go."""
    def stored():
        return client.local["system.replset"].find_one({"_id": "rs"})
    rs.publish_config()  # tests.simulated's client emptied the store
    assert stored() == client.admin.command("replSetGetConfig")["config"]
    rs.add_member()
    try:
        assert len(stored()["members"]) == 4
    finally:
        rs.remove_member(3)
    assert len(stored()["members"]) == 3


def _waiting(admin, command):
    """The currentOp documents of the operations running ``command``, once one shows."""
    import time
    for _ in range(50):
        found = [op for op in admin.command("currentOp")["inprog"] if command in op["command"]]
        if found:
            return found
        time.sleep(0.05)
    return []


def _killed_while_waiting(admin, command, operation):
    """``operation`` run in a thread until it waits; then (its currentOp document, the opids
    ``$currentOp`` showed for ``command`` meanwhile, what it returned or the code it raised
    after killOp, the seconds killOp took to answer it)."""
    import threading
    import time
    outcome = []

    def run():
        try:
            outcome.append(operation())
        except OperationFailure as exc:
            outcome.append(exc.code)
    thread = threading.Thread(target=run)
    thread.start()
    waiting = _waiting(admin, command)
    assert waiting, f"the waiting {command} is not in currentOp"
    staged = [op["opid"] for op in admin.aggregate([{"$currentOp": {}}])
              if command in op["command"]]
    started = time.monotonic()
    admin.command("killOp", 1, op=waiting[0]["opid"])
    thread.join(10)
    return waiting[0], staged, outcome, time.monotonic() - started


@pytest.mark.parametrize("how", ["blockConnection", "$where sleep"])
def test_current_op_sees_a_waiting_operation_and_kill_op_interrupts_it(how):
    """Rule: killOp and $currentOp see the simulator's own operations (issue 57): an
    operation whose reply waits (a blockConnection fail point, a $where that sleeps) is in
    currentOp with its command and running time, and killOp answers it Interrupted (11601)
    at once. Before, currentOp listed only itself and killOp did nothing."""
    with Standalone() as deployment:
        deployment.store.seed("app", "c", [{"_id": 1}])
        waiter = pymongo.MongoClient(deployment.uri, serverSelectionTimeoutMS=3000)
        admin = pymongo.MongoClient(deployment.uri, serverSelectionTimeoutMS=3000).admin
        query = {"$where": "function() { sleep(4000); return true; }"} if how != \
            "blockConnection" else {}
        if how == "blockConnection":
            admin.command("configureFailPoint", "failCommand", mode={"times": 1}, data={
                "failCommands": ["find"], "blockConnection": True, "blockTimeMS": 4000})
        try:
            op, staged, outcome, seconds = _killed_while_waiting(
                admin, "find", lambda: waiter.app.c.find_one(query))
            assert op["command"]["filter"] == query and staged == [op["opid"]]
            assert outcome == [11601] and seconds < 2.0
            assert not [op for op in admin.command("currentOp")["inprog"]
                        if "find" in op["command"]]
        finally:
            waiter.close()
            admin.client.close()


def test_current_op_sees_an_awaiting_get_more_and_kill_op_interrupts_it():
    """Rule: an awaitData getMore (a change stream with nothing new) is an operation in
    progress: currentOp lists it, and killOp answers it Interrupted (11601) at once."""
    with ReplicaSet(1) as deployment:
        watcher = pymongo.MongoClient(deployment.uri, serverSelectionTimeoutMS=3000)
        admin = pymongo.MongoClient(deployment.uri, serverSelectionTimeoutMS=3000).admin
        stream = watcher.app.c.watch(max_await_time_ms=4000)
        try:
            _, staged, outcome, seconds = _killed_while_waiting(admin, "getMore",
                                                                stream.try_next)
            assert outcome == [11601] and seconds < 2.0
        finally:
            stream.close()
            watcher.close()
            admin.client.close()
