"""pytest fixtures for simulated deployments (registered by the ``testing`` extra's
``pytest11`` entry point, so installing ``singlemongo[testing]`` is enough).

Session-scoped fixtures start a deployment once per test session; the function-scoped ones
hand out the same deployment reset to its first state (no data, faults, latency or
counters; every server up in its first role), which costs microseconds instead of new
servers. Each yields the deployment itself: its ``uri``, ``servers`` (``fail``, ``stop``,
``start``, ``latency_s``), ``store`` (``seed``, ``documents``) and, for a replica set,
``step_down``, ``elect``, ``add_member`` and ``remove_member``::

    def test_failover(mongo_replica_set, mongo_client):
        mongo_client.shop.orders.insert_one({"x": 1})
        mongo_replica_set.elect(1)
        ...
"""
import sys

import pytest

from singlemongo.clock import FakeClock

# Nothing here imports the simulated deployments at load time: the plugin is registered for
# every install of singlemongo, and pytest must start without the testing extra too.


def _session(kind):
    """Start a deployment of ``kind`` (a class name of singlemongo.testing) for the session;
    without the testing extra, a UsageError saying what to install."""
    from singlemongo import testing
    try:
        factory = getattr(testing, kind)
    except ImportError as exc:
        raise pytest.UsageError(f"singlemongo's mongo_* fixtures: {exc}") from None
    deployment = factory().start()
    try:
        yield deployment
    finally:
        deployment.stop()


def pytest_sessionfinish(session):
    """Under pytest-xdist, a worker sends what its simulated deployments were asked for and
    do not implement to the controller, which reports the whole run's."""
    gaps = sys.modules.get("singlemongo.testing.gaps")
    output = getattr(session.config, "workeroutput", None)
    if gaps is not None and output is not None:
        output["singlemongo_gaps"] = gaps.counts()


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """A pytest-xdist worker finished: count what its deployments lacked (a hook of xdist,
    called only when it is installed)."""
    seen = getattr(node, "workeroutput", {}).get("singlemongo_gaps")
    if seen:
        from singlemongo.testing import gaps
        gaps.merge(seen)


def pytest_terminal_summary(terminalreporter):
    """What the run's tests asked the simulated deployments for and they do not implement."""
    gaps = sys.modules.get("singlemongo.testing.gaps")
    lines = gaps.report() if gaps is not None else []
    if lines:
        terminalreporter.section("singlemongo simulator: what the tests asked for and it does "
                                 "not implement")
        terminalreporter.write_line("(a real server may refuse some of these too: an unknown "
                                    "command is CommandNotFound there as well)")
        for line in lines:
            terminalreporter.write_line(line)


@pytest.fixture(autouse=True)
def _singlemongo_client_cache():
    """Close the clients singlemongo.get_client() cached during a test, so the next test
    starts without them (each test may be given a different deployment)."""
    yield
    cache = sys.modules.get("singlemongo.client_cache")
    if cache is not None:
        cache.clear()


@pytest.fixture(scope="session")
def mongo_standalone_session():
    """A standalone mongod for the whole test session."""
    yield from _session("Standalone")


@pytest.fixture(scope="session")
def mongo_replica_set_session():
    """A 3-member replica set (member 0 primary) for the whole test session."""
    yield from _session("ReplicaSet")


@pytest.fixture(scope="session")
def mongo_sharded_session():
    """Two mongoses for the whole test session."""
    yield from _session("Sharded")


@pytest.fixture(scope="session")
def mongo_load_balanced_session():
    """A load balancer (with serviceId) in front of a mongos, for the whole test session."""
    yield from _session("LoadBalancer")


@pytest.fixture
def mongo_standalone(mongo_standalone_session):
    """The session's standalone, reset to its first state for this test."""
    return mongo_standalone_session.reset()


@pytest.fixture
def mongo_replica_set(mongo_replica_set_session):
    """The session's replica set, reset to its first state for this test."""
    return mongo_replica_set_session.reset()


@pytest.fixture
def mongo_sharded(mongo_sharded_session):
    """The session's mongoses, reset to their first state for this test."""
    return mongo_sharded_session.reset()


@pytest.fixture
def mongo_load_balanced(mongo_load_balanced_session):
    """The session's load balancer, reset to its first state for this test."""
    return mongo_load_balanced_session.reset()


@pytest.fixture(scope="session")
def mongo_authenticated_session():
    """A 3-member replica set that requires authentication, with a user of each mechanism
    the simulator verifies (``uri_for(mechanism)``, ``mechanisms``), for the session."""
    yield from _session("AuthenticatedReplicaSet")


@pytest.fixture
def mongo_authenticated(mongo_authenticated_session):
    """The session's authenticated replica set, reset to its first state for this test."""
    return mongo_authenticated_session.reset()


@pytest.fixture
def fake_clock():
    """A FakeClock: sleeps advance it at once, so timeouts and backoffs cost nothing."""
    return FakeClock()


@pytest.fixture
def make_client(fake_clock):
    """``make_client(uri_or_deployment, **options)``: a client on the fake clock, closed after
    the test."""
    from singlemongo.client import MongoClient
    clients = []

    def make(target, **options):
        uri = getattr(target, "uri", target)
        client = MongoClient(uri, clock=fake_clock, **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def mongo_client(mongo_replica_set, make_client):
    """A client on the fake clock, connected to the reset replica set."""
    return make_client(mongo_replica_set)
