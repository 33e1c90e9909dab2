"""Seven edges of the specifications where the driver departed from them, and the handshake's
metadata limit. Each test failed on the code before its fix; its docstring names the rule."""
import logging

import pymongo
import pytest

from singlemongo import errors
from singlemongo.client import MongoClient
from singlemongo.clock import FakeClock
from singlemongo.driver_info import DriverInfo
from singlemongo.engine.handshake import METADATA_LIMIT, client_metadata
from singlemongo.monitoring import PoolCreatedEvent, PoolReadyEvent
from singlemongo.testing import Sharded

from .util import selection_records

HELLOS = ("hello", "isMaster", "ismaster")
OVERLOAD = dict(code=462, errmsg="Rate limiter 'ingressRequestRateLimiter' rate exceeded",
                labels=("SystemOverloadedError", "RetryableError"))


def test_a_server_that_became_unavailable_has_its_average_rtt_cleared(mongo_standalone):
    """SDAM, "roundTripTime": when a server becomes Unknown its average RTT is cleared. A
    failed check retried at once used to fold the old 250 ms into the new average
    (212.5 ms for a 62.5 ms sample)."""
    server = mongo_standalone.servers[0]
    server.latency_s = 0.25
    client = MongoClient(mongo_standalone.uri)
    client.admin.command("ping")
    topology = client._topology
    assert topology.description.servers[server.address].round_trip_time >= 0.2
    server.latency_s = 0.0
    server.fail("*", action="close", times=1, commands=HELLOS)
    checked = topology.check_server(server.address)  # fails, then the retry at once succeeds
    assert checked.round_trip_time is not None and checked.round_trip_time < 0.1
    client.close()


def test_when_the_reselected_servers_idle_ping_fails_too_it_is_connected_to_anew(
        mongo_standalone, fake_clock):
    """Server selection, "Checking an Idle Socket": the server whose ping failed is Unknown,
    selection runs once more, and only finding no server is an error. Before, a second
    failed ping raised "failed its connection check twice"."""
    server = mongo_standalone.servers[0]
    # 0: every use is checked, the reselection's fresh connection too
    client = MongoClient(mongo_standalone.uri, clock=fake_clock, socketCheckIntervalMS=0)
    client.test.c.insert_one({"_id": 1})
    server.fail("ping", action="close", times=2)
    client_connections = server.connections
    assert client.test.c.find_one() == {"_id": 1}
    assert server.connections > client_connections
    client.close()


def test_waiting_for_a_server_is_logged_once_per_operation(mongo_replica_set, fake_clock,
                                                           caplog):
    """Server selection, "Logging": "Waiting for suitable server to become available" is
    logged "if one has not already been logged for this operation". A retried operation
    selects twice under one operationId, and each selection logged it. Here two selections
    of one operation (and then of another) find no member with the tag asked for."""
    from singlemongo.engine.selection_loop import select_server
    from singlemongo.selection import READ, Criteria, ReadPreference
    client = MongoClient(mongo_replica_set.uri, clock=fake_clock, serverSelectionTryOnce=False,
                         serverSelectionTimeoutMS=600)
    client.admin.command("ping")
    criteria = Criteria(READ, ReadPreference("secondary", ({"dc": "nowhere"},)))

    def select_twice(operation_id):
        for _ in range(2):  # an attempt, then its retry
            with pytest.raises(errors.ServerSelectionTimeoutError):
                select_server(client._topology, criteria, (), "find", operation_id)
    records = selection_records(caplog, lambda: (select_twice(7), select_twice(8)))
    waiting = [r["operationId"] for r in records
               if r["message"] == "Waiting for suitable server to become available"]
    assert waiting == [7, 8]
    client.close()


@pytest.mark.parametrize("hosts", ["127.0.0.1:27017,127.0.0.1:27017", "localhost,localhost:27017",
                                   "localhost:27017,localhost"])
def test_load_balanced_refuses_a_host_given_twice_as_pymongo(hosts):
    """Load balancer spec: loadBalanced=true takes exactly one host. Hosts were de-duplicated
    before the check, so the same host twice was taken; PyMongo refuses all three."""
    uri = f"mongodb://{hosts}/?loadBalanced=true"
    with pytest.raises(pymongo.errors.ConfigurationError):
        pymongo.MongoClient(uri, connect=False)
    with pytest.raises(errors.ConfigurationError, match="exactly one host"):
        MongoClient(uri)


def test_load_balanced_pools_are_created_then_ready(mongo_load_balanced):
    """Load balancer spec and CMAP: a pool is created, then (at once) ready. PoolReadyEvent
    was published before PoolCreatedEvent for the same address."""
    events = []

    class PoolListener:
        def pool_created(self, event):
            events.append(event)

        def pool_ready(self, event):
            events.append(event)

        def __getattr__(self, name):
            return lambda event: None

    from singlemongo import monitoring
    listener = type("L", (PoolListener, monitoring.ConnectionPoolListener), {})()
    with MongoClient(mongo_load_balanced.uri, event_listeners=[listener]) as client:
        client.admin.command("ping")
    kinds = [type(e) for e in events if isinstance(e, (PoolCreatedEvent, PoolReadyEvent))]
    assert kinds[:2] == [PoolCreatedEvent, PoolReadyEvent]


def test_an_overload_on_sasl_continue_deprioritizes_the_mongos(authenticated_deployments):
    """Client backpressure, rule 6: an overloaded server is deprioritized for the retry,
    whatever command said so. An overload on saslContinue sent the retry back to the same
    mongos, where the same error on find did not."""
    sh = authenticated_deployments("sharded", {"alice": "pw"})
    uri = sh.uri.replace("mongodb://", "mongodb://alice:pw@", 1)
    clock = FakeClock(jitter=0.5)
    client = MongoClient(uri, clock=clock)
    client.admin.command("ping")
    for server in sh.servers:
        client._topology.close_connection(server.address)  # the next use authenticates anew
    used = next(s for s in sh.servers if s.commands.get("saslContinue"))
    other = next(s for s in sh.servers if s is not used)
    used.fail("saslContinue", times=1, **OVERLOAD)  # the mongos the same selection picks
    sasl = used.commands["saslContinue"]
    finds = (used.commands.get("find", 0), other.commands.get("find", 0))
    client.test.c.find_one()
    assert used.commands["saslContinue"] > sasl  # it was tried, and overloaded
    assert (used.commands.get("find", 0), other.commands.get("find", 0)) == (
        finds[0], finds[1] + 1)
    assert clock.sleeps[-1:] == [0.05]  # one overload backoff, then the other mongos
    client.close()


def test_client_metadata_fits_512_bytes_whatever_wrapping_libraries_add():
    """Handshake spec, "Limitations": the client document is at most 512 bytes; env fields
    but its name go first, then os fields but its type, then env, then platform is
    truncated, then what wrapping libraries appended. With driver_info it reached 3,164
    bytes."""
    infos = [DriverInfo("library-" + "x" * 300, "9.9." + "9" * 300, "platform-" + "p" * 300)]
    doc = client_metadata(appname="app", drivers=tuple(infos))
    import bson
    assert len(bson.encode(doc)) <= METADATA_LIMIT
    assert doc["driver"]["name"].startswith("singlemongo|library-")
    assert doc["os"] == {"type": doc["os"]["type"]} and "env" not in doc
    assert doc["application"] == {"name": "app"}


def test_metadata_is_trimmed_in_the_specs_order_and_no_further(monkeypatch):
    """Only as much as needed, in order: an env with large fields besides its name loses
    them first, and then the document fits: env.name and the whole os document stay (the
    container field alone was dropped, then all of os, then env)."""
    from singlemongo.engine import handshake as check
    monkeypatch.setattr(check, "_env", lambda: {"name": "aws.lambda", "region": "r" * 300,
                                                "container": {"runtime": "docker"}})
    monkeypatch.setattr(check, "_metadata_cache", {})
    doc = client_metadata(appname="trim-order")
    assert doc["env"] == {"name": "aws.lambda"}
    assert set(doc["os"]) == {"type", "name", "architecture", "version"}
