"""Typing checks with mypy (pinned in the test extra).

A user's code is checked with ``--strict`` as it would be against an installed singlemongo:
errors inside the library are the library's, not the user's (mypy does not report them for
installed packages either), but every type it exports must be precise enough that the user's
code passes and no ``Any`` leaks where PyMongo has a type (tests/typing/user_script.py asserts
the types with ``assert_type``). The package itself is checked in mypy's default mode.
"""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
USER_CODE = [ROOT / "tests" / "typing" / "user_script.py",
             *sorted((ROOT / "examples").glob("*.py"))]


def mypy(*args, cwd):
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=240)


def test_user_code_passes_mypy_strict(tmp_path):
    """A user's everyday code and the examples pass ``mypy --strict``; a leaked Any fails an
    ``assert_type`` in tests/typing/user_script.py."""
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\nmypy_path = " + str(ROOT) + "\n"
                      "[mypy-singlemongo.*]\nignore_errors = True\n"
                      "[mypy-freezegun.*]\nignore_missing_imports = True\n")
    result = mypy("--config-file", str(config), *map(str, USER_CODE), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_leaked_any_is_caught(tmp_path):
    """The check above can fail: a script asserting a precise type for something typed Any
    is refused."""
    script = tmp_path / "leak.py"
    script.write_text("from typing import Any, assert_type\n"
                      "def f(x: Any) -> None:\n    assert_type(x, int)\n")
    result = mypy("--strict", str(script), cwd=tmp_path)
    assert result.returncode == 1 and "assert-type" in result.stdout


def test_package_passes_mypy():
    """The package in mypy's default mode (its --strict count is in the closing note)."""
    result = mypy("-p", "singlemongo", cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def _served_names():
    """(module, name) for every name a public module serves, its lazily loaded ones included
    (PEP 562 ``__getattr__`` tables, and ``__all__``)."""
    import importlib
    modules = ["singlemongo", "singlemongo.collection", "singlemongo.cursor",
               "singlemongo.command_cursor", "singlemongo.errors", "singlemongo.monitoring",
               "singlemongo.sdam", "singlemongo.testing", "singlemongo.database",
               "singlemongo.client", "singlemongo.operations", "singlemongo.results",
               "singlemongo.read_preferences", "singlemongo.write_concern",
               "singlemongo.read_concern", "singlemongo.uri_parser", "singlemongo.bulk",
               "singlemongo.change_stream", "singlemongo.client_session",
               "singlemongo.gridfs", "singlemongo.collation", "singlemongo.server_api"]
    served = []
    for name in modules:
        module = importlib.import_module(name)
        names = set(getattr(module, "__all__", ()))
        getter = module.__dict__.get("__getattr__")
        names.update(getattr(getter, "names", ()))
        for table in ("_NAMES", "_SDAM", "_LAZY", "_LOADED_AT_FIRST_USE"):
            names.update(module.__dict__.get(table, ()))
        served.extend((name, n) for n in sorted(names) if not n.startswith("_"))
    return served


def test_type_checkers_see_every_name_a_module_serves(tmp_path):
    """Issue 45: ``from pymongo.collection import ReturnDocument`` type-checks with PyMongo,
    but mypy --strict said singlemongo.collection "does not explicitly export attribute
    ReturnDocument": names served by a module's lazy ``__getattr__`` were hidden from type
    checkers. Every name a public module serves imports under --strict."""
    served = _served_names()
    assert ("singlemongo.collection", "ReturnDocument") in served
    script = tmp_path / "imports.py"
    script.write_text("".join(f"from {module} import {name} as _{i}\n"
                              for i, (module, name) in enumerate(served)))
    config = tmp_path / "mypy.ini"
    config.write_text("[mypy]\nstrict = True\nmypy_path = " + str(ROOT) + "\n"
                      "[mypy-singlemongo.*]\nignore_errors = True\n"
                      "[mypy-mongomock_ng.*]\nignore_missing_imports = True\n")
    result = mypy("--config-file", str(config), str(script), cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_names_type_checkers_read_are_the_names_served_lazily():
    """Rule: ``singlemongo._exports`` (read by type checkers only) imports each name the
    package serves on first use from the module ``_LAZY_TEXT`` serves it from, and nothing
    else: a row added to one table and not the other fails here."""
    import ast
    import singlemongo
    tree = ast.parse((ROOT / "singlemongo" / "_exports.py").read_text())
    exported = {alias.name: node.module.removeprefix("singlemongo.")
                for node in tree.body if isinstance(node, ast.ImportFrom)
                for alias in node.names}
    assert exported == singlemongo._LAZY
    assert len(singlemongo._LAZY) == 48 and singlemongo._LAZY["timeout"] == "csot"
