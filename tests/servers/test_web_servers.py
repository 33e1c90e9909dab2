"""The guides' examples under the web servers users run them in, against a simulated replica
set of three members: Apache running ``examples/cgi_lookup.py`` as a CGI script, and
``examples/wsgi_app.py`` under gunicorn, uWSGI, mod_wsgi and gunicorn's gevent worker, each
under a load of concurrent requests, the long-lived ones through a failover (the primary steps
down after 1 s, another member is elected a second later).

Each test asserts 0 errors, the connections per request, and that the driver started no
thread in any process that served a request."""
import shutil
import time

import pytest

from tools import webservers

from .deployment import (MEMBERS, member_ports, remove_cache, seeded_replica_set, shop_uri,
                         start_failover)

CONCURRENCY = 8
SECONDS = 4.0


@pytest.fixture
def scratch():
    """A directory for a server's configuration and logs, removed after the test (its log
    is in the assertion's message when a request fails)."""
    directory = webservers.scratch_directory()
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def rs():
    """The set, and the connections it accepted before the test (its seeding's)."""
    with seeded_replica_set() as deployment:
        deployment.connections_before = deployment.total_connections()
        yield deployment


def _require(server):
    reason = webservers.unavailable_reason(server)
    if reason:
        pytest.fail(f"the web servers tier needs {server}: {reason}")


def _threads(pids):
    found = {}
    for pid in pids:
        try:
            found[pid] = webservers.threads(pid)
        except OSError:  # a worker the server replaced meanwhile
            pass
    return found


def _settled_threads(server, tries=50):
    """Threads per worker once the server has started them all: two readings 0.1 s apart
    agree (bounded: 50 tries). Under load, mod_wsgi's daemon was once read mid-start (1
    thread, then its 4), which read as threads the driver started."""
    found = _threads(server.workers())
    for _ in range(tries):
        time.sleep(0.1)
        again = _threads(server.workers())
        if again == found:
            break
        found = again
    return found


@pytest.mark.parametrize("cache", [False, True], ids=["scan", "topology-cache"])
def test_cgi_under_apache(rs, cache, tmp_path, scratch):
    """Rule: a CGI request is a one-off: one connection per member it checks (3), or one in
    all with the topology cache; no thread; nothing on the web server's error log. Apache
    runs it as www-data, whose home (/var/www) is not writable: the cache goes to
    $TMPDIR/singlemongo-UID, where each request wrote a warning with a source line before."""
    _require("apache-cgi")
    name = f"servers-tier-{tmp_path.name}"
    query = f"&topologyCacheFile={name}" if cache else ""
    port = webservers.free_port()
    server = webservers.apache_cgi(scratch, port, webservers.EXAMPLES / "cgi_lookup.py",
                                   {"MONGODB_URI": shop_uri(rs, query)})
    try:
        with server:
            result = webservers.load(port, "/cgi-bin/app?sku=a1", SECONDS, 4)
    finally:
        remove_cache(name)
    connections = (rs.total_connections() - rs.connections_before) / result.requests
    print(f"apache-cgi ({'cache' if cache else 'scan'}): {result.summary()}, "
          f"{connections:.2f} connections per request")
    assert result.requests > 20 and result.errors == 0, result.summary()
    if cache:
        assert connections < 1.2
    else:
        assert connections == MEMBERS
    threads = (scratch / "threads.log").read_text().split()
    assert len(threads) == result.requests and set(threads) == {"1"}
    log = (scratch / "error.log").read_text()
    assert not [line for line in log.splitlines()
                if "singlemongo" in line.lower() or "Traceback" in line or "Warning" in line], log


@pytest.mark.parametrize("name", [n for n in webservers.WSGI_SERVERS if "gevent" not in n])
def test_wsgi_app_through_a_failover(rs, name, scratch):
    """Rule: a long-lived worker's requests wait for the election (get_client's
    serverSelectionTryOnce=false) and none fails; each worker holds one connection per
    member, whatever the load; the driver starts no thread (each worker runs the threads it
    ran before its first request: one under gunicorn and uWSGI, mod_wsgi's own under it)."""
    result, connections, before, after, sockets = _serve_through_a_failover(
        rs, name, CONCURRENCY, scratch)
    assert result.requests > 100 and result.errors == 0, result.summary()
    assert all(after[pid] == count for pid, count in before.items() if pid in after)
    if not name.startswith("mod_wsgi"):
        assert set(after.values()) == {1}
    # One socket per member in each worker that served, none in the others.
    assert set(sockets.values()) <= {0, MEMBERS}
    assert connections <= len(after) * MEMBERS * 2


def test_gevent_worker_through_a_failover(rs, scratch):
    """Rule: under gunicorn's gevent worker, get_client lends each request's greenlet a
    client and takes it back when the greenlet ends, so the sockets stay bounded by the
    requests running at once (they climbed to the open-file limit before); no request fails
    through a failover; no thread."""
    concurrency = 20
    result, connections, _, after, sockets = _serve_through_a_failover(
        rs, "gunicorn-gevent", concurrency, scratch)
    assert result.requests > 100 and result.errors == 0, result.summary()
    assert set(after.values()) == {1}
    # A client per greenlet running at once (a few just ending), one socket per member.
    assert max(sockets.values()) <= 2 * concurrency * MEMBERS
    assert connections <= 2 * concurrency * MEMBERS * 2


def _serve_through_a_failover(rs, name, concurrency, directory):
    """``examples/wsgi_app.py`` under ``name`` through a failover: the load's result, the
    connections the deployment accepted, threads per worker before and after, sockets
    per worker after."""
    _require(webservers.requirement(name))
    port = webservers.free_port()
    server = webservers.wsgi_server(name, directory, port, webservers.EXAMPLES / "wsgi_app.py",
                                    {"MONGODB_URI": shop_uri(rs)})
    with server:
        before = _settled_threads(server)
        timers = start_failover(rs)
        result = webservers.load(port, "/visits?page=home", SECONDS, concurrency)
        for timer in timers:
            timer.join()
        after = _threads(server.workers())
        sockets = {pid: webservers.sockets(pid, member_ports(rs)) for pid in after}
    connections = rs.total_connections() - rs.connections_before
    print(f"{name}: {result.summary()}, {connections} connections, threads per worker "
          f"{sorted(after.values())}, sockets per worker {sorted(sockets.values())}")
    return result, connections, before, after, sockets
