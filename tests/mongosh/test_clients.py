"""Clients nobody here wrote against ``singlemongo serve replicaset`` (issue 57): mongosh's
everyday calls (9 of 30 failed on 2026-12-04: rs.status(), rs.conf(), db.currentOp(),
db.hostInfo(), getLog, killOp, connectionStatus, listCommands, and ``_id`` stored last), and
the official Node.js driver through an application's calls (CRUD, a unique index's duplicate
key, bulk writes and a client bulk write, transactions committed and aborted, a cursor over several batches). Each
expected value is what a MongoDB replica set returns for the same calls on a fresh set."""
import pathlib

import pytest

from singlemongo.testing.deployments import SERVER_VERSION
from tools.mongosh import Serve, run_node, run_script

HERE = pathlib.Path(__file__).parent
VERSION = ".".join(map(str, SERVER_VERSION))  # the version the simulator answers as
SHELL = {
    "db.version()": VERSION, "rs.status()": "rs", "rs.conf()": "rs", "rs.hello()": "rs",
    "db.hello()": True, "db.serverStatus()": 1, "db.stats()": 1, "show dbs": 1,
    "db.getCollectionNames()": 0, "insertOne, _id last": "_id,a", "insertMany": True,
    "find().toArray()": 3, "findOne": 2, "countDocuments": 3, "estimatedDocumentCount": 3,
    "updateOne": 1, "deleteOne": 1, "aggregate": 2, "createIndex": "a_1", "getIndexes": 2,
    "explain": "object", "db.t.stats()": 1, "db.currentOp()": 1, "db.hostInfo()": "object",
    "connectionStatus": 0, "listCommands": True, "getLog": 0,
    "db.killOp()": "attempting to kill op", "db.getUsers()": 0, "db.getLogComponents()": 0,
    "db.printReplicationInfo()": True, "rs.printSecondaryReplicationInfo()": True,
    "db.serverBuildInfo()": VERSION,
    "db.getProfilingStatus()": 0, "db.t.drop()": True,
}

NODE = {
    "connect": True, "ping": 1, "insertOne, _id last": "_id,a", "insertMany": 2,
    "find().toArray()": 3, "findOne projection": '{"a":2}', "updateOne": 1, "upsert": 1,
    "findOneAndUpdate": 13, "deleteOne": 1, "countDocuments": 3, "estimatedDocumentCount": 3,
    "distinct": 3, "aggregate": 3, "createIndex": "a_1", "duplicate key": 11000,
    "bulkWrite": "1,1,1", "client bulkWrite": "2,1,1,2", "transaction commit": 2, "transaction abort": 0,
    "cursor batches": 250, "listCollections": "items,many", "drop": True, "close": True,
}

# battery -> (how its script runs, the script, the expected value of each call)
BATTERIES = {"mongosh": (run_script, HERE / "everyday.js", SHELL),
             "nodejs": (run_node, HERE / "nodejs_battery.js", NODE)}
_results = {}


def results_of(battery):
    """The battery's outcomes, run once per test run on a fresh ``singlemongo serve``."""
    if battery not in _results:
        run, script, _ = BATTERIES[battery]
        with Serve("replicaset") as serve:
            _results[battery] = run(serve.uri, script)
    return _results[battery]


@pytest.mark.parametrize("battery, call", [(battery, call) for battery, (_, _, expected)
                                           in BATTERIES.items() for call in expected])
def test_client_call(battery, call):
    """The call succeeds and returns what a MongoDB replica set returns."""
    outcome = results_of(battery)[call]
    assert outcome["ok"], outcome["error"]
    assert outcome["value"] == BATTERIES[battery][2][call]


@pytest.mark.parametrize("battery", list(BATTERIES))
def test_every_call_is_checked(battery):
    """The script and the table list the same calls (a call added to one is checked)."""
    assert set(results_of(battery)) == set(BATTERIES[battery][2])
