"""The simulated server under clients that stall (issue 57): a TLS client that connects and
sends nothing, or half a TLS record, held every other client (the handshake and the read
blocked the server's one thread). PyMongo is the other client, on the same server."""
import socket
import ssl
import time

import pymongo
import pytest

from singlemongo.testing import Standalone

from .conftest import server_context


def _tls_client(deployment, certs):
    """PyMongo trusting the test CA, for the TLS deployment."""
    return pymongo.MongoClient(deployment.uri.replace("tlsInsecure=true", "") +
                               f"tlsCAFile={certs / 'ca.pem'}",
                               serverSelectionTimeoutMS=3000, connectTimeoutMS=3000)


def _read_all(sock, size):
    """Read ``size`` bytes of replies; the connection must stay open for all of them."""
    sock.settimeout(10)
    received = 0
    while received < size:
        chunk = sock.recv(1 << 20)
        assert chunk, "the connection of the client that stopped reading was closed"
        received += len(chunk)


def _ping_seconds(deployment, certs):
    client = _tls_client(deployment, certs)
    try:
        start = time.monotonic()
        client.admin.command("ping")
        return time.monotonic() - start
    finally:
        client.close()


def test_idle_tcp_connections_do_not_hold_a_tls_server(certs):
    """Three TCP connections that never start their TLS handshake: another client's ping
    is answered at once (it waited 5 s per idle connection)."""
    with Standalone(tls_context=server_context(certs)) as deployment:
        idle = [socket.create_connection(deployment.servers[0].address) for _ in range(3)]
        try:
            time.sleep(0.2)  # the server has accepted them
            assert _ping_seconds(deployment, certs) < 1.5
        finally:
            for sock in idle:
                sock.close()


def _half_a_record(address, certs):
    """A TLS connection whose handshake is done and whose next record is half sent."""
    context = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname="127.0.0.1")
    sock = socket.create_connection(address, timeout=5)
    while True:
        try:
            tls.do_handshake()
            break
        except ssl.SSLWantReadError:
            sock.sendall(outgoing.read())
            incoming.write(sock.recv(65536))
    sock.sendall(outgoing.read())
    tls.write(b"\x00" * 64)  # any bytes: only half their record is sent
    record = outgoing.read()
    sock.sendall(record[:len(record) // 2])
    return sock


def test_half_a_tls_record_does_not_hold_the_server(certs):
    """A client that sends half a TLS record and stops: another client's ping is answered
    at once (the server's read waited for the other half)."""
    with Standalone(tls_context=server_context(certs)) as deployment:
        stalled = _half_a_record(deployment.servers[0].address, certs)
        try:
            time.sleep(0.2)
            assert _ping_seconds(deployment, certs) < 1.5
        finally:
            stalled.close()


@pytest.mark.parametrize("stalls", [0, 1])
def test_a_tls_client_is_served_after_its_handshake(certs, stalls):
    """The handshake done step by step still serves the client that made it, an idle
    neighbour or not."""
    with Standalone(tls_context=server_context(certs)) as deployment:
        idle = [socket.create_connection(deployment.servers[0].address) for _ in range(stalls)]
        try:
            for _ in range(3):
                assert _ping_seconds(deployment, certs) < 1.5
        finally:
            for sock in idle:
                sock.close()


def _op_msg(request_id, command):
    import struct

    import bson
    body = struct.pack("<I", 0) + b"\x00" + bson.encode(command)
    return struct.pack("<iiii", 16 + len(body), request_id, 0, 2013) + body


def test_a_client_that_never_reads_its_replies_holds_only_itself():
    """Issue 57: a client that sends commands and never reads the replies (tens of MB of
    them) held the server's one thread in a send, and other clients' pings got no answer.
    Now the replies wait for that client, and the others are served at once."""
    with Standalone() as deployment:
        client = pymongo.MongoClient(deployment.uri, serverSelectionTimeoutMS=3000)
        client.db.big.insert_one({"_id": 1, "s": "x" * 1_000_000})
        stalled = socket.create_connection(deployment.servers[0].address)
        try:
            stalled.sendall(b"".join(_op_msg(n, {"find": "big", "$db": "db"})
                                     for n in range(1, 61)))
            time.sleep(0.5)  # the server has answered into a full socket
            start = time.monotonic()
            client.admin.command("ping")
            assert time.monotonic() - start < 1.5
            _read_all(stalled, 60 * 1_000_000)  # and it still gets every reply
        finally:
            stalled.close()
            client.close()


def test_three_hostile_clients_at_once_hold_nobody_else(certs):
    """Issue 57's case whole, on a TLS server: one client connects and stalls before its
    handshake, one sends half a TLS record, one sends 60 finds of 1 MB and never reads;
    meanwhile another client's pings are each answered within a second, and the reader that
    stopped still gets every reply when it reads again."""
    with Standalone(tls_context=server_context(certs)) as deployment:
        address = deployment.servers[0].address
        client = _tls_client(deployment, certs)
        client.db.big.insert_one({"_id": 1, "s": "x" * 1_000_000})
        stalled = socket.create_connection(address)
        half = _half_a_record(address, certs)
        context = ssl.create_default_context(cafile=str(certs / "ca.pem"))
        reader = context.wrap_socket(socket.create_connection(address),
                                     server_hostname="127.0.0.1")
        try:
            reader.sendall(b"".join(_op_msg(n, {"find": "big", "$db": "db"})
                                    for n in range(1, 61)))
            time.sleep(0.5)
            for _ in range(5):
                start = time.monotonic()
                client.admin.command("ping")
                assert time.monotonic() - start < 1.0
            _read_all(reader, 60 * 1_000_000)
        finally:
            for sock in (stalled, half, reader):
                sock.close()
            client.close()


def test_a_sleeping_where_holds_only_its_own_client():
    """Rule: a command that waits waits without holding the store or the server's thread
    (issue 57). A `$where` that sleeps 1.5 s held the store's lock and the server's one
    thread: a ping from another client, and a write through another member, waited for it."""
    import threading
    with Standalone() as deployment:
        deployment.store.seed("app", "c", [{"_id": 1}])
        sleeper = pymongo.MongoClient(deployment.uri, serverSelectionTimeoutMS=3000)
        other = pymongo.MongoClient(deployment.uri, serverSelectionTimeoutMS=3000)
        other.admin.command("ping")
        found = []
        thread = threading.Thread(target=lambda: found.append(sleeper.app.c.find_one(
            {"$where": "function() { sleep(1500); return true; }"})))
        try:
            started = time.monotonic()
            thread.start()
            time.sleep(0.3)  # the sleeper's find is running
            other.app.c.insert_one({"_id": 2})
            served_in = time.monotonic() - started
            thread.join(10)
            slept = time.monotonic() - started
        finally:
            sleeper.close()
            other.close()
    assert found == [{"_id": 1}] and slept >= 1.5  # the sleeper did wait
    assert served_in < 1.0, f"the other client waited {served_in:.2f} s for the sleeping $where"


def test_two_deployments_in_one_process_keep_their_collations_apart():
    """Rule: a command's collation applies to that command only, even with another
    deployment serving in the same process (issue 57; the query engine held the running
    command's collation in a module global, and each deployment has its own lock). One
    thread compares under a case-insensitive collation while another compares plainly."""
    import threading

    from singlemongo.testing.query import collation
    barrier = threading.Barrier(2, timeout=5)
    seen = {}

    def compare(name, spec):
        with collation.applied(spec):
            barrier.wait()  # both blocks are open at once
            seen[name] = collation.compared("a", "A")
            barrier.wait()
    threads = [threading.Thread(target=compare, args=("plain", None)),
               threading.Thread(target=compare, args=("collated", {"locale": "en",
                                                                    "strength": 2}))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen["plain"] == ("a", "A")
    assert seen["collated"][0] == seen["collated"][1]
