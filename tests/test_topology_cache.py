"""The opt-in topology cache: a warm cache makes a one-off query cost one connection."""
import json
import warnings

import pytest

from singlemongo import SingleMongoWarning
from singlemongo.client import MongoClient
from singlemongo.clock import FakeClock
from singlemongo.testing import ReplicaSet


@pytest.fixture
def rs():
    with ReplicaSet(3) as deployment:
        deployment.store.seed("t", "c", [{"_id": 1}])
        yield deployment


def _client(rs, path, clock=None):
    return MongoClient(rs.uri, topologyCacheFile=str(path), clock=clock or FakeClock())


def _warm(rs, path):
    with pytest.warns(SingleMongoWarning, match="does not exist"):
        first = _client(rs, path)
        first.t.c.find_one()
    first.close()
    return json.loads(path.read_text())


def test_warm_cache_costs_one_connection(rs, tmp_path):
    path = tmp_path / "topology.json"
    data = _warm(rs, path)
    assert data["topologyType"] == "ReplicaSetWithPrimary" and len(data["servers"]) == 3
    before = rs.total_connections()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        client = _client(rs, path)
        assert client.t.c.find_one() == {"_id": 1}
    assert rs.total_connections() - before == 1
    assert client._topology.scan_count == 0


def test_surprise_marks_stale_and_scans(rs, tmp_path):
    path = tmp_path / "topology.json"
    _warm(rs, path)
    rs.elect(2)
    client = _client(rs, path)
    client.t.c.insert_one({"_id": 2})
    assert rs.servers[2].commands["insert"] == 1
    assert client._topology.scan_count == 1


@pytest.mark.parametrize("content,why", [
    ("{not json", "cannot read"),
    ('{"version": 1, "key": "[]", "writtenAt": 0, "servers": []}', "another deployment"),
    ('{"version": 99}', "another deployment"),
])
def test_bad_caches_are_ignored_with_a_warning(rs, tmp_path, content, why):
    path = tmp_path / "topology.json"
    path.write_text(content)
    with pytest.warns(SingleMongoWarning, match=why):
        client = _client(rs, path)
        assert client.t.c.find_one() == {"_id": 1}
    assert client._topology.scan_count == 1


def test_corrupt_cache_for_this_deployment_is_ignored(rs, tmp_path):
    path = tmp_path / "topology.json"
    data = _warm(rs, path)
    data["servers"][0]["type"] = "NotAType"
    path.write_text(json.dumps(data))
    with pytest.warns(SingleMongoWarning, match="corrupt"):
        _client(rs, path).t.c.find_one()


def test_cache_older_than_heartbeat_is_never_trusted(rs, tmp_path):
    path = tmp_path / "topology.json"
    _warm(rs, path)
    clock = FakeClock()
    clock.advance(61)  # wall time moves with it
    client = _client(rs, path, clock)
    client.t.c.find_one()
    assert client._topology.scan_count == 1


def test_unwritable_cache_warns_but_works(rs, tmp_path):
    path = tmp_path / "missing-dir" / "topology.json"
    with pytest.warns(SingleMongoWarning):
        client = _client(rs, path)
        assert client.t.c.find_one() == {"_id": 1}
