"""Run a library's own test suite with one driver: ``python tests/ecosystem/run_suite.py
DRIVER TESTS_ROOT OUT.json`` (a script, not ``-m``: the suite has its own ``tests`` package). A simulated replica set named ``rs`` listens on 127.0.0.1:27017
(where the suites look for MongoDB), its members announcing themselves as localhost; ``singlemongo`` installs itself as pymongo first, and
``pymongo`` is PyMongo itself, the control. Every test's outcome goes to OUT.json."""
import json
import os
import sys

PORT = 27017
PORT_BUSY = 3  # exit status when something else listens on 27017


class Outcomes:
    """A pytest plugin keeping each test's outcome (a failure in setup counts as failed)."""

    def __init__(self):
        self.outcomes = {}

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            if report.nodeid not in self.outcomes or report.outcome != "passed":
                self.outcomes[report.nodeid] = report.outcome

    def pytest_collectreport(self, report):
        if report.outcome == "failed":
            self.outcomes[report.nodeid] = "error"


def main(driver, root, out):
    if driver == "singlemongo":
        import singlemongo
        singlemongo.install_as_pymongo()
    plugin = Outcomes()
    run_pytest(root, ["tests"], plugin)
    with open(out, "w") as handle:
        json.dump(plugin.outcomes, handle, indent=1, sort_keys=True)


def run_pytest(root, args, plugin, port=PORT, warnings=("ignore",)):
    """A simulated replica set named ``rs`` on 127.0.0.1:``port`` (its members announcing
    themselves as localhost), and pytest on ``args`` in ``root`` with ``plugin`` and the
    ``warnings`` filters (-W, the last one first); exits with PORT_BUSY if something else
    listens on the port."""
    from singlemongo.testing import ReplicaSet
    deployment = ReplicaSet(3, host="localhost")  # as a replica set configured by name
    deployment.servers[0].port = port
    try:
        deployment.start()
    except OSError:  # something else listens there
        deployment.stop()
        sys.exit(PORT_BUSY)
    try:
        run_pytest_against(root, args, plugin, warnings)
    finally:
        deployment.stop()


def run_pytest_against(root, args, plugin, warnings=("ignore",)):
    """pytest on ``args`` in ``root`` with ``plugin``, against the server already running
    where the suite looks for it."""
    import pytest
    os.chdir(root)
    sys.path.insert(0, root)
    pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:singlemongo",
                 *(option for w in warnings for option in ("-W", w)),
                 "--continue-on-collection-errors", "--timeout", "60", "-c",
                 os.path.join(root, "pytest.ini"), "--rootdir", root, *args],
                plugins=[plugin])

if __name__ == "__main__":
    main(*sys.argv[1:])
