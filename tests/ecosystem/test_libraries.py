"""Libraries built on PyMongo, unchanged, through ``install_as_pymongo()`` (issue 18), with
PyMongo itself as the control on the same simulated deployment. Each driver runs in its own
process (``run_app.py``, ``run_suite.py``): a process has one ``pymongo``.

Before the change none of them started: mongoengine's ``read_preference=`` was refused, it
imported ``pymongo.uri_parser``, ``pymongo.driver_info``, ``pymongo.common`` and
``gridfs``, and called ``Database.dereference``; Flask-PyMongo's ``driver=`` was an unknown
option and it imported ``pymongo.mongo_client`` and ``gridfs``."""
import json
import pathlib
import subprocess
import sys

import pytest

from singlemongo.testing import ReplicaSet

from .sources import ming_tests, mongoengine_tests

ROOT = pathlib.Path(__file__).resolve().parents[2]
PORT_BUSY = 3  # run_suite.py: something else listens on 127.0.0.1:27017
# A library's tests that fail with PyMongo itself here, each named in the README (its
# "Running PyMongo-based libraries" paragraph), with the reason. mongoengine: none since
# issue 21 (the profiler, createUser and members announced as localhost closed the last 24).
CONTROL_FAILS = {
    # It reads Ming's log from stderr, where this runner's in-process pytest captures logging.
    "ming": {"tests/test_datastore.py::TestConnectionFailure::test_connect"},
}
# Tests that pass with PyMongo and cannot with singlemongo, by design (README, "Differences
# from PyMongo"): Ming's encryption tests make a ClientEncryption (client-side field-level
# encryption is not offered).
BY_DESIGN = {"ming": "tests/test_encryption.py::"}


@pytest.fixture(scope="module")
def deployment():
    with ReplicaSet(3) as rs:
        yield rs


def _run_app(driver, module, uri):
    done = subprocess.run([sys.executable, "-m", "tests.ecosystem.run_app", driver, module, uri],
                          capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("module", ["mongoengine_app", "flask_app", "apscheduler_app",
                                    "kombu_app", "eve_app", "django_app", "limits_app",
                                    "flask_session_app", "migrations_app"])
def test_library_program_runs_as_with_pymongo(deployment, module):
    """A mongoengine Document saved, queried, referenced and stored in a FileField (GridFS);
    a Flask-PyMongo app serving requests (find_one_or_404, save_file, send_file); APScheduler's
    MongoDB job store; kombu's MongoDB transport (before, its connectTimeoutMS=None failed the
    first command with a TypeError); an Eve REST API (before, uri_parser.validate_options
    refused its connect and tz_aware keywords); Django's ORM on django-mongodb-backend (before,
    with either driver, the simulator counted 0 and failed an annotation); limits' rate
    limiters (before, with either driver, the simulator counted None hits and refused the
    moving window's second); Flask-Session's MongoDB sessions; mongodb-migrations' upgrade
    and rollback (before, its configuration's ``username=""`` was refused): the same results
    with singlemongo as with PyMongo."""
    uri = deployment.uri.replace("/?", "/ecosystem?")
    control = _run_app("pymongo", module, uri)
    ours = _run_app("singlemongo", module, uri)
    assert control["driver"].startswith("pymongo.")
    assert ours["driver"] == "singlemongo.client"  # the program used singlemongo
    assert ours["result"] == control["result"]


def _run_suite(driver, root, tmp_path):
    out = tmp_path / f"{driver}.json"
    done = subprocess.run([sys.executable, str(ROOT / "tests/ecosystem/run_suite.py"), driver,
                           str(root), str(out)], capture_output=True, text=True, timeout=600)
    if done.returncode == PORT_BUSY:
        pytest.skip("port 27017, where the library's suite looks for MongoDB, is in use")
    assert out.exists(), done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(out.read_text())


SUITES = {"mongoengine": mongoengine_tests, "ming": ming_tests}


@pytest.mark.parametrize("library", sorted(SUITES))
def test_library_suite_passes_wherever_it_passes_with_pymongo(tmp_path, library):
    """A library's own tests (mongoengine's sdist files; Ming's installed tests, most of them
    on its in-memory double "mim", which subclasses PyMongo's Database and Collection),
    against a simulated replica set "rs" on 27017: every test that passes with PyMongo passes
    with singlemongo, but for the differences by design, and every test that fails with
    PyMongo is one the README names. Before: mongoengine's 24 failed with PyMongo (issue 21);
    155 of Ming's failed with singlemongo (EncryptionError missing, mim's Database and Cursor
    reading a topology from a client of another kind, its ``_indexes`` a read-only property)."""
    root = SUITES[library]()
    control = _run_suite("pymongo", root, tmp_path)
    ours = _run_suite("singlemongo", root, tmp_path)
    passed = {test for test, outcome in control.items() if outcome == "passed"}
    assert len(passed) > 100  # the suite really ran
    unexplained = sorted(test for test, outcome in control.items()
                         if outcome in ("failed", "error")
                         and test not in CONTROL_FAILS.get(library, ()))
    assert not unexplained, unexplained
    by_design = BY_DESIGN.get(library)
    regressions = sorted(test for test in passed if ours.get(test) != "passed"
                         and not (by_design and test.startswith(by_design)))
    assert not regressions, regressions
