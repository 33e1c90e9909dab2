"""``make pymongo-suite``: PyMongo's own synchronous test modules against a simulated replica
set, with PyMongo (the control) and with singlemongo through ``install_as_pymongo()``, each in
its own process; prints the per-test comparison and exits 1 on a regression, that is a test
PyMongo passes and singlemongo does not, unless it is listed in ``known.py`` with its reason
(a PyMongo internal it reads, or a documented difference).

``python -m tests.pymongo_suite.compare [MODULE ...]`` runs some modules only."""
import json
import pathlib
import subprocess
import sys
import tempfile

from tests.pymongo_suite.known import INTERNALS, DIFFERENCES, CONTROL_FAILS, known_reason
from tests.pymongo_suite.sources import pymongo_suite

HERE = pathlib.Path(__file__).resolve().parent
# The modules covering the public API (issue 45's list).
MODULES = ("test_collection", "test_cursor", "test_database", "test_client", "test_bulk",
           "test_session", "test_transactions", "test_gridfs", "test_gridfs_bucket",
           "test_grid_file", "test_read_preferences", "test_change_stream", "test_custom_types",
           "test_raw_bson", "test_errors", "test_uri_parser", "test_uri_spec", "test_results",
           "test_operations", "test_collation", "test_read_concern", "test_write_concern",
           "test_monitoring", "test_comment", "test_common", "test_examples",
           "test_default_exports")


def run(driver, root, modules, out_dir):
    out = pathlib.Path(out_dir) / f"{driver}.json"
    subprocess.run([sys.executable, str(HERE / "run_suite.py"), driver, str(root), str(out),
                    *modules], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=3600)
    if not out.exists():
        raise SystemExit(f"the {driver} run left no outcomes (is 127.0.0.1:27017 in use?)")
    return json.loads(out.read_text())


def compare(control, ours):
    """(rows, regressions): rows per module (passed with PyMongo, passed with singlemongo,
    regressions, known), regressions the unexplained tests."""
    rows, regressions = {}, []
    for test, outcome in sorted(control.items()):
        module = test.split("::")[0].rpartition("/")[2].removesuffix(".py")
        row = rows.setdefault(module, [0, 0, 0, 0, 0])
        if outcome != "passed":
            row[4] += 1
            continue
        row[0] += 1
        if ours.get(test) == "passed":
            row[1] += 1
        elif known_reason(test) is not None:
            row[3] += 1
        else:
            row[2] += 1
            regressions.append((test, ours.get(test, "not run")))
    return rows, regressions


def main(argv):
    modules = argv or MODULES
    root = pymongo_suite()
    with tempfile.TemporaryDirectory() as tmp:
        control = run("pymongo", root, modules, tmp)
        ours = run("singlemongo", root, modules, tmp)
    rows, regressions = compare(control, ours)
    print(f"{'module':28} {'PyMongo':>8} {'ours':>6} {'regr.':>6} {'known':>6} "
          f"{'PyMongo fails':>14}")
    totals = [0] * 5
    for module, row in sorted(rows.items()):
        print(f"{module:28} {row[0]:8} {row[1]:6} {row[2]:6} {row[3]:6} {row[4]:14}")
        totals = [a + b for a, b in zip(totals, row)]
    print(f"{'total':28} {totals[0]:8} {totals[1]:6} {totals[2]:6} {totals[3]:6} "
          f"{totals[4]:14}")
    unlisted = sorted(t for t, o in control.items() if o != "passed" and t not in CONTROL_FAILS)
    if unlisted:
        print(f"\nPyMongo's own failures on the simulator not yet explained: {len(unlisted)}")
        for test in unlisted:
            print(f"  {test}: {control[test]}")
    if regressions:
        print(f"\nRegressions (pass with PyMongo, not with singlemongo): {len(regressions)}")
        for test, outcome in regressions:
            print(f"  {test}: {outcome}")
    print(f"\nknown: {len(INTERNALS)} tests read PyMongo internals, {len(DIFFERENCES)} are "
          f"documented differences")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
