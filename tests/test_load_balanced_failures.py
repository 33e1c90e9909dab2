"""Load-balanced mode on its failure paths (issue 19, seed: Load Balancer Support). The
topology "MUST remain as LoadBalanced indefinitely", the single server "MUST always be
selected", and no SDAM events beyond the opening and closing series. Each test failed on the
code before the fix; its docstring names the rule."""
import pytest

from singlemongo.client import MongoClient
from singlemongo.sdam import ServerType, TopologyType
from singlemongo.monitoring import sdam_events as m

SDAM_OPENING = ["TopologyOpenedEvent", "TopologyDescriptionChangedEvent", "ServerOpeningEvent",
                "ServerDescriptionChangedEvent", "TopologyDescriptionChangedEvent"]
SDAM_CLOSING = ["ServerClosedEvent", "TopologyClosedEvent"]


def _sdam(events):
    return [type(e).__name__ for e in events if type(e).__module__ == m.__name__]


def _client(lb, clock, events, **options):
    return MongoClient(lb.uri, clock=clock, event_listeners=[events.append], **options)


def _assert_load_balanced(client):
    td = client.topology_description
    assert td.topology_type is TopologyType.LOAD_BALANCED
    assert [sd.server_type for sd in td.servers.values()] == [ServerType.LOAD_BALANCER]


def test_a_failed_idle_ping_closes_that_connection_only(mongo_load_balanced, fake_clock):
    """Load balancers drop idle connections: the idle check's failed ping closes that
    connection, the next operation opens a new one, and the topology stays LoadBalanced with
    no SDAM event. Before, the LoadBalancer went Unknown for good and every later operation
    failed with ServerSelectionTimeoutError."""
    lb = mongo_load_balanced
    events = []
    client = _client(lb, fake_clock, events, socketCheckIntervalMS=1000)
    client.test.c.insert_one({"x": 1})
    lb.lb.fail("ping", action="close")
    fake_clock.advance(5)
    assert client.test.c.find_one({"x": 1})["x"] == 1
    assert client.test.c.insert_one({"x": 2}).acknowledged
    _assert_load_balanced(client)
    assert lb.lb.connections == 2
    client.close()
    assert _sdam(events) == SDAM_OPENING + SDAM_CLOSING


def test_a_network_error_in_an_operation_keeps_the_load_balancer(mongo_load_balanced,
                                                                 fake_clock):
    """The same rule for an operation's network error (SDAM, "Error handling": never mark the
    server Unknown in LoadBalanced mode): the failed read is retried on a new connection, and
    the server stays a LoadBalancer."""
    lb = mongo_load_balanced
    events = []
    client = _client(lb, fake_clock, events)
    client.test.c.insert_one({"x": 1})
    lb.lb.fail("find", action="close")
    assert client.test.c.find_one({"x": 1})["x"] == 1
    _assert_load_balanced(client)
    lb.lb.fail("insert", action="close", times=2)
    with pytest.raises(Exception):
        client.test.c.insert_one({"x": 2})
    _assert_load_balanced(client)
    assert client.test.c.count_documents({}) == 1
    client.close()
    assert _sdam(events) == SDAM_OPENING + SDAM_CLOSING


def test_a_client_closed_before_any_operation_publishes_the_whole_series(mongo_load_balanced,
                                                                        fake_clock):
    """Load balancer spec, "Monitoring": TopologyOpening ... then ServerClosed and
    TopologyClosed, whether or not an operation ran. Before, a load-balanced client closed
    before its first operation published nothing."""
    events = []
    client = _client(mongo_load_balanced, fake_clock, events)
    client.close()
    assert _sdam(events) == SDAM_OPENING + SDAM_CLOSING
    assert mongo_load_balanced.lb.connections == 0  # still no I/O


def test_a_handshake_closed_by_the_load_balancer_is_overload(mongo_load_balanced, fake_clock):
    """A handshake the server closes is overload (client backpressure, the project's documented
    decision), in load-balanced mode as elsewhere: labelled SystemOverloadedError and
    RetryableError and retried with backoff. Before, load-balanced mode raised it unlabelled
    and the write failed."""
    lb = mongo_load_balanced
    client = _client(lb, fake_clock, [])
    lb.lb.fail("hello", action="close")
    assert client.test.c.insert_one({"x": 1}).acknowledged
    assert lb.lb.connections == 2
    _assert_load_balanced(client)
    client.close()
