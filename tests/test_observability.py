"""Command and SDAM events, and the spec's log messages through stdlib logging."""
import logging

import pytest

from singlemongo import errors
from singlemongo.client import MongoClient
from singlemongo.clock import FakeClock
from singlemongo.monitoring.command_monitoring import (CommandFailedEvent, CommandStartedEvent,
                                            CommandSucceededEvent)
from singlemongo.monitoring import sdam_events as m
from singlemongo.testing import LoadBalancer, ReplicaSet, Standalone


def _by_type(events, *types):
    return [e for e in events if isinstance(e, types)]


def test_command_events_pair_up_and_carry_ids():
    with Standalone() as s:
        events = []
        client = MongoClient(s.uri, clock=FakeClock(), event_listeners=[events.append])
        client.test.c.insert_many([{"i": i} for i in range(5)])
        list(client.test.c.find({}, batch_size=2))
        with pytest.raises(errors.OperationFailure):
            client.test.command("nope")
        started = _by_type(events, CommandStartedEvent)
        ended = _by_type(events, CommandSucceededEvent, CommandFailedEvent)
        assert [e.command_name for e in started] == ["insert", "find", "getMore", "getMore", "nope"]
        assert [e.request_id for e in started] == [e.request_id for e in ended]
        assert started[0].command["documents"][0]["i"] == 0  # the document sequence as an array
        # PyMongo's connection_id: the server's (host, port) (issue 18; it was "host:port"
        # and the driver's connection number).
        assert started[0].connection_id == s.servers[0].address
        assert isinstance(ended[-1], CommandFailedEvent) and ended[-1].failure["code"] == 59
        assert all(e.duration >= 0 and e.duration_micros == int(e.duration * 1e6)
                   for e in ended)


def test_sensitive_commands_are_redacted():
    with Standalone(users={"u": "pw"}) as s:
        events = []
        uri = f"mongodb://u:pw@{s.servers[0].address_text}/?authMechanism=SCRAM-SHA-1"
        client = MongoClient(uri, clock=FakeClock(), event_listeners=[events.append])
        client._topology.open()
        client._topology.scan()
        conn = client._topology._connections[s.servers[0].address]
        from singlemongo.monitoring import command_monitoring
        command_monitoring.run(client._topology.events, client._topology.clock, conn, "admin",
                               {"saslStart": 1, "mechanism": "SCRAM-SHA-1", "payload": b"n,,n=u,r=x"})
        started = _by_type(events, CommandStartedEvent)[-1]
        ended = _by_type(events, CommandSucceededEvent, CommandFailedEvent)[-1]
        assert started.command == {}
        assert getattr(ended, "reply", {}) == {} and "payload" not in str(ended)
        beats = _by_type(events, m.ServerHeartbeatSucceededEvent)
        assert beats and all("speculativeAuthenticate" not in e.reply for e in beats)


def test_load_balanced_command_events_have_service_id():
    with LoadBalancer() as lb:
        events = []
        client = MongoClient(lb.uri, clock=FakeClock(), event_listeners=[events.append])
        client.admin.command("ping")
        started = _by_type(events, CommandStartedEvent)[0]
        assert started.service_id == lb.servers[0].process_id


def test_heartbeat_events_per_check():
    with ReplicaSet(3) as rs:
        events = []
        client = MongoClient(rs.uri, clock=FakeClock(), event_listeners=[events.append])
        client.admin.command("ping")
        assert len(_by_type(events, m.ServerHeartbeatStartedEvent)) == 3
        assert len(_by_type(events, m.ServerHeartbeatSucceededEvent)) == 3
        rs.servers[2].stop()
        client._topology.mark_stale("test")
        client._topology.last_scan_end -= 1
        client.admin.command("ping")
        assert len(_by_type(events, m.ServerHeartbeatFailedEvent)) >= 1


def test_selection_and_command_and_topology_logs(caplog):
    caplog.set_level(logging.DEBUG, logger="singlemongo")
    with Standalone() as s:
        client = MongoClient(s.uri, clock=FakeClock())
        client.admin.command("ping")
    messages = [(r.name, r.mongodb["message"]) for r in caplog.records if hasattr(r, "mongodb")]
    assert ("singlemongo.serverSelection", "Server selection started") in messages
    assert ("singlemongo.serverSelection", "Server selection succeeded") in messages
    assert ("singlemongo.command", "Command started") in messages
    assert ("singlemongo.command", "Command succeeded") in messages
    assert ("singlemongo.topology", "Starting topology monitoring") in messages
    assert ("singlemongo.topology", "Server heartbeat succeeded") in messages
    started = next(r for r in caplog.records if getattr(r, "mongodb", {}).get("message") == "Command started")
    assert started.getMessage().startswith('Command "ping" started on database "admin"')
    assert started.mongodb["serverPort"] == s.servers[0].port


def test_waiting_message_is_logged_once_per_operation(caplog):
    caplog.set_level(logging.INFO, logger="singlemongo.serverSelection")
    with ReplicaSet(3) as rs:
        rs.step_down()
        client = MongoClient(rs.uri, clock=FakeClock(), serverSelectionTryOnce=False,
                             serverSelectionTimeoutMS=2000)
        with pytest.raises(errors.ServerSelectionError):
            client.test.c.insert_one({})
    waiting = [r for r in caplog.records
               if getattr(r, "mongodb", {}).get("message") == "Waiting for suitable server to become available"]
    assert len(waiting) == 1 and "remainingTimeMS" in waiting[0].mongodb
    failed = [r for r in caplog.records if getattr(r, "mongodb", {}).get("message") == "Server selection failed"]
    assert failed == []  # debug level is not enabled here


@pytest.mark.parametrize("variable", ["MONGODB_LOG_MAX_DOCUMENT_LENGTH",
                                      "MONGOB_LOG_MAX_DOCUMENT_LENGTH"])
def test_documents_are_truncated(caplog, monkeypatch, variable):
    """The logging spec's variable, and PyMongo's spelling of it (issue 56: programs written
    for PyMongo set MONGOB_LOG_MAX_DOCUMENT_LENGTH, which was not read)."""
    monkeypatch.delenv("MONGODB_LOG_MAX_DOCUMENT_LENGTH", raising=False)
    monkeypatch.setenv(variable, "50")
    caplog.set_level(logging.DEBUG, logger="singlemongo.command")
    with Standalone() as s:
        MongoClient(s.uri, clock=FakeClock()).test.c.insert_one({"x": "y" * 500})
    started = next(r for r in caplog.records if r.mongodb["message"] == "Command started")
    assert len(started.mongodb["command"]) == 53 and started.mongodb["command"].endswith("...")


def test_passwords_never_logged(caplog):
    caplog.set_level(logging.DEBUG, logger="singlemongo")
    with Standalone(users={"u": "hunter2-secret"}) as s:
        client = MongoClient(f"mongodb://u:hunter2-secret@{s.servers[0].address_text}/",
                             clock=FakeClock())
        client.test.c.find_one()
        client.close()
    text = caplog.text + "".join(str(getattr(r, "mongodb", "")) for r in caplog.records)
    assert "hunter2-secret" not in text


@pytest.mark.parametrize("limit", ["20000", "20001", "20002"])
def test_truncation_never_splits_a_character(caplog, monkeypatch, limit):
    """The logging spec's truncation, as PyMongo's own test checks it: a command of
    multi-byte characters cut at the limit ends with a whole character (documents were
    dumped with \\u escapes, so the cut fell inside one: "\\u75" and "...")."""
    monkeypatch.setenv("MONGODB_LOG_MAX_DOCUMENT_LENGTH", limit)
    caplog.set_level(logging.DEBUG, logger="singlemongo.command")
    with Standalone() as s:
        MongoClient(s.uri, clock=FakeClock()).test.c.insert_one({"x": "界" * 50_000})
    started = next(r for r in caplog.records if r.mongodb["message"] == "Command started")
    command = started.mongodb["command"]
    assert len(command) == int(limit) + 3 and command[:-3].encode()[-3:].decode() == "界"
