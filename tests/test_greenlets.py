"""Greenlets under gevent's monkey-patching (issue 58): a program may run many greenlets on
one thread, and a client runs one operation at a time on one socket per server. Each
scenario runs in a process of its own (monkey-patching is for a whole process), against a
simulated server in this one."""
import json
import subprocess
import sys

import pytest

from singlemongo.testing import Standalone

pytest.importorskip("gevent", reason="gevent is not installed (the test extra installs it)")

SHARED_CLIENT = """
from gevent import monkey; monkey.patch_all()
import json, sys
import gevent
import singlemongo
client = singlemongo.MongoClient(sys.argv[1], serverSelectionTimeoutMS=3000)
client.admin.command("ping")
results = {}

def run(name, delay, query):
    gevent.sleep(delay)
    try:
        results[name] = client.app.c.find_one(query)["_id"]
    except Exception as exc:
        results[name] = f"{type(exc).__name__}: {exc}"

gevent.joinall([gevent.spawn(run, "slow", 0, {"$where": "function() { sleep(500); return true; }"}),
                gevent.spawn(run, "quick", 0.1, {})], timeout=10)
results["after"] = client.app.c.find_one({})["_id"]  # the socket is still in step
print(json.dumps(results))
"""


def test_a_client_shared_by_greenlets_refuses_the_second_at_once():
    """Rule: a client used from a second greenlet while an operation is in flight raises a
    clear error at once, naming the fix, and never corrupts a socket. The guard was a
    _thread.RLock, reentrant for every greenlet of the thread: two greenlets' commands went
    out on one socket and their replies crossed (355 of 376 requests failed under a gevent
    worker, with ProtocolError and AutoReconnect)."""
    with Standalone() as deployment:
        deployment.store.seed("app", "c", [{"_id": 1}])
        out = subprocess.run([sys.executable, "-c", SHARED_CLIENT, deployment.uri],
                             capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    results = json.loads(out.stdout.strip().splitlines()[-1])
    assert results["slow"] == 1 and results["after"] == 1, results
    assert results["quick"].startswith("InvalidOperation: ") and "greenlet" in \
        results["quick"] and "get_client" in results["quick"], results
