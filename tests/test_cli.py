"""The command-line tool, end to end against the simulated deployment."""
import io
import json

import pytest

from singlemongo import cli
from singlemongo.testing import ReplicaSet, Standalone


def run(*argv, stdin=""):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out, err, io.StringIO(stdin))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def rs():
    with ReplicaSet(3) as deployment:
        yield deployment


def test_insert_find_count_update_delete(rs):
    uri = ("--uri", rs.uri)
    assert run(*uri, "insert", "cli.docs", '{"a": 1}', '{"a": 2}')[0] == 0
    code, out, _ = run(*uri, "insert", "cli.docs", stdin='{"a": 3}\n{"a": 4, "d": {"$date": "2026-01-01T00:00:00Z"}}\n')
    assert code == 0 and len(json.loads(out)["insertedIds"]) == 2
    code, out, _ = run(*uri, "find", "cli.docs", "--filter", '{"a": {"$gte": 2}}', "--sort", '{"a": -1}',
                       "--projection", '{"_id": 0}')
    assert [json.loads(line)["a"] for line in out.splitlines()] == [4, 3, 2]
    assert '"$date"' in out
    assert json.loads(run(*uri, "count", "cli.docs")[1]) == 4
    code, out, _ = run(*uri, "update", "cli.docs", "--filter", '{"a": 1}', "--update", '{"$set": {"b": 1}}')
    assert json.loads(out)["modifiedCount"] == 1
    code, out, _ = run(*uri, "delete", "cli.docs", "--filter", "{}", "--many")
    assert json.loads(out)["deletedCount"] == 4
    assert run(*uri, "find-one", "cli.docs")[1].strip() == "null"


def test_canonical_output_and_aggregate(rs):
    run("--uri", rs.uri, "insert", "cli.agg", '{"k": "x", "n": 2}', '{"k": "x", "n": 3}')
    code, out, _ = run("--uri", rs.uri, "--canonical", "aggregate", "cli.agg",
                       '[{"$group": {"_id": "$k", "t": {"$sum": "$n"}}}]')
    assert code == 0 and json.loads(out) == {"_id": "x", "t": {"$numberInt": "5"}}


def test_command_and_topology(rs):
    code, out, _ = run("--uri", rs.uri, "command", "admin", '{"ping": 1}')
    assert code == 0 and json.loads(out)["ok"] == 1.0
    code, out, _ = run("--uri", rs.uri, "topology", "--json")
    doc = json.loads(out)
    assert doc["topologyType"] == "ReplicaSetWithPrimary" and len(doc["servers"]) == 3
    code, out, _ = run("--uri", rs.uri, "topology")
    assert "RSPrimary" in out


def test_ping_uses_one_connection():
    with ReplicaSet(3) as dep:
        code, out, _ = run("--uri", dep.uri, "ping")
        assert code == 0 and json.loads(out)["ok"] == 1.0
        assert dep.total_connections() == 1


def test_explain_reports_the_scan(rs):
    code, _, err = run("--uri", rs.uri, "--explain", "find-one", "cli.none")
    assert code == 0
    assert "explain: 1 scan(s), 3 connection(s) opened" in err
    assert err.count("checked") == 3


@pytest.mark.parametrize("argv,code", [
    (("--uri", "mongodb://h:99999", "ping"), cli.EXIT_CONFIG),
    (("--uri", "mongodb://127.0.0.1:1/?connectTimeoutMS=200", "count", "a.b"), cli.EXIT_CONNECT),
    (("find", "nodot"), cli.EXIT_USAGE),
    (("nosuchcommand",), cli.EXIT_USAGE),
])
def test_exit_codes(argv, code):
    assert run(*argv)[0] == code


def test_server_error_and_bad_json_exit_codes(rs):
    assert run("--uri", rs.uri, "command", "admin", '{"noSuch": 1}')[0] == cli.EXIT_SERVER
    code, _, err = run("--uri", rs.uri, "find", "a.b", "--filter", "{bad")
    assert code == cli.EXIT_USAGE and "--filter is not valid Extended JSON" in err


def test_auth_failure_exit_code():
    with Standalone(users={"u": "right"}) as s:
        uri = f"mongodb://u:wrong@{s.servers[0].address_text}/"
        code, _, err = run("--uri", uri, "count", "a.b")
        assert code == cli.EXIT_AUTH and "wrong" not in err


def test_python_dash_m_entry_point(rs):
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "singlemongo", "--uri", rs.uri, "ping"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and json.loads(out.stdout)["ok"] == 1
