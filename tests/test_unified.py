"""The official unified-format suites (SDAM, load balancers, client backpressure, retryable
reads and writes, CRUD, logging, sessions, transactions) on the simulated deployments.

Every test passes, is skipped for one of the reviewed reasons in tests/unified/skips.py, or is
an expected failure naming the issue that fixes the driver for it."""
import pytest

from .spec_files import collect
from .unified.environment import PREFERENCE
from .unified.runner import Runner
from .unified.skips import Skip, expected_failure


# Issue 14: these run on every simulated topology their requirements accept, not only the
# first (transactions pin a mongos, and a load balancer's one connection, differently).
EVERY_TOPOLOGY = ("sessions/", "transactions/unified/")


def _items():
    for rel, path, fmt, doc in collect():
        if fmt != "unified":
            continue
        every = any(part in rel for part in EVERY_TOPOLOGY)
        for test in doc.get("tests", ()):
            mark = expected_failure(rel, test["description"])
            for topology in (PREFERENCE if every else (None,)):
                item_id = f"{rel}::{test['description']}" + (f" [{topology}]" if topology else "")
                yield pytest.param(rel, doc, test, topology, id=item_id,
                                   marks=[mark] if mark else [])


ITEMS = list(_items())


@pytest.mark.parametrize("rel,doc,test,topology", ITEMS)
def test_unified(request, rel, doc, test, topology):
    try:
        Runner(request, doc, test, rel, topology).run()
    except Skip as skip:
        pytest.skip(skip.reason)
