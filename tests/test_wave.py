"""Concurrent checks in one thread: one wave of hellos, applied in the planner's order."""
import threading

import pytest

from singlemongo.client import MongoClient
from singlemongo.clock import FakeClock
from singlemongo.testing import ReplicaSet

from .util import eventually


class _Gate:
    """Each server answers its hello only once every server has received one (or after
    0.3 s, which is recorded as a server having waited in vain)."""

    def __init__(self, rs):
        self.arrived, self.all_in, self.waited_in_vain = set(), threading.Event(), False
        self.size = len(rs.servers)
        for s in rs.servers:
            s.before_reply = self.before_reply

    def before_reply(self, server, name):
        if name.lower() in ("hello", "ismaster"):
            self.arrived.add(server.port)
            if len(self.arrived) == self.size:
                self.all_in.set()
            if not self.all_in.wait(0.3):
                self.waited_in_vain = True

    def is_set(self):
        return self.all_in.is_set() and not self.waited_in_vain


def _gate(rs):
    return _Gate(rs)


@pytest.mark.parametrize("executor,concurrent", [("concurrent", True), ("sequential", False)])
def test_a_cold_scan_checks_every_member_at_once(executor, concurrent):
    with ReplicaSet(3) as rs:
        all_in = _gate(rs)
        client = MongoClient(rs.uri, clock=FakeClock(), scan_executor=executor)
        client.admin.command("ping")
        # Sequentially, the first hello waits for hellos that are only sent after its reply.
        assert all_in.is_set() is concurrent
        assert [s.connections for s in rs.servers] == [1, 1, 1]
        order = [a for n, a, *_ in client._topology.scanner.history]
        assert len(order) == 3 and client.topology_description.topology_type.value == \
            "ReplicaSetWithPrimary"


def test_rescans_run_as_a_wave_on_open_connections():
    with ReplicaSet(3) as rs:
        clock = FakeClock()
        client = MongoClient(rs.uri, clock=clock)
        client.admin.command("ping")
        all_in = _gate(rs)
        clock.advance(60)
        client.admin.command("ping")
        assert all_in.is_set()
        assert [s.connections for s in rs.servers] == [1, 1, 1]


def test_wave_failures_are_applied_like_sequential_checks():
    with ReplicaSet(3) as rs:
        rs.servers[2].stop()
        client = MongoClient(rs.uri, clock=FakeClock())
        client.admin.command("ping")
        td = client.topology_description
        assert td.servers[rs.servers[2].address].server_type.value == "Unknown"
        assert "could not connect" in td.servers[rs.servers[2].address].error


def test_end_sessions_at_close_costs_no_round_trip():
    with ReplicaSet(3) as rs:
        client = MongoClient(rs.uri, clock=FakeClock())
        client.test.c.insert_one({})
        client.close()
        assert eventually(lambda: rs.sessions_ended)
        # Sent once, on any open connection to a data-bearing member (sessions are
        # cluster-wide), and never answered.
        ends = [c for s in rs.servers for c in s.command_log if "endSessions" in c]
        assert len(ends) == 1


def _ends_by_server(rs):
    return [s.port for s in rs.servers for c in s.command_log if "endSessions" in c]


def _reorder(connections, order):
    """The client's connections in ``order`` of addresses (they come as the wave's replies
    did), so that which one is first is known."""
    held = dict(connections)
    connections.clear()
    connections.update((address, held[address]) for address in order)


def test_end_sessions_goes_to_the_primary_when_its_connection_is_open():
    """Rule (PyMongo's choice, primaryPreferred): endSessions at close goes on the primary's
    connection when it is open, wherever it is among the client's connections."""
    with ReplicaSet(3, arbiters=1) as rs:
        client = MongoClient(rs.uri, clock=FakeClock())
        client.test.c.insert_one({})
        _reorder(client._topology._connections, [s.address for s in rs.servers[::-1]])
        client.close()
        assert eventually(lambda: rs.sessions_ended)
        assert _ends_by_server(rs) == [rs.servers[0].port]


def test_end_sessions_without_the_primary_goes_to_a_data_bearing_member():
    """Rule: with the primary's connection closed, endSessions goes to the first open
    connection to a data-bearing member, never to an arbiter's (it holds no sessions)."""
    with ReplicaSet(3, arbiters=1) as rs:
        client = MongoClient(rs.uri, clock=FakeClock())
        client.test.c.insert_one({})
        connections = client._topology._connections
        _reorder(connections, [s.address for s in rs.servers[::-1]])  # arbiter, 2, 1, 0
        connections[rs.servers[0].address].close()  # the primary's
        client.close()
        assert eventually(lambda: rs.sessions_ended)
        assert _ends_by_server(rs) == [rs.servers[2].port]


def test_names_with_several_addresses_fall_back_to_trying_each():
    from singlemongo.testing import Sharded
    with Sharded(2) as sh:
        uri = "mongodb://" + ",".join(f"localhost:{s.port}" for s in sh.servers)
        client = MongoClient(uri, clock=FakeClock())
        assert client.admin.command("ping")["ok"] == 1
        assert client.topology_description.topology_type.value == "Sharded"
        assert all(sd.server_type.value == "Mongos"
                   for sd in client.topology_description.servers.values())


def test_first_address_refused_then_the_next_one_is_tried(monkeypatch):
    import socket
    from singlemongo.testing import Sharded
    real = socket.getaddrinfo

    def two_addresses(host, port, *args, **kwargs):
        if host == "twoaddr.test":  # first 127.0.0.2 (nobody listens there), then 127.0.0.1
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.2", port)),
                    (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]
        return real(host, port, *args, **kwargs)
    monkeypatch.setattr(socket, "getaddrinfo", two_addresses)
    with Sharded(2) as sh:
        uri = "mongodb://" + ",".join(f"twoaddr.test:{s.port}" for s in sh.servers)
        client = MongoClient(uri, clock=FakeClock())
        assert client.admin.command("ping")["ok"] == 1
        assert all(sd.server_type.value == "Mongos"
                   for sd in client.topology_description.servers.values())
