"""Why a unified-format test does not run here: the reviewed reasons, in one place.

A test either passes or is skipped for one of these reasons; none is skipped because it fails.
Where a test fails because the driver is wrong and the fix belongs to a later issue, it is
listed in ``EXPECTED_FAILURES`` with that issue, and runs as expected-to-fail (strict: it is
reported the day it passes).
"""
import fnmatch

import pytest

MONITOR = "needs a streaming or threaded monitor"
REQUIREMENTS = "runOnRequirements not met by the simulated deployment"
# A test run once per topology (tests/test_unified.py) on a topology its file leaves out.
OTHER_TOPOLOGY = "written for other topologies (runOnRequirements)"
FILE_SKIP = "skipped by the test file itself"
# watch() and the simulated server's event log exist; the runner's change stream operations
# (createChangeStream, iterateUntilDocumentOrError on a stream) come with the rest of issue 22.
# Collection.count and map_reduce left PyMongo in 4.0; a PyMongo 4 face has neither.
REMOVED = "PyMongo 4 removed this API, and this driver's face is PyMongo 4's"
# What the simulated deployment's query engine does not do (README, "What it does not").
SIMULATOR = "the simulated deployment does not implement"


def missing_api(name):
    return f"needs an API this driver does not have yet: {name}"


def seed_policy(rule):
    return f"the seed policy differs: {rule}"


# A test whose own steps cannot produce what it expects, whatever the driver does.
SELF_CONTRADICTORY = "the test cannot pass as written"
# PyMongo's copy of a suite from another specifications revision than the one this project
# implements (../shared/spec-tests/ATTRIBUTION.md), expecting the opposite of what it says.
OTHER_REVISION = "written for another specifications revision than this project's"
REASON_PREFIXES = (MONITOR, REQUIREMENTS, OTHER_TOPOLOGY, FILE_SKIP, SIMULATOR, REMOVED,
                   SELF_CONTRADICTORY, OTHER_REVISION, missing_api(""), seed_policy(""))


def simulator_lacks(feature):
    return f"{SIMULATOR} {feature}"


# Keys in a test's operations that ask the simulated query engine for something it does not
# do (README, "What it does not") -> what. An operation expecting an error is not counted:
# the error (often the driver's own) still runs.
SIMULATOR_GAPS = {}


def simulator_gap(operations):
    """The first feature the operations need that the simulator lacks, or None."""
    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in SIMULATOR_GAPS:
                    yield SIMULATOR_GAPS[key]
                yield from walk(value)
        elif isinstance(node, list):
            for item in node:
                yield from walk(item)
    for op in operations:
        if "expectError" not in op:
            for feature in walk(op.get("arguments", {})):
                return feature
    return None


class Skip(Exception):
    """Raised while preparing or running a test: skip it with a reviewed reason."""

    def __init__(self, reason):
        assert reason.startswith(REASON_PREFIXES), f"not a reviewed reason: {reason}"
        super().__init__(reason)
        self.reason = reason


# Tests that count heartbeats a periodic monitor sends between operations, which no static
# rule in runner.check_feasible can see: (file glob, test description glob) -> why.
MONITOR_TESTS = {
    ("*/serverMonitoringMode.json", "connect with serverMonitoringMode=*"):
        "two heartbeats after one operation: the second comes from a polling monitor",
}

MAX_ATTEMPTS_RULE = ("specs/client-backpressure.md retries an overloaded command up to "
                     "MAX_ATTEMPTS = 5 times (maxAdaptiveRetries defaults to 5 here); this later "
                     "revision expects 2")
# One socket per server (DESIGN.md): what a pool of several connections does differently.
ONE_SOCKET_RULE = ("one socket per server (DESIGN.md): two cursors or a cursor and a "
                   "transaction behind a load balancer share its connection, where this test "
                   "expects a second connection")

# (file glob, test description glob) -> the seed rule that makes the expectation differ.
SEED_POLICY = {
    ("*load_balancer/sdam-error-handling.json", "only connections for a specific serviceId*"):
        ONE_SOCKET_RULE,
    ("*load_balancer/sdam-error-handling.json", "stale errors are ignored"): ONE_SOCKET_RULE,
    ("*load_balancer/wait-queue-timeouts.json", "*"):
        ONE_SOCKET_RULE + " (maxPoolSize=1 and a wait queue timeout where it is shared)",
    ("*client-backpressure/backpressure-connection-checkin.json", "*"): MAX_ATTEMPTS_RULE,
    ("*client-backpressure/backpressure-retry-max-attempts.json", "*"):
        MAX_ATTEMPTS_RULE,
    ("*client-backpressure/getMore-retried.json", "*maxAttempts=2 times"):
        MAX_ATTEMPTS_RULE,
    ("*transactions/unified/backpressure-retryable-*.json", "*maxAttempts=2 times*"):
        MAX_ATTEMPTS_RULE,
    ("*transactions/unified/mongos-recovery-token.json", "commitTransaction retry fails on new mongos"):
        "specs/server-selection.md, \"Sharded Transactions\": every command after the first goes "
        "to the original mongos, commit retries included (DESIGN.md); this test expects the "
        "retry on another mongos",
    ("*client-backpressure/backpressure-retry-loop.json", "*does not retry if retry*=false"):
        "overload retries follow the seed's pseudocode whatever retryReads and retryWrites "
        "say (specs/client-backpressure.md, DESIGN.md \"Decisions already taken\")",
}

# (file glob, test description glob) -> the whole reason, for single tests the rules above
# cannot see. PyMongo's own runner skips both of these too.
SINGLE_TESTS = {
    ("*csot/convenient-transactions.json", "*timeoutMS is overridden inside the callback"):
        missing_api("timeoutMS as an operation option: PyMongo's face writes it as a "
                    "pymongo.timeout() block, which nests inside with_transaction's deadline "
                    "(the earlier one wins) instead of being refused"),
    ("*csot/runCursorCommand.json", "Tailable cursor awaitData iteration timeoutMS is refreshed "
                                    "for getMore - failure"):
        f"{SELF_CONTRADICTORY}: no timeoutMS is set on its client or its cursor, yet it "
        f"expects maxTimeMS on the find and a timeout error from the getMore",
    # Issue 46: the project's revision of these retryable-reads tests expects the download's
    # files query as {_id: <id>}; PyMongo's copy (and its newer gridfs/queries-use-eq.json)
    # expects {_id: {$eq: <id>}}. tests/test_unified.py runs them in the project's form.
    **dict.fromkeys([(f"*retryable_reads/unified/gridfs-download{kind}.json", "*")
                     for kind in ("", "-serverErrors")],
                    f"{OTHER_REVISION}: the files query as {{_id: {{$eq: <id>}}}}"),
    ("*gridfs/queries-use-eq.json", "download uses $eq*"):
        f"{OTHER_REVISION}: the files query as {{_id: {{$eq: <id>}}}}",
    # Issue 46: this project's revision clears the pool before the failed connection closes
    # (CMAP logging's "Connection checkout fails due to error establishing connection", load
    # balancers' "errors during authentication are processed", SDAM's
    # pool-clear-checkout-error.json); PyMongo's older copy expects closed, check-out failed,
    # then pool cleared (tests/test_failure_paths_by_feature.py checks the project's order).
    ("*connection_logging/connection-logging.json",
     "Connection checkout fails due to error establishing connection"):
        f"{OTHER_REVISION}: the pool cleared after the connection closed",
    ("*load_balancer/sdam-error-handling.json", "errors during authentication are processed"):
        f"{OTHER_REVISION}: the pool cleared after the connection closed",
}

# (file glob, test description glob) -> the issue that fixes the driver for it.
EXPECTED_FAILURES: dict = {}


def _lookup(table, file_name, description):
    for (file_glob, test_glob), reason in table.items():
        if fnmatch.fnmatch(file_name, file_glob) and fnmatch.fnmatch(description, test_glob):
            return reason
    return None


def monitor_test(file_name, description):
    return _lookup(MONITOR_TESTS, file_name, description) is not None


def seed_policy_for(file_name, description):
    """The reason a single test is skipped (a seed rule, or SINGLE_TESTS), or None."""
    rule = _lookup(SEED_POLICY, file_name, description)
    return seed_policy(rule) if rule else _lookup(SINGLE_TESTS, file_name, description)


def expected_failure(file_name, description):
    reason = _lookup(EXPECTED_FAILURES, file_name, description)
    return pytest.mark.xfail(reason=reason, strict=True) if reason else None
