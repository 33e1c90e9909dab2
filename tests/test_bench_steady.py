"""The steady-state workloads of ``make bench`` do what their rows say, with both drivers,
so that a ratio compares the same work: each row's workload, run as the bench runs it (a
process of its own), leaves the server as its description promises."""
import subprocess
import sys
from pathlib import Path

import pytest

from singlemongo.testing import Standalone

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))  # the bench's modules import each other by name
try:
    import steady  # noqa: E402
    import steady_rows  # noqa: E402
finally:
    sys.path.remove(str(BENCH))


def _run(dep, driver, row, phase="work"):
    count, make = steady.SEEDS[row]
    dep.store.seed("bench", "steady", [make(i) for i in range(count)])
    out = subprocess.run([sys.executable, str(BENCH / "steady.py"), driver, dep.uri, row, phase],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


@pytest.fixture(scope="module")
def dep():
    with Standalone() as deployment:
        yield deployment


def test_every_row_has_a_seed_and_a_workload():
    """Rule: a row the bench measures is defined here, with what it seeds."""
    assert {row for row, _, _ in steady_rows.ROWS} == set(steady.SEEDS)
    assert set(steady_rows.GUARDS) <= set(steady.SEEDS)
    assert steady_rows.SHORT_ROWS <= set(steady.SEEDS)  # a misspelt row would take 5 runs


@pytest.mark.parametrize("driver", ["singlemongo", "pymongo"])
def test_the_mixed_bulk_write_does_each_of_its_writes(dep, driver):
    """Rule: the bulk_write row's 10,000 models insert, update, replace, upsert and delete
    2,000 documents each (an upsert that matched, or a delete that missed, would be another
    workload)."""
    _run(dep, driver, "bulk_write")
    docs = {d["_id"]: d for d in dep.store.documents("bench", "steady")}
    assert all(100_000 + i in docs for i in range(2_000))  # inserted
    assert all(docs[i]["n"] == -i and docs[i]["v"] == 1 for i in range(2_000))  # updated
    assert all(docs[2_000 + i] == {"_id": 2_000 + i, "n": i, "s": "z" * 20}
               for i in range(2_000))  # replaced
    assert all(docs[200_000 + i] == {"_id": 200_000 + i, "n": i} for i in range(2_000))
    assert not any(4_000 + i in docs for i in range(2_000))  # deleted
    assert len(docs) == 6_000 + 2_000 + 2_000 - 2_000


@pytest.mark.parametrize("driver", ["singlemongo", "pymongo"])
def test_the_update_and_delete_rows_touch_every_document(dep, driver):
    """Rule: 10 update_many (delete_many) of 1,000 documents each: all 10,000 change."""
    _run(dep, driver, "update_many")
    assert {d["n"] - d["_id"] for d in dep.store.documents("bench", "steady")} == {1}
    _run(dep, driver, "delete_many")
    assert dep.store.documents("bench", "steady") == []


def test_the_setup_phase_leaves_the_data_alone(dep):
    """Rule: the baseline run (the one subtracted) warms up on another collection and runs
    no workload: the seeded documents are as seeded."""
    _run(dep, "singlemongo", "delete_many", phase="setup")
    assert len(dep.store.documents("bench", "steady")) == 10_000
