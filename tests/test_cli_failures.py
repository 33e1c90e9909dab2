"""The CLI on its failure paths (issue 12): no Python traceback ever reaches the user. Broken
pipes exit quietly, Ctrl-C exits 130 with one line, input that is not what a flag needs exits
2 with one line, `delete --many` needs a filter or --all, `--version` exists, and the global
flags are accepted after the subcommand too."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from singlemongo import __version__, cli
from singlemongo.testing import Standalone
from .test_cli import run
from .util import wait_or_explain

CLI = [sys.executable, "-m", "singlemongo"]


@pytest.fixture(scope="module")
def standalone():
    with Standalone() as deployment:
        deployment.store.seed("cli", "many", [{"_id": i, "pad": "x" * 100} for i in range(20000)])
        yield deployment


def _one_line(err):
    return err.endswith("\n") and err.count("\n") == 1 and "Traceback" not in err


def test_a_broken_pipe_exits_quietly(standalone):
    """`singlemongo find ... | head -1`: the reader goes away; no traceback, no "Exception
    ignored" at exit, and the conventional 141 (128 + SIGPIPE). Before: a BrokenPipeError
    traceback."""
    shell = (f"{' '.join(CLI)} --uri '{standalone.uri}' find cli.many | head -1 >/dev/null; "
             f"echo ${{PIPESTATUS[0]}} >&2")
    out = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=60)
    assert out.stderr.strip() == "141", out.stderr


def test_ctrl_c_exits_130_with_one_line(standalone):
    """SIGINT while waiting for a server: exit 130 and one line. Before: a KeyboardInterrupt
    traceback from deep inside the socket read."""
    server = standalone.servers[0]
    server.fail("find", action="hang")
    finds = server.commands["find"]
    try:
        proc = subprocess.Popen(CLI + ["--uri", standalone.uri, "find-one", "cli.many"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, PYTHONFAULTHANDLER="1"))
        deadline = time.monotonic() + 20
        while server.commands["find"] == finds and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        wait_or_explain(proc, 30)
        _, err = proc.communicate(timeout=30)
    finally:
        server.clear_faults()
    assert proc.returncode == 130
    assert _one_line(err) and "interrupted" in err


@pytest.mark.parametrize("argv", [
    ("find", "a.b", "--filter", "[1, 2]"),
    ("find", "a.b", "--filter", "5"),
    ("find", "a.b", "--sort", '"x"'),
    ("find", "a.b", "--projection", "[]"),
    ("count", "a.b", "--filter", "null"),
    ("command", "admin", "[1]"),
    ("insert", "a.b", "5"),
    ("update", "a.b", "--filter", "{}", "--update", "[1]"),
    ("aggregate", "a.b", '{"$match": {}}'),
], ids=lambda a: " ".join(a))
def test_json_of_the_wrong_shape_exits_2_with_one_line(standalone, argv):
    """Rule: a flag that needs a JSON object (or array) names itself and what it got.
    Before: TypeError or AttributeError tracebacks."""
    code, _, err = run("--uri", standalone.uri, *argv)
    assert code == cli.EXIT_USAGE and _one_line(err), err


@pytest.mark.parametrize("text", [
    '{"_id": {"$oid": "zz"}}',
    '{"n": {"$numberDecimal": "abc"}}',
    '{"d": {"$date": "yesterday"}}',
    '{"b": {"$binary": {"base64": "AA==", "subType": "100"}}}',
    '{"t": {"$timestamp": {"t": "x", "i": 1}}}',
    '{"n": {"$numberLong": "x"}}',
    "[" * 100_000 + "]" * 100_000,
    '{"a": ' * 150 + "1" + "}" * 150,
], ids=["bad $oid", "bad $numberDecimal", "bad $date", "bad $binary", "bad $timestamp",
         "bad $numberLong",
        "100,000 levels", "150 levels"])
def test_bad_extended_json_and_deep_nesting_exit_2_with_one_line(standalone, text):
    """Rule: input Extended JSON cannot parse, or nests deeper than MongoDB's 100 levels, is
    a usage error. Before: InvalidId, decimal.InvalidOperation and RecursionError tracebacks."""
    code, _, err = run("--uri", standalone.uri, "find-one", "a.b", "--filter", text)
    assert code == cli.EXIT_USAGE and _one_line(err), err[:300]


def test_non_utf8_stdin_exits_2_with_one_line(standalone):
    """Rule: stdin that is not UTF-8 is a usage error. Before: a UnicodeDecodeError traceback."""
    proc = subprocess.run(CLI + ["--uri", standalone.uri, "insert", "cli.bytes"],
                          input=b'{"a": "\xff\xfe"}\n', capture_output=True, timeout=60)
    err = proc.stderr.decode()
    assert proc.returncode == cli.EXIT_USAGE and _one_line(err) and "UTF-8" in err, err


def test_delete_many_needs_a_filter_or_all(standalone):
    """Rule: `delete --many` without --filter refuses, unless --all says so; nothing is
    deleted by a forgotten flag. Before: it deleted every document."""
    uri = ("--uri", standalone.uri)
    run(*uri, "insert", "cli.del", '{"a": 1}', '{"a": 2}')
    code, _, err = run(*uri, "delete", "cli.del", "--many")
    assert code == cli.EXIT_USAGE and _one_line(err) and "--all" in err
    assert json.loads(run(*uri, "count", "cli.del")[1]) == 2
    code, out, _ = run(*uri, "delete", "cli.del", "--many", "--all")
    assert code == 0 and json.loads(out)["deletedCount"] == 2
    code, _, err = run(*uri, "delete", "cli.del", "--all", "--filter", "{}")
    assert code == cli.EXIT_USAGE and "either" in err


def test_version():
    """`--version` prints the version and exits 0."""
    code, out, _ = run("--version")
    assert code == 0 and out.strip() == f"singlemongo {__version__}"


def test_global_flags_after_the_subcommand(standalone):
    """Rule: --uri, --canonical and --explain work after the subcommand too. Before: "unrecognized
    arguments"."""
    run("--uri", standalone.uri, "insert", "cli.flags", '{"n": 1}')
    code, out, err = run("count", "cli.flags", "--uri", standalone.uri, "--canonical", "--explain")
    assert code == 0 and json.loads(out) == {"$numberInt": "1"} and "explain:" in err


def test_an_unexpected_error_is_one_line_with_a_hint(standalone, monkeypatch):
    """Whatever the driver did not foresee (here a bug planted in find_one) is one line that
    says how to see the traceback, which SINGLEMONGO_DEBUG=1 shows."""
    from singlemongo.collection import Collection

    def broken(self, *args, **kwargs):
        raise TypeError("planted")
    monkeypatch.setattr(Collection, "find_one", broken)
    code, _, err = run("--uri", standalone.uri, "find-one", "a.b")
    assert code == cli.EXIT_INTERNAL and _one_line(err) and "SINGLEMONGO_DEBUG=1" in err
    monkeypatch.setenv("SINGLEMONGO_DEBUG", "1")
    with pytest.raises(TypeError, match="planted"):
        run("--uri", standalone.uri, "find-one", "a.b")
