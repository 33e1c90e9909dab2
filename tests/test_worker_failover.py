"""A long-lived worker through a failover (issue 58): the primary steps down under load and
another member is elected a second later. A one-off keeps the seed's serverSelectionTryOnce
(one scan, then the error: a CGI request fails fast); get_client(), which is for workers
that serve request after request, waits for the election instead, within
serverSelectionTimeoutMS."""
import threading
import time

from singlemongo import MongoClient, client_cache, get_client
from singlemongo.errors import PyMongoError
from singlemongo.testing import ReplicaSet


def _requests_through_a_failover(client_for):
    """(requests, failures) of a worker serving requests for 2.5 s while the primary steps
    down at 0.5 s and member 1 is elected at 1.5 s."""
    with ReplicaSet(3) as rs:
        def failover():
            time.sleep(0.5)
            rs.step_down()
            time.sleep(1.0)
            rs.elect(1)
        thread = threading.Thread(target=failover)
        requests = failures = 0
        client = client_for(rs.uri)
        thread.start()
        end = time.monotonic() + 2.5
        while time.monotonic() < end:
            requests += 1
            try:
                client.shop.orders.insert_one({"n": requests})
                client.shop.orders.find_one({"n": requests})
            except PyMongoError:
                failures += 1
        thread.join(5)
        client_cache.clear()
        return requests, failures


def test_get_client_waits_for_the_election():
    """Rule: get_client()'s clients default to serverSelectionTryOnce=false: a worker's
    requests wait for the new primary rather than fail. It kept the one-off default, and
    about 8 of 2,400 requests of each WSGI server failed in a step-down under load."""
    requests, failures = _requests_through_a_failover(get_client)
    assert requests > 5 and failures == 0


def test_a_one_off_client_keeps_failing_fast():
    """The seed's default for one-offs stays: without a primary, one scan, then the error."""
    requests, failures = _requests_through_a_failover(
        lambda uri: MongoClient(uri, serverSelectionTimeoutMS=30000))
    assert failures > 0


def test_get_client_keeps_a_try_once_the_program_gives():
    for given in ({"serverSelectionTryOnce": True}, {}):
        uri = "mongodb://h1/?serverSelectionTryOnce=true" if not given else "mongodb://h1"
        assert get_client(uri, **given)._options.server_selection_try_once is True
    assert get_client("mongodb://h1")._options.server_selection_try_once is False
    client_cache.clear()
