"""Connecting through a SOCKS5 proxy (the drivers' SOCKS5 support specification; RFC 1928 and
RFC 1929), against a real SOCKS5 server: pproxy (PyPI), one instance without authentication
and one that requires a username and password, with the simulated deployment behind them.

Rules guarded: proxyHost is used, never ignored (before, the options were validated and the
client connected directly: 0 connections through the proxy); username/password are offered
only with credentials; the destination's name goes to the proxy unresolved; a refusal by the
proxy is a network error naming the server and the proxy, and never the password; TLS runs
end to end through the tunnel; the prose tests' table (succeeds / fails)."""
import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

from singlemongo import MongoClient, errors
from singlemongo.testing import ReplicaSet, Standalone

from .conftest import server_context

USER, PASSWORD = "alice", "p4ssw0rd-through-the-proxy"
PPROXY = os.path.join(os.path.dirname(sys.executable), "pproxy")


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start_pproxy(listen):
    """A pproxy SOCKS5 server (``--auth 0``: it never remembers a client that once
    authenticated), ready when its port answers; stopped by PID."""
    port = _free_port()
    process = subprocess.Popen([PPROXY, "-l", listen.format(port=port), "--auth", "0"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process, port
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("pproxy did not listen")


@pytest.fixture(scope="module")
def proxies():
    """{"open": port, "auth": port}: two SOCKS5 proxies, the second requiring USER/PASSWORD."""
    if not os.path.exists(PPROXY) and shutil.which("pproxy") is None:
        pytest.skip("pproxy (the test extra) is not installed")
    started = {"open": _start_pproxy("socks5://127.0.0.1:{port}"),
               "auth": _start_pproxy(f"socks5://127.0.0.1:{{port}}#{USER}:{PASSWORD}")}
    yield {name: port for name, (_, port) in started.items()}
    for process, _ in started.values():
        os.kill(process.pid, signal.SIGTERM)
        process.wait(5)


def _ping(uri, **options):
    with MongoClient(uri, serverSelectionTimeoutMS=2000, **options) as client:
        return client.admin.command("ping")["ok"]


def _through(proxy_port, credentials=None):
    query = f"proxyHost=127.0.0.1&proxyPort={proxy_port}"
    if credentials:
        query += f"&proxyUsername={credentials[0]}&proxyPassword={credentials[1]}"
    return query


CASES = [  # (proxy, credentials, directConnection, succeeds): the spec's prose tests
    ("auth", None, True, False),
    ("open", None, True, True),
    ("auth", None, False, False),
    ("open", None, False, True),
    ("auth", ("nonexistentuser", "badauth"), True, False),
    ("open", ("nonexistentuser", "badauth"), True, True),
    ("open", ("nonexistentuser", "badauth"), False, True),
    ("auth", (USER, PASSWORD), True, True),
    ("auth", (USER, PASSWORD), False, True),
]


@pytest.fixture(scope="module")
def replica_set():
    with ReplicaSet(3) as rs:
        yield rs


@pytest.mark.parametrize("proxy, credentials, direct, succeeds", CASES)
def test_the_prose_table_through_a_real_socks5_server(proxies, replica_set, proxy, credentials,
                                                     direct, succeeds):
    """SOCKS5 support tests, "Prose Tests": a hello succeeds or fails as the table says,
    with one member directly or the whole replica set, through each proxy."""
    members = replica_set.servers[:1] if direct else replica_set.servers
    hosts = ",".join(f"localhost:{s.address[1]}" for s in members)
    uri = (f"mongodb://{hosts}/?{_through(proxies[proxy], credentials)}"
           + ("&directConnection=true" if direct else "&replicaSet=rs"))
    if succeeds:
        assert _ping(uri) == 1
    else:
        with pytest.raises(errors.ServerSelectionTimeoutError) as raised:
            _ping(uri)
        assert "through the SOCKS5 proxy" in str(raised.value)
        assert "badauth" not in str(raised.value) and PASSWORD not in str(raised.value)


def test_every_connection_goes_through_the_proxy(proxies, replica_set):
    """Before, proxyHost was accepted and ignored. Here the proxy is the only way in: the
    members' addresses are names that resolve nowhere but in the proxy's own lookup, which
    this process intercepts (pproxy runs in another process)."""
    uri = (f"mongodb://localhost:{replica_set.servers[0].address[1]}/?directConnection=true&"
           f"{_through(proxies['open'])}")
    real_getaddrinfo = socket.getaddrinfo

    def no_local_lookup(host, *args, **kwargs):
        if host == "localhost":
            raise AssertionError("the destination's name was resolved here, not by the proxy")
        return real_getaddrinfo(host, *args, **kwargs)
    socket.getaddrinfo = no_local_lookup
    try:
        before = replica_set.servers[0].connections
        assert _ping(uri) == 1
        assert replica_set.servers[0].connections == before + 1
    finally:
        socket.getaddrinfo = real_getaddrinfo


def test_the_options_may_be_client_keywords(proxies, replica_set):
    """SOCKS5 support tests: the same with MongoClient options instead of the string."""
    port = replica_set.servers[0].address[1]
    assert _ping(f"mongodb://localhost:{port}/?directConnection=true", proxyHost="127.0.0.1",
                 proxyPort=proxies["auth"], proxyUsername=USER, proxyPassword=PASSWORD) == 1


def test_command_events_name_the_server_not_the_proxy(proxies, replica_set):
    """SOCKS5 support spec, "Events": the proxy is transparent to command monitoring."""
    seen = []
    port = replica_set.servers[0].address[1]
    with MongoClient(f"mongodb://localhost:{port}/?directConnection=true&"
                     f"{_through(proxies['open'])}",
                     event_listeners=[lambda e: seen.append(e)]) as client:
        client.admin.command("ping")
    addresses = {e.connection_id for e in seen if hasattr(e, "command_name")}
    assert addresses == {("localhost", port)}


def test_tls_runs_end_to_end_through_the_tunnel(proxies, certs):
    """TLS is negotiated with the server through the proxy, its certificate checked against
    the destination's name (127.0.0.1 here), not the proxy's."""
    with Standalone(tls_context=server_context(certs)) as server:
        port = server.servers[0].address[1]
        uri = (f"mongodb://127.0.0.1:{port}/?tls=true&tlsCAFile={certs / 'ca.pem'}&"
               f"{_through(proxies['auth'], (USER, PASSWORD))}")
        assert _ping(uri) == 1


def test_a_refusal_is_a_network_error_and_never_shows_the_password(proxies, replica_set):
    """SOCKS5 support spec: a handshake or authentication failure is a network error; the
    credentials appear in no message (nor in the client's repr)."""
    port = replica_set.servers[0].address[1]
    uri = (f"mongodb://localhost:{port}/?directConnection=true&"
           f"{_through(proxies['auth'], (USER, 'wrong-' + PASSWORD))}")
    client = MongoClient(uri, serverSelectionTimeoutMS=500)
    with pytest.raises(errors.ServerSelectionTimeoutError) as raised:
        client.admin.command("ping")
    text = str(raised.value) + repr(client)
    client.close()
    assert "wrong-" + PASSWORD not in text and f"127.0.0.1:{proxies['auth']}" in text


def test_a_proxy_that_is_not_there_is_a_network_error_within_the_connect_timeout(replica_set):
    port = replica_set.servers[0].address[1]
    started = time.monotonic()
    with pytest.raises(errors.ServerSelectionTimeoutError, match="could not connect"):
        _ping(f"mongodb://localhost:{port}/?directConnection=true&proxyHost=127.0.0.1&"
              f"proxyPort={_free_port()}&connectTimeoutMS=1000")
    assert time.monotonic() - started < 2.5
