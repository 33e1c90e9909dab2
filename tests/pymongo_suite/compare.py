"""``make pymongo-suite``: every synchronous module of PyMongo's own test suite (the
``test/test_*.py`` of its sdist) against a simulated replica set, with PyMongo (the control)
and with singlemongo through ``install_as_pymongo()``, each in its own process and against its
own replica set, the two at once; prints the per-module table and the per-test comparison,
and exits 1 on a regression, that is a test PyMongo passes and singlemongo does not, unless it
is listed in ``known.py`` with its reason (a PyMongo internal it reads, or a documented
difference).

``python -m tests.pymongo_suite.compare [MODULE ...]`` runs some modules only."""
import builtins
import json
import os
import pathlib
import subprocess
import sys
import tempfile

from tests.pymongo_suite.known import (INTERNALS, control_reason, known_reason,
                                       remaining_reason)
from tests.pymongo_suite.sources import pymongo_suite

HERE = pathlib.Path(__file__).resolve().parent
# Where each driver's replica set listens (the suite's DB_PORT): neither on 27017, so that a
# test that connects to the default port reaches no driver's replica set (the other's, when
# the two run at once) and fails alike with both, and a mongod left on 27017 is no matter.
PORTS = (27217, 27117)
def all_modules(root):
    """Every synchronous module of the suite: ``test/test_*.py`` (the asynchronous ones are
    in ``test/asynchronous/``)."""
    return sorted(path.stem for path in (pathlib.Path(root) / "test").glob("test_*.py"))


def unified_modules(root):
    """The modules that run PyMongo's unified-format runner (``test/unified_format.py``)."""
    return {path.stem for path in (pathlib.Path(root) / "test").glob("test_*.py")
            if "generate_test_classes" in path.read_text(encoding="utf-8")}


def report_unified(control, ours, internals, modules):
    """The unified-format runner's count: the tests of ``modules`` PyMongo passes, and of
    those, singlemongo's passes and the listed ones."""
    tests = [t for t, o in control.items() if o == "passed"
             and t.split("::")[0].rpartition("/")[2].removesuffix(".py") in modules]
    passed = sum(ours.get(t) == "passed" for t in tests)
    known = sum(t in internals for t in tests)
    print(f"\nPyMongo's unified-format runner ({len(modules)} modules): PyMongo passes "
          f"{len(tests)}, singlemongo {passed}, listed (internals, differences) {known}")


def start(driver, root, modules, out_dir, port):
    """The run of ``driver`` over ``modules`` against its own replica set on ``port``."""
    out = pathlib.Path(out_dir) / f"{driver}.json"
    process = subprocess.Popen([sys.executable, str(HERE / "run_suite.py"), driver, str(root),
                                str(out), *modules], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env={**os.environ,
                                                               "DB_PORT": str(port)})
    return driver, process, out, port


def finish(run):
    driver, process, out, port = run
    process.wait(timeout=5400)
    if not out.exists():
        raise SystemExit(f"the {driver} run left no outcomes (is 127.0.0.1:{port} in use?)")
    return json.loads(out.read_text())


def _own_private_names(cache={}):
    """The private names singlemongo's own code defines (methods, attributes set on self)."""
    if not cache:
        import re
        package = pathlib.Path(__file__).resolve().parents[2] / "singlemongo"
        cache["names"] = {name for path in package.rglob("*.py") for name in re.findall(
            r"(?:def |self\.)(_[a-z]\w*)\b", path.read_text())}
    return cache["names"]


def internal_reason(test, message):
    """The internal a failing test needs, or None: a placeholder for a PyMongo internal it
    imports (``internals.PyMongoInternal``), a private attribute of a client, database,
    collection, cursor or session that singlemongo does not have, or a listed test."""
    import re
    from tests.pymongo_suite.internals import MARKER
    from tests.pymongo_suite.known import INTERNAL_MESSAGES
    for text, reason in INTERNAL_MESSAGES:
        if text in message:
            return reason
    if MARKER in message:
        return message[message.index(MARKER) + len(MARKER) + 2:].strip()
    if "PyMongoInternal" in message:  # a placeholder used in an expression
        return "a PyMongo internal imported by name (a placeholder here)"
    private = re.search(r"(?:has no attribute|does not have the attribute) '(_\w+)'", message)
    holder = re.search(r"'(\w+)' object (?:has no attribute|does not have)", message)
    foreign = holder is not None and holder.group(1) in vars(builtins) and \
        private is not None and private.group(1) in _own_private_names()
    if private and "AttributeError" in message and not foreign:
        # A private name of singlemongo's own, looked up on a builtin ('dict' object has no
        # attribute '_for_operation'), is the driver reaching into what it was wrongly
        # given, not a test reading a PyMongo internal: a regression.
        return f"private attribute {private.group(1)}"
    option = re.search(r"Unknown option: (_\w+)\.", message)
    if option:
        return f"private MongoClient keyword {option.group(1)}"
    return INTERNALS.get(test)


def compare(control, ours, messages=None):
    """(rows, regressions, internals): rows per module (passed with PyMongo, passed with
    singlemongo, regressions, known), the unexplained regressions, and {test: internal}."""
    rows, regressions, internals = {}, [], {}
    messages = messages or {}
    for test, outcome in sorted(control.items()):
        module = test.split("::")[0].rpartition("/")[2].removesuffix(".py")
        row = rows.setdefault(module, [0, 0, 0, 0, 0])
        if outcome != "passed":
            row[4] += 1
            continue
        row[0] += 1
        reason = internal_reason(test, messages.get(test, ""))
        if ours.get(test) == "passed":
            row[1] += 1
        elif reason is not None or known_reason(test) is not None:
            row[3] += 1
            internals[test] = reason or known_reason(test)
        else:
            row[2] += 1
            regressions.append((test, ours.get(test, "not run"), messages.get(test, "")))
    return rows, regressions, internals


def report_control(control, messages):
    """PyMongo's own failures on the simulator, each with its cause (CONTROL_FAILS), and the
    tests its suite skips here, with the suite's reason; returns the unexplained failures."""
    server = os.environ.get("PYMONGO_SUITE_SERVER", "simulator")
    failed = sorted(t for t, o in control.items() if o in ("failed", "error"))
    skipped = sorted(t for t, o in control.items() if o == "skipped")
    causes = {t: control_reason(t, messages.get(t, ""), server) for t in failed}
    unexplained = [t for t in failed if causes[t] is None]
    where = {"ferretdb": "FerretDB"}.get(server, "the simulator")
    print(f"\nPyMongo's own failures on {where}: {len(failed)}, of which "
          f"{len(unexplained)} not explained")
    for test in failed:
        print(f"  {test}: {causes[test] or 'NOT EXPLAINED: ' + messages.get(test, '')}")
    print(f"\nTests PyMongo's suite skips here, with its reason: {len(skipped)}")
    for test in skipped:
        print(f"  {test}: {messages.get(test, '(no reason given)')}")
    return unexplained


def run_both(root, modules):
    """Both drivers' runs ({"outcomes", "messages", "durations"}); with PYMONGO_SUITE_KEEP set
    to a directory they are kept there, and with PYMONGO_SUITE_FROM read from there (the
    report re-made without running the suite)."""
    saved = os.environ.get("PYMONGO_SUITE_FROM")
    if saved:
        return tuple(json.loads(pathlib.Path(saved, f"{name}.json").read_text())
                     for name in ("pymongo", "singlemongo"))
    with tempfile.TemporaryDirectory() as tmp:
        # The two drivers at once, each against its own replica set: the suite waits more
        # than it computes (about 40% of a core each).
        runs = [start("pymongo", root, modules, tmp, PORTS[0]),
                start("singlemongo", root, modules, tmp, PORTS[1])]
        results = tuple(finish(run) for run in runs)
    if os.environ.get("PYMONGO_SUITE_KEEP"):
        for name, run in zip(("pymongo", "singlemongo"), results):
            pathlib.Path(os.environ["PYMONGO_SUITE_KEEP"], f"{name}.json").write_text(
                json.dumps(run))
    return results


def main(argv):
    # In name order, as PyMongo's own runs collect them: a module may leave a collection that
    # the next one in another order trips over (test_collation's "coll" before
    # test_read_concern's create_collection).
    root = pymongo_suite()
    modules = sorted(argv or all_modules(root))
    run_control, run_ours = run_both(root, modules)
    control, run_control_messages = run_control["outcomes"], run_control["messages"]
    rows, regressions, internals = compare(control, run_ours["outcomes"], run_ours["messages"])
    print(f"{'module':28} {'PyMongo':>8} {'ours':>6} {'regr.':>6} {'known':>6} "
          f"{'PyMongo fail/skip':>18}")
    totals = [0] * 5  # passed with PyMongo, ours, regressions, internals, PyMongo's failures
    for module, row in sorted(rows.items()):
        print(f"{module:28} {row[0]:8} {row[1]:6} {row[2]:6} {row[3]:6} {row[4]:18}")
        totals = [a + b for a, b in zip(totals, row)]
    print(f"{'total':28} {totals[0]:8} {totals[1]:6} {totals[2]:6} {totals[3]:6} "
          f"{totals[4]:18}")
    report_control(control, messages=run_control_messages)
    print(f"\nTests of PyMongo internals, and documented differences (README), each with "
          f"its reason: {len(internals)}")
    for test, reason in sorted(internals.items()):
        print(f"  {test}: {reason}")
    report_unified(control, run_ours["outcomes"], internals,
                   unified_modules(root) & set(modules))
    remaining = [r for r in regressions if remaining_reason(r[0]) is not None]
    regressions = [r for r in regressions if remaining_reason(r[0]) is None]
    if remaining:
        print(f"\nKnown regressions still open (issue 56), each with what was found: "
              f"{len(remaining)}")
        for test, outcome, message in remaining:
            print(f"  {test}: {remaining_reason(test)} [{outcome} {message[:120]}]")
    if regressions:
        print(f"\nRegressions (pass with PyMongo, not with singlemongo): {len(regressions)}")
        for test, outcome, message in regressions:
            print(f"  {test}: {outcome} {message[:160]}")
    if regressions and os.environ.get("PYMONGO_SUITE_REPORT_ONLY"):
        print(f"\n{len(regressions)} regression(s) reported, not failed "
              f"(PYMONGO_SUITE_REPORT_ONLY is set)")
        return 0
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
