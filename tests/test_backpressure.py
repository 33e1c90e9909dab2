"""Client backpressure: overload retries, the token bucket, backoff and deprioritization,
under a fake clock (no real waiting) against the simulated deployment."""
import pytest

from singlemongo import errors
from singlemongo.engine.backpressure import TokenBucket, backoff_seconds
from singlemongo.client import MongoClient
from singlemongo.clock import FakeClock
from singlemongo.monitoring.command_monitoring import (CommandFailedEvent, CommandStartedEvent,
                                            CommandSucceededEvent)
from singlemongo.sdam import ServerType
from singlemongo.testing import ReplicaSet, Sharded, Standalone

OVERLOAD = dict(code=462, errmsg="Rate limiter 'ingressRequestRateLimiter' rate exceeded",
                labels=("SystemOverloadedError", "RetryableError"))


def test_backoff_schedule_and_bucket_arithmetic():
    assert [backoff_seconds(i, 1.0) for i in range(6)] == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2]
    assert backoff_seconds(10, 1.0) == 10.0
    bucket = TokenBucket()
    assert bucket.consume(1) and bucket.tokens == 999
    bucket.deposit(5)
    assert bucket.tokens == 1000  # never above capacity
    bucket.tokens = 0.5
    assert not bucket.consume(1) and bucket.tokens == 0.5


@pytest.fixture
def standalone():
    with Standalone() as s:
        yield s


def _client(dep, **kw):
    clock = FakeClock(jitter=0.5)
    events = []
    client = MongoClient(dep.uri, clock=clock, event_listeners=[events.append], **kw)
    return client, clock, events


def test_four_overloads_then_success(standalone):
    client, clock, events = _client(standalone)
    client.test.c.insert_one({"a": 1})
    del events[:]
    clock.sleeps.clear()
    standalone.servers[0].fail("find", times=4, **OVERLOAD)
    assert client.test.c.find_one()["a"] == 1
    assert clock.sleeps == [0.05, 0.1, 0.2, 0.4]  # 100, 200, 400, 800 ms times jitter 0.5
    assert client._topology.token_bucket.tokens == pytest.approx(1000 - 4 + 1.1)
    started = [e for e in events if isinstance(e, CommandStartedEvent)]
    ended = [e for e in events if isinstance(e, (CommandSucceededEvent, CommandFailedEvent))]
    assert len(started) == 5 and len(ended) == 5
    assert sorted(e.request_id for e in started) == sorted(e.request_id for e in ended)
    assert len({e.operation_id for e in started}) == 1
    assert client.topology_description.servers[standalone.servers[0].address].server_type \
        is ServerType.STANDALONE
    assert client._topology.generations[standalone.servers[0].address] == 0


def test_drained_bucket_raises_at_once(standalone):
    client, clock, _ = _client(standalone)
    client.admin.command("ping")
    client._topology.token_bucket.tokens = 0
    standalone.servers[0].fail("find", **OVERLOAD)
    clock.sleeps.clear()
    with pytest.raises(errors.OperationFailure, match="retry budget is spent") as info:
        client.test.c.find_one()
    assert clock.sleeps == [] and info.value.attempts == 1 and info.value.code == 462


def test_attempts_exhausted_after_five_retries(standalone):
    client, clock, _ = _client(standalone)
    client.admin.command("ping")
    standalone.servers[0].fail("find", times=6, **OVERLOAD)
    with pytest.raises(errors.OperationFailure, match="retry attempts exhausted") as info:
        client.test.c.find_one()
    assert info.value.attempts == 6
    assert clock.sleeps[-5:] == [0.05, 0.1, 0.2, 0.4, 0.8]
    assert standalone.servers[0].commands["find"] == 6


def test_max_adaptive_retries_caps_and_zero_disables(standalone):
    client, clock, _ = _client(standalone, maxAdaptiveRetries=2)
    client.admin.command("ping")
    standalone.servers[0].fail("find", times=3, **OVERLOAD)
    with pytest.raises(errors.OperationFailure, match="maxAdaptiveRetries=2"):
        client.test.c.find_one()
    client, clock, _ = _client(standalone, maxAdaptiveRetries=0)
    standalone.servers[0].clear_faults()
    standalone.servers[0].fail("find", **OVERLOAD)
    with pytest.raises(errors.OperationFailure, match="not retryable"):
        client.test.c.find_one()


def test_deadline_stops_retrying(standalone):
    client, clock, _ = _client(standalone, timeoutMS=150)
    clock.jitter = 1.0
    client.admin.command("ping")
    standalone.servers[0].fail("find", times=3, **OVERLOAD)
    with pytest.raises(errors.OperationFailure, match="deadline"):
        client.test.c.find_one()
    assert clock.sleeps[-1:] == [0.1]  # 100 ms fits in 150 ms; 200 more would not


def test_every_command_is_retried_on_retryable_error(standalone):
    client, clock, _ = _client(standalone)
    client.test.c.insert_many([{"a": 1}, {"a": 2}])
    standalone.servers[0].fail("update", **OVERLOAD)
    assert client.test.c.update_many({}, {"$set": {"b": 1}}).modified_count == 2
    standalone.servers[0].fail("buildInfo", labels=("RetryableError",), code=462)
    standalone.commands["buildInfo"] = lambda server, cmd, state: {"ok": 1, "version": "8.2.0"}
    assert client.admin.command("buildInfo")["version"] == "8.2.0"
    assert clock.sleeps[-1:] == [0.05]  # the second error had no SystemOverloadedError: no wait


def test_failed_retry_without_overload_label_returns_a_token(standalone):
    client, clock, _ = _client(standalone)
    client.admin.command("ping")
    bucket = client._topology.token_bucket
    standalone.servers[0].fail("find", **OVERLOAD)
    standalone.servers[0].fail("find", code=2, errmsg="bad value")
    with pytest.raises(errors.OperationFailure, match="bad value"):
        client.test.c.find_one()
    assert bucket.tokens == pytest.approx(1000 - 1 + 1)


def test_overloaded_mongos_is_deprioritized_unless_retargeting_is_off():
    with Sharded(2) as sh:
        client, clock, _ = _client(sh)
        client.admin.command("ping")
        first = sh.servers[0]
        first.fail("find", **OVERLOAD)
        client.test.c.find_one()
        assert first.commands["find"] == 1 and sh.servers[1].commands["find"] == 1
        client, clock, _ = _client(sh, enableOverloadRetargeting=False)
        first.fail("find", **OVERLOAD)
        client.test.c.find_one()
        assert first.commands["find"] == 3 and sh.servers[1].commands["find"] == 1


def test_no_writes_performed_raises_the_earlier_error():
    with ReplicaSet(3) as rs:
        client, clock, _ = _client(rs)
        client.test.c.insert_one({})
        rs.servers[0].fail("insert", code=91, errmsg="first: shutting down",
                           labels=("RetryableWriteError",))
        rs.servers[0].fail("insert", code=91, errmsg="second",
                           labels=("RetryableWriteError", "NoWritesPerformed"))
        with pytest.raises(errors.NotPrimaryError, match="first: shutting down"):
            client.test.c.insert_one({})


def test_connection_closed_during_handshake_is_an_overload_not_a_dead_server(standalone):
    client, clock, _ = _client(standalone)
    client.admin.command("ping")
    address = standalone.servers[0].address
    client._topology.close_connection(address)  # the idle socket went away
    standalone.servers[0].fail("isMaster", action="close")
    assert client.admin.command("ping")["ok"] == 1
    assert clock.sleeps[-1:] == [0.05]
    assert client.topology_description.servers[address].server_type is ServerType.STANDALONE
    assert standalone.servers[0].connections == 3


@pytest.mark.parametrize("first", ["network", "retryable-label"])
def test_backoff_index_counts_every_earlier_retry(standalone, first):
    """Client backpressure rule 5: ``i`` is the retry attempt, 0 for the first retry; read as
    every retry of the operation, whatever made it (the seed's pseudocode counts all
    attempts). Before, an overload after an ordinary retry (a network error) backed off with
    i=0 but after a RetryableError-only retry with i=1."""
    client, clock, events = _client(standalone)
    client.test.c.insert_one({"a": 1})
    clock.sleeps.clear()
    server = standalone.servers[0]
    if first == "network":
        server.fail("find", action="close")
    else:
        server.fail("find", code=462, errmsg="retry me", labels=("RetryableError",))
    server.fail("find", **OVERLOAD)
    assert client.test.c.find_one()["a"] == 1
    # The last sleep is the backoff (a network error also waits for the rescan, 500 ms).
    assert clock.sleeps[-1] == 0.1 and 0.05 not in clock.sleeps  # i=1: 200 ms x jitter 0.5


def test_backoff_index_is_zero_for_an_overload_on_the_first_attempt(standalone):
    """The other order of the same rule: the first retry (i=0) after an overload, then an
    ordinary retry without backoff."""
    client, clock, events = _client(standalone)
    client.test.c.insert_one({"a": 1})
    clock.sleeps.clear()
    server = standalone.servers[0]
    server.fail("find", **OVERLOAD)
    server.fail("find", action="close")
    assert client.test.c.find_one()["a"] == 1
    assert clock.sleeps[0] == 0.05  # then the rescan's wait after the network error


def test_a_mongos_closing_handshakes_is_deprioritized_for_the_retry():
    """Client backpressure rule 6: the server of a failed attempt is deprioritized when the
    error carries SystemOverloadedError, a handshake the mongos closed included (the driver
    labels it). Before, the failed attempt's server was recorded only once a connection
    existed, so every retry went back to the same mongos."""
    with Sharded(2) as sh:
        client, clock, _ = _client(sh)
        client.test.c.find_one()
        first = next(s for s in sh.servers if s.commands.get("find"))
        other = next(s for s in sh.servers if s is not first)
        for server in sh.servers:
            client._topology.close_connection(server.address)  # the idle sockets went away
        first.fail("hello", commands=("hello", "isMaster"), action="close", times=None)
        before = (first.commands.get("find", 0), other.commands.get("find", 0))
        client.test.c.find_one()
        assert (first.commands.get("find", 0), other.commands.get("find", 0)) == \
            (before[0], before[1] + 1)
        assert clock.sleeps[-1:] == [0.05]  # one overload backoff, then the other mongos
        first.clear_faults()
        client.close()
