"""The face's side-by-side scenarios (tests/side_by_side) on FerretDB: PyMongo 4.20 and
singlemongo on the same FerretDB instance must give the same results, the same errors (class,
code, labels), leave the same documents and send the same commands. A scenario that needs what
FerretDB v1.24 does not offer, by its documentation, is skipped with that reason; the few
where the two drivers answer FerretDB differently are listed with their cause
(tests/ferretdb/unsupported.py, docs/works-with.md)."""
import pytest

from ..side_by_side import harness
from ..test_side_by_side import SCENARIOS
from .unsupported import KNOWN_DIFFERENCES, UNSUPPORTED


def test_every_listed_scenario_exists():
    names = {s.name for s in SCENARIOS}
    assert set(UNSUPPORTED) <= names and set(KNOWN_DIFFERENCES) <= names
    assert not set(UNSUPPORTED) & set(KNOWN_DIFFERENCES)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
def test_same_as_pymongo_on_ferretdb(ferretdb_deployment, scenario):
    if scenario.name in UNSUPPORTED:
        pytest.skip(f"not on FerretDB v1.24: {UNSUPPORTED[scenario.name]}")
    expected = harness.run("pymongo", scenario, ferretdb_deployment)
    actual = harness.run("singlemongo", scenario, ferretdb_deployment)
    if scenario.name in KNOWN_DIFFERENCES:
        pymongo_error, _ = KNOWN_DIFFERENCES[scenario.name]
        assert expected["outcome"].get("<error>") == pymongo_error
        assert actual["outcome"] != expected["outcome"]
        return
    assert actual["outcome"] == expected["outcome"]
    assert actual["after"] == expected["after"]
    assert actual["commands"] == expected["commands"]
