"""The face checked against PyMongo itself (issue 13): each scenario runs with PyMongo and
with singlemongo against the same simulated replica set; results, errors (type and code),
the collection afterwards and the commands sent must be equal. Differences that are by
design are listed in DIFFERENCES with their reason (and in the README)."""
import pytest

from .side_by_side import harness, scenarios_admin, scenarios_bulk, scenarios_codecs
from .side_by_side import scenarios_find, scenarios_gridfs, scenarios_idioms
from .side_by_side import scenarios_mistakes, scenarios_sessions, scenarios_write
from singlemongo.testing import ReplicaSet

SCENARIOS = (scenarios_find.SCENARIOS + scenarios_write.SCENARIOS + scenarios_bulk.SCENARIOS
             + scenarios_admin.SCENARIOS + scenarios_codecs.SCENARIOS
             + scenarios_sessions.SCENARIOS + scenarios_idioms.SCENARIOS
             + scenarios_gridfs.SCENARIOS + scenarios_mistakes.SCENARIOS)


@pytest.fixture(scope="module")
def deployment():
    with ReplicaSet(3) as rs:
        yield rs


def test_there_are_enough_scenarios():
    assert len(SCENARIOS) >= 150
    assert len({s.name for s in SCENARIOS}) == len(SCENARIOS)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_same_as_pymongo(deployment, scenario):
    expected = harness.run("pymongo", scenario, deployment)
    actual = harness.run("singlemongo", scenario, deployment)
    assert actual["outcome"] == expected["outcome"]
    assert actual["after"] == expected["after"]
    assert actual["commands"] == expected["commands"]
