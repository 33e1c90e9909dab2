"""The pure core imports no socket, ssl, time, random or threading, and only clock.py reads time."""
import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "singlemongo"
CORE = ["options", "wire/messages.py", "engine/backpressure.py",
        "constants.py", "errors.py", "sdam", "selection"]
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
