"""Project-wide test support: authenticated deployments for the unified suites, and the summary
line saying how many official spec items ran, from which tree."""
import collections
import re

import pytest

from singlemongo.testing import LoadBalancer, ReplicaSet, Sharded, Standalone

from .spec_sources import trees

KINDS = {"single": Standalone, "replicaset": ReplicaSet, "sharded": Sharded,
         "load-balanced": LoadBalancer}
SPEC_ITEM = re.compile(r"::test_(spec|unified)\[([^/\]]+)/")


@pytest.fixture(scope="session")
def authenticated_deployments():
    """``get(topology, users)``: a deployment that requires SCRAM authentication, started
    the first time a test asks for it and stopped at the end of the session."""
    started = {}

    def get(topology, users):
        key = (topology, tuple(sorted(users.items())))
        if key not in started:
            started[key] = KINDS[topology](users=users).start()
        return started[key]

    yield get
    for deployment in started.values():
        deployment.stop()


def pytest_terminal_summary(terminalreporter):
    counts = collections.defaultdict(collections.Counter)
    for outcome in ("passed", "failed", "skipped", "xfailed", "xpassed", "error"):
        for report in terminalreporter.stats.get(outcome, ()):
            found = SPEC_ITEM.search(getattr(report, "nodeid", ""))
            if found and report.when in ("call", "setup") and not (
                    outcome == "passed" and report.when == "setup"):
                kind = "unified" if found.group(1) == "unified" else "pure-format"
                counts[(found.group(2), kind)][outcome] += 1
    if not counts:
        return
    terminalreporter.section("official spec items")
    labels = {label: str(path) for label, path in trees()}
    for (tree, kind), outcomes in sorted(counts.items()):
        total = sum(outcomes.values())
        detail = ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items()))
        terminalreporter.write_line(f"{tree} ({kind}): {total} items: {detail}  "
                                    f"[{labels.get(tree, '?')}]")
