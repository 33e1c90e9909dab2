"""Run PyMongo's own test modules with one driver: ``python tests/pymongo_suite/run_suite.py
DRIVER ROOT OUT.json MODULE...`` (a script, not ``-m``: the suite has its own ``test``
package). A simulated replica set named ``rs`` listens on 127.0.0.1:27017 (where the suite
looks for MongoDB), its members announcing themselves as localhost. ``singlemongo`` installs
itself as pymongo first (PyMongo's internal modules, which only the suite's helpers import,
are loaded from PyMongo's files: ``internals.py``); ``pymongo`` is PyMongo itself, the
control. Every test's outcome goes to OUT.json."""
import json
import os
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))  # this checkout, for tests.ecosystem

from tests.ecosystem.run_suite import Outcomes, run_pytest, run_pytest_against  # noqa: E402

# Where the suite looks for MongoDB (its own DB_PORT variable), 27017 unless set.
PORT = int(os.environ.get("DB_PORT", "27017"))


DEPRECATIONS_ASSERTED = "error::DeprecationWarning:test.test_read_preferences"


class Messages(Outcomes):
    """Outcomes, each failure's last error line (what compare.py classifies), and each
    skip's reason as the suite gives it."""

    def __init__(self):
        super().__init__()
        self.messages = {}
        self.durations = {}  # seconds per test (setup, call and teardown): the time budget

    def pytest_runtest_setup(self, item):
        # A test's MongoClient() without a host (TestErrorPropagationAfterEncountering
        # MultipleErrors' setup client) means MongoClient.HOST and PORT: where the suite's
        # server is (each driver's simulated replica set has a port of its own, so that the
        # run passes beside a server on 27017). test_client's test_constants sets PORT =
        # 123456789 and restores it only if it passes; the next test starts from here again.
        import pymongo
        pymongo.MongoClient.HOST = os.environ.get("DB_IP", "localhost")
        pymongo.MongoClient.PORT = int(os.environ.get("DB_PORT", str(PORT)))

    def pytest_runtest_teardown(self, item):
        import pymongo
        pymongo.MongoClient.HOST, pymongo.MongoClient.PORT = "localhost", 27017

    def pytest_runtest_logreport(self, report):
        super().pytest_runtest_logreport(report)
        self.durations[report.nodeid] = self.durations.get(report.nodeid, 0) + report.duration
        if report.outcome == "skipped" and isinstance(report.longrepr, tuple):
            reason = str(report.longrepr[2])
            self.messages[report.nodeid] = reason.removeprefix("Skipped: ")[:500]
        if report.outcome == "failed":
            lines = [line for line in report.longreprtext.splitlines() if line.startswith("E ")]
            self.messages[report.nodeid] = (lines[-1] if lines else "")[:500]


def _with_test_commands_flag(command, reply):
    if command == "getParameter" and reply.get("ok") and "enableTestCommands" not in reply:
        reply = dict(reply, enableTestCommands=False)
    return reply


def main(driver, root, out, *modules):
    # realpath: a suite cache reached through a symbolic link would give every test an id
    # without its module (pytest makes ids relative to the real rootdir).
    root, out = os.path.realpath(root), os.path.abspath(out)
    if driver == "singlemongo":
        from tests.pymongo_suite import internals
        internals.install(root)
    if os.environ.get("PYMONGO_SUITE_SERVER") == "ferretdb":
        import tools.ferretdb  # noqa: F401 before the checkout leaves the path
        from tests.ferretdb.relay import Relay
    sys.path.remove(str(HERE.parent.parent))  # the suite's ``test`` package, not ours
    for name in [n for n in sys.modules if n == "tests" or n.startswith("tests.")]:
        del sys.modules[name]
    plugin = Messages()
    # PyMongo's own configuration makes warnings errors (but those it lists); its test of a
    # deprecation (assertRaises(DeprecationWarning)) relies on that, for the warnings raised
    # from its own frames.
    args = ["-m", "default or default_async", *(f"test/{m}.py" for m in modules)]
    if os.environ.get("PYMONGO_SUITE_SERVER") == "ferretdb":
        # FerretDB, a real server, started for this driver's run alone (no authentication:
        # the suite's own users are its business), where the suite looks for MongoDB.
        from tools.ferretdb import FerretDB  # imported with the checkout on the path
        server = FerretDB(auth=False).start()
        # The suite's set-up reads enableTestCommands from getParameter "*", which FerretDB
        # v1.24 does not return (a KeyError before any test): a relay adds it, false, as
        # FerretDB has no test commands. Both drivers meet the same relay.
        relay = Relay(server.address, rewrite_reply=_with_test_commands_flag).__enter__()
        os.environ["DB_IP"], os.environ["DB_PORT"] = "127.0.0.1", str(relay.address[1])
        try:
            run_pytest_against(root, args, plugin, warnings=("ignore", DEPRECATIONS_ASSERTED))
        finally:
            relay.__exit__(None, None, None)
            server.stop()
    else:
        run_pytest(root, args, plugin, PORT, warnings=("ignore", DEPRECATIONS_ASSERTED))
    with open(out, "w") as handle:
        json.dump({"outcomes": plugin.outcomes, "messages": plugin.messages,
                   "durations": plugin.durations}, handle,
                  indent=1, sort_keys=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
