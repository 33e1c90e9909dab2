"""The official unified-format suites (SDAM, load balancers, client backpressure, retryable
reads and writes, CRUD, logging, sessions, transactions) on the simulated deployments.

Every test passes, is skipped for one of the reviewed reasons in tests/unified/skips.py, or is
an expected failure naming the issue that fixes the driver for it."""
import pytest

from .spec_files import collect
from .unified.runner import Runner
from .unified.skips import Skip, expected_failure


def _items():
    for rel, path, fmt, doc in collect():
        if fmt != "unified":
            continue
        for test in doc.get("tests", ()):
            item_id = f"{rel}::{test['description']}"
            mark = expected_failure(rel, test["description"])
            yield pytest.param(rel, doc, test, id=item_id, marks=[mark] if mark else [])


ITEMS = list(_items())


@pytest.mark.parametrize("rel,doc,test", ITEMS)
def test_unified(request, rel, doc, test):
    try:
        Runner(request, doc, test, rel).run()
    except Skip as skip:
        pytest.skip(skip.reason)
