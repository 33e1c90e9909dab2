"""Run by ``make test`` first, in a process of its own (not collected by the suite: the name
is not ``test_*.py``).

pytest rewrites the assertions of every module of singlemongo's distribution, because it
provides a pytest plugin, the first time each module is imported, and caches the result. In
a fresh clone the modules a test loads at first use are first imported inside that test,
while the simulator's threads run; there CPython 3.11 can fail the rewrite with "SystemError:
AST constructor recursion depth mismatch" (CPython gh-106905, pytest #10763; seen once in a
fresh clone's make test). Importing every module here, with no other thread, writes the
rewritten files before the suite runs. It checks, too, that every module imports alone."""
import importlib
import pkgutil
import threading

import singlemongo

NOT_IMPORTED = {"singlemongo.__main__"}  # runs the command line


def test_every_module_imports_alone_with_no_other_thread():
    """Rule: each module of the package imports in a plain environment (optional extras
    load where they are used), here before any test's threads exist."""
    assert threading.active_count() == 1
    failed, imported = [], 0
    for info in pkgutil.walk_packages(singlemongo.__path__, "singlemongo."):
        if info.name in NOT_IMPORTED:
            continue
        try:
            importlib.import_module(info.name)
        except Exception as exc:  # every failure listed, not the first alone
            failed.append(f"{info.name}: {exc!r}")
        imported += 1
    assert failed == [] and imported > 150, failed
