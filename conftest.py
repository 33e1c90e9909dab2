"""The documentation's examples are tests (``tests/doc_examples.py``): every ``python`` and
``console`` block of the README and of the guides in ``docs/`` runs in ``make test``, and the
run ends with the count per document."""
import collections

from tests.doc_examples import sybil

pytest_collect_file = sybil(["README.md", "docs/*.md"], excludes=["docs/api/*"]).pytest()


def pytest_terminal_summary(terminalreporter):
    counts = collections.defaultdict(collections.Counter)
    for outcome in ("passed", "failed", "skipped", "error"):
        for report in terminalreporter.stats.get(outcome, []):
            path = report.nodeid.split("::")[0]
            if path.endswith(".md") and report.when in ("call", "setup"):
                if outcome != "passed" or report.when == "call":
                    counts[path][outcome] += 1
    if counts:
        terminalreporter.section("documentation examples")
        for path in sorted(counts):
            summary = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts[path].items()))
            terminalreporter.write_line(f"{path}: {summary}")
