"""The ``singlemongo`` command against FerretDB: output, one line on failure, and the exit
statuses of docs/cli.md's table (0 success, 3 configuration, 4 no server, 5 refused by the
server, 6 authentication)."""
import json
import subprocess
import sys

import pytest

WRONG = "Zq9-not-the-password"


def _run(uri, *args, stdin=None):
    done = subprocess.run([sys.executable, "-m", "singlemongo", "--uri", uri, *args],
                          input=stdin, capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout, done.stderr


def test_insert_find_count_and_aggregate_round_trip(ferretdb):
    uri = ferretdb.uri(authSource="admin")
    assert _run(uri, "insert", "cli.items", stdin='{"_id": 1, "k": "a"}\n{"_id": 2, "k": "b"}\n'
                )[0] == 0
    status, out, err = _run(uri, "find", "cli.items", "--filter", '{"k": "b"}')
    assert (status, [json.loads(line) for line in out.splitlines()], err) == (
        0, [{"_id": 2, "k": "b"}], "")
    assert _run(uri, "count", "cli.items")[:2] == (0, "2\n")
    status, out, _ = _run(uri, "aggregate", "cli.items",
                          '[{"$group": {"_id": null, "n": {"$sum": 1}}}]')
    assert (status, json.loads(out)) == (0, {"_id": None, "n": 2})
    assert _run(uri, "delete", "cli.items", "--filter", "{}", "--many")[0] == 0


def test_ping_and_topology_see_a_standalone(ferretdb):
    uri = ferretdb.uri()
    assert _run(uri, "ping")[0] == 0
    status, out, _ = _run(uri, "topology")
    assert status == 0 and "Standalone" in out


@pytest.mark.parametrize("case, status, words", [
    ("wrong password", 6, "Authentication failed"),
    ("no credentials", 5, "requires authentication"),
    ("unknown command", 5, "no such command"),
    ("change stream", 5, ""),
    ("untrusted CA", 4, "certificate"),
    ("bad option", 3, "tlsCAFile"),
])
def test_each_failure_is_one_line_and_its_exit_status(ferretdb, case, status, words):
    args = {
        "wrong password": (ferretdb.uri().replace(ferretdb.password, WRONG), "ping"),
        "no credentials": (ferretdb.uri(auth=False), "find", "cli.items"),
        "unknown command": (ferretdb.uri(), "command", "admin", '{"noSuchCommand": 1}'),
        "change stream": (ferretdb.uri(), "watch", "cli.items", "--max-events", "1"),
        "untrusted CA": (ferretdb.uri(tls=True, tlsCAFile=ferretdb.other_ca_file), "ping"),
        "bad option": (ferretdb.uri(tls=True, tlsCAFile="/nonexistent/ca.pem"), "ping"),
    }[case]
    got, out, err = _run(*args)
    assert got == status, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("singlemongo: ") and words in err
    assert ferretdb.password not in err and WRONG not in err
