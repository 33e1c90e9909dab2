"""Bounded resources, an exit that never hangs, and secrets that never leak."""
import gc
import logging
import os
import subprocess
import sys
import time
import tracemalloc

import pytest

from singlemongo import SingleMongoWarning, errors
from singlemongo.client import MongoClient
from singlemongo.clock import FakeClock
from singlemongo.testing import ReplicaSet, Standalone


def _fds():
    return len(os.listdir("/proc/self/fd"))


def _traced_after_collect(server):
    server.command_log.clear()  # the simulator (test support) keeps every command it saw
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def _failing_ops(client, server, clock, refused, reset, timed_out):
    server.stop()
    for _ in range(refused):
        clock.advance(5)  # past the cooldown, so each one really tries to connect
        with pytest.raises(errors.ServerSelectionError):
            client.admin.command("ping")
    server.start()
    clock.advance(5)
    server.fail("ping", action="reset", times=reset)
    for _ in range(reset):
        clock.advance(0.6)
        with pytest.raises(errors.SingleMongoError):
            client.admin.command("ping")
    server.fail("ping", action="hang", times=timed_out)
    for _ in range(timed_out):
        clock.advance(0.6)
        with pytest.raises(errors.SingleMongoError):
            client.admin.command("ping")


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")
def test_ten_thousand_failing_operations_leave_nothing_behind():
    with Standalone() as s:
        clock = FakeClock()
        client = MongoClient(s.uri, clock=clock, socketTimeoutMS=5)
        tracemalloc.start()
        _failing_ops(client, s.servers[0], clock, 300, 20, 5)  # fill the bounded check history
        fds, before = _fds(), _traced_after_collect(s.servers[0])
        _failing_ops(client, s.servers[0], clock, 9_000, 900, 100)
        growth = _traced_after_collect(s.servers[0]) - before
        tracemalloc.stop()
        assert _fds() <= fds
        assert growth < 100_000, f"10,000 failed operations kept {growth} more bytes"
        clock.advance(5)
        assert client.admin.command("ping")["ok"] == 1
        client.close()


EXIT_SCRIPT = """
import sys
from singlemongo import MongoClient
client = MongoClient(sys.argv[1], connectTimeoutMS=2000, socketTimeoutMS=2000)
client.test.c.insert_one({"x": 1})
print("ready", flush=True)
sys.stdin.readline()
if sys.argv[2] == "close":
    client.close()
"""


@pytest.mark.parametrize("state", ["up", "down", "hanging"])
@pytest.mark.parametrize("ending", ["close", "no-close"])
def test_interpreter_exit_never_hangs(state, ending):
    with ReplicaSet(3) as rs:
        proc = subprocess.Popen([sys.executable, "-c", EXIT_SCRIPT, rs.uri, ending],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        if state == "down":
            for server in rs.servers:
                server.stop()
        elif state == "hanging":
            for server in rs.servers:
                server.fail("*", action="hang", times=None)
        started = time.perf_counter()
        proc.stdin.write("\n")
        proc.stdin.flush()
        assert proc.wait(timeout=30) == 0
        assert time.perf_counter() - started < 10  # bounded by connectTimeoutMS, not hung


def test_secrets_never_appear_anywhere(caplog):
    caplog.set_level(logging.DEBUG, logger="singlemongo")
    password = "Sup3r-Secret-Pw"
    captured = []
    with ReplicaSet(3, users={"alice": password}) as rs:
        hosts = ",".join(s.address_text for s in rs.servers)
        for pw, mechanism in ((password, "SCRAM-SHA-256"), ("wrong-" + password, "SCRAM-SHA-1"),
                              (password, "SCRAM-SHA-1")):
            events = []
            uri = f"mongodb://alice:{pw}@{hosts}/?replicaSet=rs&authMechanism={mechanism}"
            client = MongoClient(uri, clock=FakeClock(), event_listeners=[events.append])
            captured += [repr(client), str(client.options), repr(client.options.credentials)]
            try:
                client.test.c.insert_one({"ok": 1})
                client.test.c.find_one()
            except errors.SingleMongoError as exc:
                captured += [str(exc), repr(exc), repr(getattr(exc, "details", ""))]
            client.close()
            captured += [repr(e) for e in events]
        payloads = [bytes(c["payload"]) for s in rs.servers for c in s.command_log
                    if "payload" in c and c["payload"]]
        payloads += [bytes(c["speculativeAuthenticate"]["payload"]) for s in rs.servers
                     for c in s.command_log if "speculativeAuthenticate" in c]
    text = "\n".join(captured) + caplog.text + "".join(
        str(getattr(r, "mongodb", "")) for r in caplog.records)
    assert password not in text
    proofs = [p.decode().rpartition("p=")[2] for p in payloads if b"p=" in p]
    assert proofs and not any(proof in text for proof in proofs)
    assert not any(p.decode() in text for p in payloads)


def test_weakened_tls_warns():
    with pytest.warns(SingleMongoWarning, match="tlsInsecure"):
        MongoClient("mongodb://h/?tls=true&tlsInsecure=true")
    with pytest.warns(SingleMongoWarning, match="tlsAllowInvalidHostnames"):
        MongoClient("mongodb://h/?tls=true&tlsAllowInvalidHostnames=true")
