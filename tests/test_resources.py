"""Resources (issue 12): sockets close deterministically. A client dropped without close(),
or a scan interrupted by a signal, releases its sockets at once, without the cyclic garbage
collector and without relying on a socket's own finalizer (the recorder below keeps every
socket alive, so only an explicit close counts). A closed client is never used again."""
import gc
import socket
import threading
import warnings

import pytest

from singlemongo import errors
from singlemongo.client import MongoClient
from singlemongo.clock import FakeClock
from singlemongo.engine import wave
from singlemongo.engine.poll_fallback import Poll
from singlemongo.testing import ReplicaSet


class _Recorder:
    """Every socket the driver (this thread) creates, kept alive so that only an explicit
    close() closes it. The simulated servers' sockets belong to their own thread."""

    def __init__(self, monkeypatch):
        self.sockets = []
        self.interrupt_connect = False
        recorder, real = self, socket.socket

        class Recorded(real):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                if threading.current_thread() is threading.main_thread():
                    recorder.sockets.append(self)

            def connect(self, address):
                if recorder.interrupt_connect:
                    raise KeyboardInterrupt
                return super().connect(address)
        monkeypatch.setattr(socket, "socket", Recorded)

    def open(self):
        return [s for s in self.sockets if s.fileno() != -1]

    def close_all(self):
        for s in self.sockets:
            s.close()


@pytest.fixture(scope="module")
def rs():
    with ReplicaSet(3) as deployment:
        yield deployment


@pytest.fixture
def recorder(monkeypatch):
    rec = _Recorder(monkeypatch)
    gc.disable()
    try:
        yield rec
    finally:
        gc.enable()
        rec.close_all()


def test_dropped_clients_close_their_sockets_without_the_garbage_collector(rs, recorder):
    """Rule: a client dropped without close() releases its sockets at once. Before: the
    topology and its scanner referenced each other, so 300 dropped replica-set clients held
    900 descriptors until the cyclic collector ran (never, with it disabled)."""
    for _ in range(100):
        client = MongoClient(rs.uri, clock=FakeClock())
        client.test.c.find_one()
        del client
    assert len(recorder.sockets) >= 300
    assert recorder.open() == []


def test_a_dropped_client_warns_about_nothing(rs):
    """The sockets are closed, not left to socket.__del__ (which warns ResourceWarning)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        client = MongoClient(rs.uri, clock=FakeClock())
        client.test.c.find_one()
        del client
        gc.collect()
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []


class _InterruptedPoll(Poll):
    def poll(self, timeout_ms=None):
        raise KeyboardInterrupt


def test_a_scan_interrupted_in_its_wave_closes_every_socket(rs, recorder, monkeypatch):
    """Rule: a scan interrupted by a signal closes the sockets it opened, while the traceback
    (which holds the scan's frames) is still alive. Before: they stayed open until it died."""
    monkeypatch.setattr(wave, "_POLL", _InterruptedPoll)
    client = MongoClient(rs.uri, clock=FakeClock())
    with pytest.raises(KeyboardInterrupt) as info:
        client.test.c.find_one()
    assert info.traceback and len(recorder.sockets) == 3
    assert recorder.open() == []
    monkeypatch.undo()
    client.close()


def test_a_recheck_interrupted_in_its_wave_drops_the_half_read_connections(rs, recorder,
                                                                          monkeypatch):
    """Rule: an interrupted check on a pooled connection closes it and takes it out of the
    pool: a half-read connection is never used again."""
    client = MongoClient(rs.uri, clock=FakeClock(), heartbeatFrequencyMS=500)
    client.test.c.find_one()
    pooled = dict(client._topology._connections)
    client._topology.mark_stale("test")
    monkeypatch.setattr(wave, "_POLL", _InterruptedPoll)
    with pytest.raises(KeyboardInterrupt):
        client.test.c.find_one()
    assert all(conn.closed for conn in pooled.values())
    assert not set(client._topology._connections.values()) & set(pooled.values())
    monkeypatch.undo()
    assert client.test.c.find_one() is None  # reconnects
    client.close()


def test_a_connect_interrupted_closes_its_socket(rs, recorder):
    """Rule: a signal during connect() closes the socket (socket.create_connection only
    closes it on OSError). Sequential scans and operations connect this way."""
    client = MongoClient(rs.uri, clock=FakeClock(), scan_executor="sequential")
    recorder.interrupt_connect = True
    with pytest.raises(KeyboardInterrupt):
        client.test.c.find_one()
    assert recorder.sockets and recorder.open() == []
    recorder.interrupt_connect = False
    assert client.test.c.find_one() is None
    client.close()


def test_using_a_closed_client_raises_invalid_operation(rs):
    """Rule: a closed client never reconnects. Before: it silently reconnected, and a second
    close() leaked the socket."""
    client = MongoClient(rs.uri, clock=FakeClock())
    client.test.closed.insert_many([{"x": 1}, {"x": 2}])
    cursor = client.test.closed.find(batch_size=1)
    next(cursor)
    client.close()
    before = rs.total_connections()
    for use in (lambda: client.test.c.find_one(), lambda: client.admin.command("ping"),
                lambda: client.test.c.insert_one({"x": 2}), lambda: next(cursor),
                lambda: client.list_database_names()):
        with pytest.raises(errors.InvalidOperation, match="Cannot use MongoClient after close"):
            use()
    client.close()  # idempotent
    cursor.close()  # nothing to send, no error
    assert rs.total_connections() == before
    assert client._topology._connections == {}


def test_get_client_replaces_a_client_that_was_closed(rs):
    """get_client never hands out a closed client (this held before; it guards the rule that a
    closed client is never used again)."""
    from singlemongo import get_client
    first = get_client(rs.uri)
    first.close()
    second = get_client(rs.uri)
    assert second is not first and second.test.empty.find_one() is None
    second.close()
