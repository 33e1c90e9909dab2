"""The pure core imports no socket, ssl, time, random or threading, and only clock.py reads time."""
import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "singlemongo"
CORE = ["options", "wire", "engine/backpressure.py",
        "errors.py", "sdam", "selection.py"]
FORBIDDEN_CORE = {"socket", "ssl", "time", "random", "threading", "select", "selectors"}
NEVER = {"threading", "concurrent", "multiprocessing", "asyncio", "pymongo"}


def _imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module.split(".")[0]


def _files(names):
    for name in names:
        p = PACKAGE / name
        yield from (sorted(p.rglob("*.py")) if p.is_dir() else [p])


@pytest.mark.parametrize("path", list(_files(CORE)), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_core_module_is_pure(path):
    assert not FORBIDDEN_CORE & set(_imports(path))


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_threads_and_only_clock_reads_time(path):
    found = set(_imports(path))
    if "testing" in path.parts:
        # The simulated deployment is test support: its servers run threads of their own.
        assert "pymongo" not in found
        return
    assert not NEVER & found
    if path.name != "clock.py":
        assert not {"time", "random"} & found


# Calls that read the time or draw chance without importing time or random.
TIME_AND_CHANCE = {"now", "utcnow", "today", "urandom", "uuid1", "uuid4", "token_bytes",
                   "token_hex", "getrandbits"}
THEIR_MODULES = {"datetime", "date", "os", "uuid", "secrets"}


def _root_name(node):
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_only_clock_reads_the_date_or_draws_chance(path):
    """Only clock.py reads time or draws random numbers, through datetime, os, uuid or
    secrets too (a GridFS uploadDate read datetime.now(), which a FakeClock could not set)."""
    if path.name == "clock.py" or "testing" in path.parts:
        return
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Attribute) and n.func.attr in TIME_AND_CHANCE
             and _root_name(n.func.value) in THEIR_MODULES]
    assert not [f"line {c.lineno}: {ast.unparse(c)}" for c in calls]
