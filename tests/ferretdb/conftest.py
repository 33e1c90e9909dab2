"""The FerretDB tier's server: one FerretDB process for the whole run (tools/ferretdb.py),
started at the first test that asks for it and stopped by its PID at the end.

``make test`` collects this tier and skips it, with the reason printed at the end of the run:
it needs a FerretDB binary, which needs Go. ``make test-ferretdb`` sets
SINGLEMONGO_FERRETDB_TIER=1; then a FerretDB that cannot be built or started fails the run
instead of skipping it (CI must never pass without it)."""
import os

import pymongo
import pytest
from bson import Decimal128

from tools.ferretdb import VERSION, FerretDB, unavailable_reason

REQUIRED = os.environ.get("SINGLEMONGO_FERRETDB_TIER") == "1"
NOT_REQUESTED = "run by `make test-ferretdb`"


def tier_skip_reason():
    """Why this run skips the tier, or None when it runs."""
    if REQUIRED:
        return None
    reason = unavailable_reason()
    return f"{NOT_REQUESTED} ({reason})" if reason else NOT_REQUESTED


def pytest_collection_modifyitems(config, items):
    reason = tier_skip_reason()
    if reason is None:
        return
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.skip(reason=f"FerretDB tier: {reason}"))


@pytest.fixture(scope="session")
def ferretdb():
    """The running FerretDB (tools.ferretdb.FerretDB)."""
    server = FerretDB().start()  # FerretDBUnavailable fails the run: make test-ferretdb needs it
    yield server
    server.stop()


def without_decimal128(value):
    """FerretDB v1 has no Decimal128 (FerretDB/FerretDB#66, open for v1; it closes the
    connection that sends one): a seed's Decimal128 becomes the double it stands for, so the
    scenario still runs, the same for both drivers."""
    if isinstance(value, Decimal128):
        return float(value.to_decimal())
    if isinstance(value, dict):
        return {k: without_decimal128(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_decimal128(v) for v in value]
    return value


class Store:
    """What the side-by-side harness reads and writes on a simulated deployment's store
    (``reset``, ``seed``, ``documents``), done on FerretDB through PyMongo, the control."""

    KEEP = frozenset({"admin", "config", "local"})

    def __init__(self, server):
        self.client = pymongo.MongoClient(server.uri(), serverSelectionTimeoutMS=10000)

    def reset(self):
        for name in self.client.list_database_names():
            if name not in self.KEEP:
                self.client.drop_database(name)

    def seed(self, db, name, documents):
        if documents:
            self.client[db][name].insert_many([without_decimal128(d) for d in documents])

    def documents(self, db, name):
        return list(self.client[db][name].find())

    def close(self):
        self.client.close()


class Deployment:
    """FerretDB as the harness sees a deployment: its ``uri`` (the plain listener, with the
    setup user's credentials) and its ``store``."""

    def __init__(self, server):
        self.server = server
        # With a query, as the simulator's: scenarios append options with "&".
        self.uri = server.uri(authSource="admin")
        self.store = Store(server)


@pytest.fixture(scope="session")
def ferretdb_deployment(ferretdb):
    deployment = Deployment(ferretdb)
    yield deployment
    deployment.store.close()


def pytest_terminal_summary(terminalreporter):
    """One line on the tier: its counts when it ran, or why it was skipped."""
    reports = [r for outcome in ("passed", "failed", "skipped", "error")
               for r in terminalreporter.stats.get(outcome, ())
               if getattr(r, "nodeid", "").startswith("tests/ferretdb/") and
               (r.when == "call" or r.outcome != "passed")]
    if not reports:
        return
    reason = tier_skip_reason()
    if reason is not None:
        terminalreporter.write_line(f"FerretDB tier: {len(reports)} tests skipped: {reason}")
        return
    counts = {}
    for report in reports:
        counts[report.outcome] = counts.get(report.outcome, 0) + 1
    terminalreporter.write_line("FerretDB tier (FerretDB " + VERSION + "): " + ", ".join(
        f"{n} {outcome}" for outcome, n in sorted(counts.items())))
