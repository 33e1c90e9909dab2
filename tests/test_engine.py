"""The engine on real sockets against the simulated deployment."""
import threading
import time

import freezegun
import pytest

from singlemongo import errors
from singlemongo.client import MongoClient
from singlemongo.clock import FakeClock
from singlemongo.sdam import ServerType, TopologyType
from singlemongo.monitoring import sdam_events as m
from singlemongo.testing import FakeResolver, LoadBalancer, ReplicaSet, Sharded, Standalone
from singlemongo.engine.checkout import LB_NO_SERVICE_ID


def _driver_threads():
    # The simulated servers run threads of their own ("sim-<port>"); the driver never does.
    return {t for t in threading.enumerate() if not t.name.startswith("sim-")}


def test_no_thread_is_ever_started():
    with ReplicaSet(3) as rs:
        before = _driver_threads()
        clock = FakeClock()
        client = MongoClient(rs.uri, clock=clock)
        client.admin.command("ping")
        rs.step_down()
        rs.elect(1)
        with pytest.raises(errors.NotPrimaryError):  # an AutoReconnect, as in PyMongo
            client.admin.command({"insert": "c", "documents": [{}]})
        rs.servers[2].stop()
        clock.advance(61)
        client.admin.command("ping")
        client.close()
        assert _driver_threads() - before == set()  # (a PyMongo thread of another test may end)


def test_constructor_does_no_io():
    resolver = FakeResolver(srv={"_mongodb._tcp.x.example.com": [("a.example.com", 1)]})
    with Standalone() as s:
        client = MongoClient(s.uri)
        MongoClient("mongodb+srv://x.example.com", resolver=resolver)  # no I/O either
        assert s.total_connections() == 0 and resolver.queries == []
        td = client.topology_description  # readable without I/O
        assert td.topology_type is TopologyType.UNKNOWN
        assert s.total_connections() == 0


def test_default_clock_under_freezegun_does_not_hang():
    with ReplicaSet(3) as rs:
        rs.step_down()
        with freezegun.freeze_time("2026-01-01"):
            client = MongoClient(rs.uri, serverSelectionTryOnce=False,
                                 serverSelectionTimeoutMS=1000)
            started = time.perf_counter()
            with pytest.raises(errors.ServerSelectionError, match="of serverSelectionTimeoutMS 1000"):
                client.admin.command({"insert": "c", "documents": [{}]})
            # Frozen time never moves: the loop ends on its count of sleeps, not the clock.
            assert time.perf_counter() - started < 10


def test_handshake_and_later_checks():
    with Standalone() as s:
        clock = FakeClock()
        client = MongoClient(s.uri, clock=clock, appname="myapp")
        client.admin.command("ping")
        first = s.servers[0].command_log[0]
        # PyMongo's spelling of the legacy hello (mockupdb answers "ismaster" only).
        assert "ismaster" in first and first["helloOk"] is True and first["backpressure"] is True
        assert first["client"]["driver"]["name"] == "singlemongo"
        assert first["client"]["application"] == {"name": "myapp"}
        assert "loadBalanced" not in first
        clock.advance(60)
        client.admin.command("ping")
        later = [c for c in s.servers[0].command_log if "hello" in c]
        assert later and "client" not in later[0]


def test_load_balanced_events_and_no_scanning():
    with LoadBalancer() as lb:
        events = []
        client = MongoClient(lb.uri, event_listeners=[events.append])
        client.admin.command("ping")
        client.admin.command("ping")
        sdam = lambda: [e for e in events if type(e).__module__ == m.__name__]
        names = [type(e).__name__ for e in sdam()]
        assert names == ["TopologyOpenedEvent", "TopologyDescriptionChangedEvent",
                         "ServerOpeningEvent", "ServerDescriptionChangedEvent",
                         "TopologyDescriptionChangedEvent"]
        assert sdam()[3].new_description.server_type is ServerType.LOAD_BALANCER
        handshake = lb.servers[0].command_log[0]
        assert handshake["loadBalanced"] is True
        assert lb.servers[0].connections == 1
        client.close()
        # Load balancer spec, "Monitoring": ServerClosedEvent then TopologyClosedEvent only.
        assert [type(e).__name__ for e in sdam()[5:]] == ["ServerClosedEvent",
                                                          "TopologyClosedEvent"]


def test_load_balancer_without_service_id():
    with LoadBalancer(service_id=False) as lb:
        client = MongoClient(lb.uri)
        with pytest.raises(errors.ConfigurationError) as info:
            client.admin.command("ping")
        assert str(info.value) == LB_NO_SERVICE_ID


def test_read_preference_reaches_secondary_with_document():
    with ReplicaSet(3) as rs:
        client = MongoClient(rs.uri, clock=FakeClock())
        client.admin.command("ping", read_preference="secondary")
        sent = [c for s in rs.servers[1:] for c in s.command_log if "ping" in c]
        assert len(sent) == 1 and sent[0]["$readPreference"] == {"mode": "secondary"}
        assert rs.servers[0].commands["ping"] == 0


def test_direct_connection_to_secondary_reads_with_primary_preferred():
    with ReplicaSet(3) as rs:
        uri = f"mongodb://{rs.servers[1].address_text}/?directConnection=true"
        client = MongoClient(uri, clock=FakeClock())
        client.admin.command("ping", read_preference="primary")
        sent = [c for c in rs.servers[1].command_log if "ping" in c]
        assert sent[0]["$readPreference"] == {"mode": "primaryPreferred"}
        assert client.topology_description.topology_type is TopologyType.SINGLE
        assert rs.total_connections() == 1


def test_timeout_after_handshake_does_not_mark_unknown():
    with Standalone() as s:
        client = MongoClient(s.uri, socketTimeoutMS=200, clock=FakeClock())
        client.admin.command("ping")
        s.servers[0].fail("ping", action="hang")
        with pytest.raises(errors.NetworkTimeout):
            client.admin.command("ping")
        assert client.topology_description.servers[s.servers[0].address].server_type \
            is ServerType.STANDALONE
        client.admin.command("ping")  # a new connection; the hung one was closed
        assert s.servers[0].connections == 2


def test_reset_mid_reply_marks_unknown_and_recovers():
    with Standalone() as s:
        clock = FakeClock()
        client = MongoClient(s.uri, clock=clock)
        client.admin.command("ping")
        s.servers[0].fail("ping", action="reset")
        with pytest.raises(errors.ConnectionFailure):
            client.admin.command("ping")
        td = client.topology_description
        assert td.servers[s.servers[0].address].server_type is ServerType.UNKNOWN
        assert client._topology.stale
        assert client._topology.generations[s.servers[0].address] == 1
        clock.advance(1)
        client.admin.command("ping")


def test_incompatible_server_is_an_error():
    with Standalone() as s:
        s.servers[0].fail("isMaster", code=0, times=None)
        s.servers[0].clear_faults()
        import singlemongo.testing.deployments as d
        old = d.MAX_WIRE_VERSION
        d.MAX_WIRE_VERSION = 6
        try:
            client = MongoClient(s.uri, clock=FakeClock())
            with pytest.raises(errors.IncompatibleWireVersionError, match="requires at least 8"):
                client.admin.command("ping")
        finally:
            d.MAX_WIRE_VERSION = old


def test_sharded_selects_mongos_and_passes_read_preference():
    with Sharded(2) as sh:
        client = MongoClient(sh.uri, clock=FakeClock())
        client.admin.command("ping", read_preference="nearest")
        assert client.topology_description.topology_type is TopologyType.SHARDED
        sent = [c for s in sh.servers for c in s.command_log if "ping" in c]
        assert sent[0]["$readPreference"] == {"mode": "nearest"}


def test_removed_member_is_dropped_and_its_connection_closed():
    with ReplicaSet(3) as rs:
        clock = FakeClock()
        client = MongoClient(rs.uri, clock=clock)
        client.admin.command("ping")
        removed = rs.remove_member(2)
        clock.advance(60)
        client.admin.command("ping")
        assert removed.address not in client.topology_description.servers
        assert removed.address not in client._topology._connections


def test_heartbeat_events_for_each_check():
    with ReplicaSet(3) as rs:
        events = []
        client = MongoClient(rs.uri, clock=FakeClock(), event_listeners=[events.append])
        client.admin.command("ping")
        started = [e for e in events if isinstance(e, m.ServerHeartbeatStartedEvent)]
        ok = [e for e in events if isinstance(e, m.ServerHeartbeatSucceededEvent)]
        assert len(started) == len(ok) == 3 and all(not e.awaited for e in started)


def test_listener_that_raises_does_not_break_the_operation():
    def bad(event):
        raise RuntimeError("listener bug")
    with Standalone() as s:
        MongoClient(s.uri, event_listeners=[bad]).admin.command("ping")


def test_application_server_selector_narrows_suitable_servers():
    with ReplicaSet(3) as rs:
        last = rs.servers[2].address
        seen = []

        def only_last(servers):
            seen.append(len(servers))
            return [s for s in servers if s.address == last]
        client = MongoClient(rs.uri, clock=FakeClock(), server_selector=only_last)
        client.admin.command("ping", read_preference="secondary")
        assert rs.servers[2].commands["ping"] == 1 and rs.servers[1].commands["ping"] == 0
        assert seen == [2]  # it saw both secondaries, after the read preference
