"""Seed rules on the last failure paths (issue 19): every heartbeat that fails has started,
an operation's selection carries its command's name and operationId, overload retries for
every command, a sharded transaction's commit stays on its mongos, and selection errors say
what happened. Each test failed on the code before the fix; its docstring names the rule."""
import logging
import uuid

import pytest
from bson import Binary, Int64

from singlemongo import errors
from singlemongo.client import MongoClient
from singlemongo.monitoring import sdam_events as m

from .util import selection_records

OVERLOAD = ("SystemOverloadedError", "RetryableError")


def test_a_write_selects_once_under_its_own_name_and_operation_id(mongo_standalone, fake_clock,
                                                                 caplog):
    """Server selection, "Logging": the operation is the command's name, with its operationId.
    Before, insert_one first selected a server for a lookup of its limits, logged as operation
    "limits" with no operationId; now the size check uses the connection the insert gets."""
    events = []
    client = MongoClient(mongo_standalone.uri, clock=fake_clock, event_listeners=[events.append])
    records = selection_records(caplog, lambda: client.test.c.insert_one({"x": 1}))
    started = [r for r in records if r["message"] == "Server selection started"]
    assert [r["operation"] for r in started] == ["insert"]
    command = next(e for e in events if type(e).__name__ == "CommandStartedEvent"
                   and e.command_name == "insert")
    assert started[0]["operationId"] == command.operation_id
    client.close()


def test_a_bulk_write_shares_one_operation_id(mongo_standalone, fake_clock, caplog):
    """The same rule for a bulk write cut into batches by maxWriteBatchSize: one selection per
    command, all under the bulk's one operationId (as PyMongo's bulk)."""
    mongo_standalone.servers[0].limits = {"maxWriteBatchSize": 2}
    client = MongoClient(mongo_standalone.uri, clock=fake_clock)
    records = selection_records(
        caplog, lambda: client.test.c.insert_many([{"i": i} for i in range(5)]))
    started = [r for r in records if r["message"] == "Server selection started"]
    assert [r["operation"] for r in started] == ["insert"] * 3
    assert len({r["operationId"] for r in started}) == 1
    assert mongo_standalone.servers[0].commands["insert"] == 3
    client.close()


@pytest.mark.parametrize("level", ["collection", "client"])
def test_an_unacknowledged_bulk_write_shares_one_operation_id(mongo_standalone, fake_clock,
                                                             level):
    """Command monitoring, "operationId": a bulk write's commands share one, w: 0 included
    (PyMongo's test_15_unacknowledged_write_across_batches). Before, each unacknowledged
    command was published with an operationId of its own."""
    from singlemongo import InsertOne, WriteConcern
    mongo_standalone.servers[0].limits = {"maxWriteBatchSize": 2}
    events = []
    client = MongoClient(mongo_standalone.uri, clock=fake_clock, event_listeners=[events.append])
    if level == "collection":
        client.test.get_collection("unack", write_concern=WriteConcern(w=0)).insert_many(
            [{"i": i} for i in range(5)], ordered=False)
    else:
        client.bulk_write([InsertOne({"i": i}, namespace="test.unack") for i in range(5)],
                          ordered=False, write_concern=WriteConcern(w=0))
    started = [e for e in events if type(e).__name__ == "CommandStartedEvent"
               and e.command_name in ("insert", "bulkWrite")]
    assert len(started) == 3
    assert len({e.operation_id for e in started}) == 1
    client.test.drop_collection("unack")
    client.close()


def test_a_too_large_document_ends_the_bulk_where_it_stands(mongo_standalone, fake_clock):
    """The size check runs on the connection the command gets: the documents before one over
    maxBsonObjectSize are sent in their own command (PyMongo's batching, which leaves it to
    the server), then DocumentTooLarge; nothing after it is sent. Before, the whole bulk was
    refused before anything was sent only because the limits were looked up first."""
    server = mongo_standalone.servers[0]
    server.limits = {"maxBsonObjectSize": 1000}
    client = MongoClient(mongo_standalone.uri, clock=fake_clock)
    with pytest.raises(errors.DocumentTooLarge, match="up to 1000 bytes"):
        client.test.c.insert_many([{"i": 1}, {"i": 2, "s": "x" * 2000}, {"i": 3}])
    assert sorted(d["i"] for d in client.test.c.find()) == [1]
    assert server.commands["insert"] == 1
    client.close()


def _heartbeats(events):
    return [(type(e).__name__, e.connection_id) for e in events
            if isinstance(e, (m.ServerHeartbeatStartedEvent, m.ServerHeartbeatSucceededEvent,
                              m.ServerHeartbeatFailedEvent))]


def _every_started_ends_once(heartbeats):
    open_checks = set()
    for name, address in heartbeats:
        if name == "ServerHeartbeatStartedEvent":
            assert address not in open_checks, f"two Started for {address}"
            open_checks.add(address)
        else:
            assert address in open_checks, f"{name} for {address} without a Started"
            open_checks.discard(address)
    assert not open_checks


@pytest.mark.parametrize("server_state", ["down", "up"])
def test_an_application_connections_handshake_is_a_whole_heartbeat(mongo_standalone, server_state):
    """SDAM monitoring: no ServerHeartbeatFailedEvent without its ServerHeartbeatStartedEvent,
    and every Started ends once. A new application connection's handshake counts as a check
    (the connection was lost since the last scan). Before, its failure published Failed with
    no Started."""
    from singlemongo.clock import Clock
    server = mongo_standalone.servers[0]
    events = []
    client = MongoClient(mongo_standalone.uri, clock=Clock(), socketTimeoutMS=100, retryReads=False,
                         serverSelectionTimeoutMS=300, event_listeners=[events.append])
    client.test.c.insert_one({"x": 1})
    server.fail("find", action="hang")
    with pytest.raises(errors.NetworkTimeout):
        client.test.c.find_one()  # the timed-out connection is closed; the server stays known
    if server_state == "down":
        server.stop()
        with pytest.raises(errors.PyMongoError):
            client.test.c.find_one()
    else:
        assert client.test.c.find_one()["x"] == 1
    _every_started_ends_once(_heartbeats(events))
    client.close()


# ----- sharded transactions -------------------------------------------------------------------

def _commits_by_mongos(sharded):
    return [s.commands["commitTransaction"] for s in sharded.servers]


@pytest.mark.parametrize("failure", ["overload", "network"])
def test_a_commit_retry_stays_on_the_transactions_mongos(mongo_sharded, fake_clock, failure):
    """Server Selection, "Sharded Transactions": every command after the first goes to the
    original mongos, commit retries included (the seed wins, DESIGN.md). Before, an
    overloaded or lost commitTransaction was unpinned and retried on another mongos."""
    sharded = mongo_sharded
    client = MongoClient(sharded.uri, clock=fake_clock, localThresholdMS=1000)
    client.app.c.insert_one({"_id": 0})
    with client.start_session() as session:
        session.start_transaction()
        client.app.c.insert_one({"_id": 1}, session=session)
        pinned = next(s for s in sharded.servers
                      if s.address == tuple(session._transaction.pinned))
        if failure == "overload":
            pinned.fail("commitTransaction", code=462, labels=OVERLOAD, times=2)
        else:
            pinned.fail("commitTransaction", action="run-then-close", times=1)
        session.commit_transaction()
        assert pinned.commands["commitTransaction"] == sum(_commits_by_mongos(sharded))
        assert sum(_commits_by_mongos(sharded)) == (3 if failure == "overload" else 2)
    assert client.app.c.find_one({"_id": 1}) == {"_id": 1}
    client.close()


def _raw(server, db, cmd):
    """One command on a fresh socket, the lsid as given (a client would send its own)."""
    import socket

    from singlemongo.clock import DEFAULT_CLOCK, Deadline
    from singlemongo.engine.connection import Connection
    conn = Connection(server.address, socket.create_connection(server.address, 5), 0, 0.0,
                      DEFAULT_CLOCK)
    try:
        return conn.command(db, cmd, Deadline(DEFAULT_CLOCK, 5.0))
    finally:
        conn.close()


def _raw_commit(server, lsid, token):
    cmd = {"commitTransaction": 1, "lsid": lsid, "txnNumber": Int64(1), "autocommit": False}
    if token is not None:
        cmd["recoveryToken"] = token
    return _raw(server, "admin", cmd)


def test_the_simulated_mongos_honours_a_recovery_token(mongo_sharded):
    """The simulated mongos does what a real one does with a commit for a transaction another
    mongos started: with a recoveryToken it learns the transaction's fate (a committed one
    commits again, ok; an open one is NoSuchTransaction and stays open); without a token it
    knows nothing of it. Before, any commit there aborted the transaction."""
    first, second = mongo_sharded.servers
    lsid = {"id": Binary(uuid.uuid4().bytes, 4)}
    token = {"recoveryShardId": "shard0"}
    assert _raw(first, "app", {"insert": "c", "documents": [{"_id": 1}], "lsid": lsid,
                               "txnNumber": Int64(1), "startTransaction": True,
                               "autocommit": False})["ok"] == 1
    assert _raw_commit(second, lsid, None)["codeName"] == "NoSuchTransaction"
    assert _raw_commit(second, lsid, token)["codeName"] == "NoSuchTransaction"
    assert _raw_commit(first, lsid, token)["ok"] == 1  # it stayed open
    assert _raw(first, "app", {"find": "c", "filter": {}})["cursor"]["firstBatch"] == [
        {"_id": 1}]
    assert _raw_commit(second, lsid, token)["ok"] == 1  # committed: the shard knows
    assert _raw_commit(second, lsid, None)["codeName"] == "NoSuchTransaction"


# ----- selection errors say what happened ----------------------------------------------------

def test_a_selection_that_ran_no_scan_says_so(mongo_replica_set, fake_clock):
    """With serverSelectionTryOnce and a timeoutMS too short for the next scan (at most one
    every minHeartbeatFrequencyMS), selection picks from what is known; the error says no
    scan ran. Before, it said "gave up after one scan"."""
    rs = mongo_replica_set
    client = MongoClient(rs.uri, clock=fake_clock, timeoutMS=100, retryWrites=False)
    client.admin.command("ping")
    rs.step_down()
    with pytest.raises(errors.NotPrimaryError):  # the topology is stale 0 ms after a scan
        client.test.c.insert_one({"x": 1})
    with pytest.raises(errors.PyMongoError) as info:
        client.test.c.insert_one({"x": 1})
    text = str(info.value)
    assert "no scan ran" in text and "gave up after one scan" not in text
    client.close()


def test_a_server_in_cooldown_is_reported_as_such(mongo_standalone, fake_clock):
    """A server skipped for its cooldown (cooldownMS after a failed check) is reported "in
    cooldown until ... (last error ...)", with a hint to match. Before, the error read as if
    it had just refused a connection: "check that mongod is running"."""
    server = mongo_standalone.servers[0]
    client = MongoClient(mongo_standalone.uri, clock=fake_clock)
    client.admin.command("ping")
    server.stop()
    for _ in range(2):  # the lost connection, then the failed check that starts the cooldown
        with pytest.raises(errors.PyMongoError):
            client.admin.command("ping")
    server.start()
    fake_clock.advance(1)
    with pytest.raises(errors.ServerSelectionError) as info:
        client.admin.command("ping")
    text = str(info.value)
    assert "in cooldown until" in text and "last error" in text
    assert "check that mongod is running" not in text
    client.close()
