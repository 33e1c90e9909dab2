"""The mongosh tier: MongoDB's shell (on the official Node.js driver) against
``singlemongo serve``, started by tools/mongosh.py on free loopback ports and stopped by its
PID.

``make test`` collects this tier and skips it, with the reason printed at the end of the run:
it needs mongosh from npm. ``make test-mongosh`` installs it and sets
SINGLEMONGO_MONGOSH_TIER=1; then a mongosh that cannot run fails the run instead of skipping
it."""
import os

import pytest

from tools.mongosh import unavailable_reason

REQUIRED = os.environ.get("SINGLEMONGO_MONGOSH_TIER") == "1"


def pytest_collection_modifyitems(config, items):
    if REQUIRED:
        return
    reason = unavailable_reason()
    reason = f"run by `make test-mongosh` ({reason})" if reason else "run by `make test-mongosh`"
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.skip(reason=f"mongosh tier: {reason}"))
