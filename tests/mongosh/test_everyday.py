"""mongosh's everyday calls against ``singlemongo serve replicaset`` (issue 57: 9 of 30
failed on 2026-12-04): rs.status(), rs.conf(), db.currentOp(), db.hostInfo(), getLog,
killOp, connectionStatus, listCommands and ``_id`` stored first among them. Each expected
value is what MongoDB's reference gives for the call on a fresh three-member set."""
import pathlib

import pytest

from tools.mongosh import Serve, run_script

SCRIPT = pathlib.Path(__file__).with_name("everyday.js")
EXPECTED = {
    "db.version()": "7.0.0", "rs.status()": "rs", "rs.conf()": "rs", "rs.hello()": "rs",
    "db.hello()": True, "db.serverStatus()": 1, "db.stats()": 1, "show dbs": 1,
    "db.getCollectionNames()": 0, "insertOne, _id last": "_id,a", "insertMany": True,
    "find().toArray()": 3, "findOne": 2, "countDocuments": 3, "estimatedDocumentCount": 3,
    "updateOne": 1, "deleteOne": 1, "aggregate": 2, "createIndex": "a_1", "getIndexes": 2,
    "explain": "object", "db.t.stats()": 1, "db.currentOp()": 1, "db.hostInfo()": "object",
    "connectionStatus": 0, "listCommands": True, "getLog": 0,
    "db.killOp()": "attempting to kill op", "db.getUsers()": 0, "db.getLogComponents()": 0,
    "db.printReplicationInfo()": True, "rs.printSecondaryReplicationInfo()": True,
    "db.serverBuildInfo()": "7.0.0",
    "db.getProfilingStatus()": 0, "db.t.drop()": True,
}


@pytest.fixture(scope="module")
def results():
    with Serve("replicaset") as serve:
        return run_script(serve.uri, SCRIPT)


@pytest.mark.parametrize("call", list(EXPECTED))
def test_everyday_call(results, call):
    """The call succeeds and returns what a MongoDB replica set returns."""
    outcome = results[call]
    assert outcome["ok"], outcome["error"]
    assert outcome["value"] == EXPECTED[call]


def test_every_call_is_checked(results):
    """The script and the table list the same calls (a call added to one is checked)."""
    assert set(results) == set(EXPECTED)
