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
