"""The official unified-format suites (SDAM, load balancers, client backpressure, retryable
reads and writes, CRUD, logging, sessions, transactions) on the simulated deployments.

Every test passes, is skipped for one of the reviewed reasons in tests/unified/skips.py, or is
an expected failure naming the issue that fixes the driver for it."""
import pytest

from .spec_files import collect
from .unified.environment import PREFERENCE
from .unified.runner import Runner
from .unified.skips import Skip, expected_failure, missing_api


# Issue 14: these run on every simulated topology their requirements accept, not only the
# first (transactions pin a mongos, and a load balancer's one connection, differently).
EVERY_TOPOLOGY = ("sessions/", "transactions/unified/")
VALID_FAIL = "unified-test-format/valid-fail/"


def _items():
    for rel, path, fmt, doc in collect():
        # The format's invalid files (a tree given through SINGLEMONGO_SPEC_TESTS may hold
        # them) need its JSON schema to be rejected, which no tree here ships: not run.
        if fmt != "unified" or "unified-test-format/invalid/" in rel:
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
    runner = Runner(request, doc, test, rel, topology)
    try:
        if VALID_FAIL in rel:
            must_fail(runner)
        else:
            runner.run()
    except Skip as skip:
        pytest.skip(skip.reason)


def must_fail(runner):
    """The format's valid-fail files: well-formed tests that a conforming runner fails (a
    missing entity, a wrong count, an operation error not expected, ...)."""
    try:
        runner.run()
    except Skip as skip:
        if skip.reason.startswith(missing_api("")):
            return  # "a runner MUST raise an error" for an operation it does not support
        raise
    except Exception:
        return
    pytest.fail("the runner passed a test the format says must fail")
