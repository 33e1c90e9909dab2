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

GET_CLIENT_PER_REQUEST = """
from gevent import monkey; monkey.patch_all()
import json, sys
import gevent
import singlemongo
clients = {}

def request():
    client = singlemongo.get_client(sys.argv[1], serverSelectionTimeoutMS=3000)
    clients[id(client)] = client
    assert client.app.c.find_one({"$where": "function() { sleep(20); return true; }"})["_id"] == 1

finished = []  # kept, as a server's bookkeeping may keep them (no id is reused)
for _ in range(20):  # 200 requests, 10 at a time, as a gevent worker serves them
    batch = [gevent.spawn(request) for _ in range(10)]
    gevent.joinall(batch, raise_error=True)
    finished.extend(batch)
singlemongo.client_cache.clear()  # a worker shutting down closes what it lent
print(json.dumps({"clients": len(clients),
                  "closed": all(c._closed for c in clients.values())}))
"""


def test_get_client_in_greenlets_reuses_the_clients_of_ended_ones():
    """Rule: under gevent, get_client() lends each request's greenlet a client and takes it
    back when the greenlet ends, so clients and sockets stay bounded by the requests in
    flight (issue 58). It kept one client per greenlet for ever: 1,014 sockets per gevent
    worker, then ServerSelectionTimeoutError at the open-file limit."""
    with Standalone() as deployment:
        deployment.store.seed("app", "c", [{"_id": 1}])
        out = subprocess.run([sys.executable, "-c", GET_CLIENT_PER_REQUEST, deployment.uri],
                             capture_output=True, text=True, timeout=120)
        connections = deployment.servers[0].connections
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    clients = result["clients"]
    assert clients <= 10, f"{clients} clients for 10 greenlets at a time"
    assert result["closed"], "clear() left a lent or idle client open"
    assert connections <= 10, f"{connections} connections for 10 greenlets at a time"
