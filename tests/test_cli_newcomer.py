"""The CLI as a newcomer meets it (issue 49): what it says when a server is down, a URI is
mistyped, nothing answers, or a write is ambiguous. Each test failed before its fix."""
import json
import socket

import pytest

from singlemongo import cli
from singlemongo.testing import Standalone

from .test_cli import run


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _one_line(err):
    return err.endswith("\n") and err.count("\n") == 1 and "Traceback" not in err


@pytest.fixture(scope="module")
def standalone():
    with Standalone() as deployment:
        yield deployment


def test_a_mistyped_scheme_gets_a_suggestion_that_works():
    """``mongodb//127.0.0.1`` was answered with "did you mean 'mongodb://mongodb//...'"."""
    code, _, err = run("--uri", "mongodb//127.0.0.1", "ping")
    assert code == cli.EXIT_CONFIG and _one_line(err), err
    assert "'mongodb://127.0.0.1'" in err and "mongodb://mongodb" not in err


def test_a_down_server_is_one_line_naming_the_cause_without_a_cooldown_hint():
    """"One line" is promised: a down server gave three (the server lines and a hint to
    retry after the cooldown, which means nothing to a fresh process)."""
    port = _free_port()
    code, _, err = run("--uri", f"mongodb://127.0.0.1:{port}/?serverSelectionTimeoutMS=300",
                       "find-one", "app.c")
    assert code == cli.EXIT_CONNECT and _one_line(err), err
    assert f"127.0.0.1:{port}" in err and "refused" in err.lower()
    assert "cooldown" not in err


def test_ping_on_a_down_replica_set_names_each_seed():
    """``ping`` named one seed and "topology type Single" when every seed was down."""
    ports = [_free_port() for _ in range(3)]
    hosts = ",".join(f"127.0.0.1:{p}" for p in ports)
    code, _, err = run("--uri", f"mongodb://{hosts}/?replicaSet=rs&connectTimeoutMS=300",
                       "ping")
    assert code == cli.EXIT_CONNECT and _one_line(err), err
    assert all(f"127.0.0.1:{p}" in err for p in ports) and "Single" not in err


def test_topology_exits_non_zero_when_no_member_answers():
    """``topology`` printed the summary and exited 0 with every member down."""
    port = _free_port()
    code, out, err = run("--uri", f"mongodb://127.0.0.1:{port}/?connectTimeoutMS=300",
                         "topology")
    assert code == cli.EXIT_CONNECT, (out, err)
    assert f"127.0.0.1:{port}" in out + err


def test_ping_explain_explains(standalone):
    """``--explain`` on ``ping`` printed nothing: the client that pinged was not the one
    explained."""
    code, _, err = run("--uri", standalone.uri, "--explain", "ping")
    assert code == 0 and "explain:" in err and "checked" in err, err


def test_a_duplicate_id_on_a_single_insert_is_a_duplicate_key_error(standalone):
    """One document inserted is ``insert_one``: a duplicate ``_id`` is DuplicateKeyError,
    not a BulkWriteError."""
    uri = ("--uri", standalone.uri)
    assert run(*uri, "insert", "app.dup", '{"_id": 1}')[0] == 0
    code, _, err = run(*uri, "insert", "app.dup", '{"_id": 1}')
    assert code == cli.EXIT_SERVER and _one_line(err) and "DuplicateKeyError" in err, err


def test_delete_without_a_filter_is_refused(standalone):
    """``delete`` without ``--filter`` deleted one arbitrary document; it needs a filter
    (``--filter '{}'`` for any one)."""
    uri = ("--uri", standalone.uri)
    run(*uri, "insert", "app.del", '{"a": 1}', '{"a": 2}')
    code, _, err = run(*uri, "delete", "app.del")
    assert code == cli.EXIT_USAGE and _one_line(err) and "--filter" in err, err
    assert json.loads(run(*uri, "count", "app.del")[1]) == 2
    code, out, _ = run(*uri, "delete", "app.del", "--filter", "{}")
    assert code == 0 and json.loads(out)["deletedCount"] == 1


@pytest.mark.parametrize("argv", [["serve", "replicaset", "--user", "ann:pw1"],
                                  ["serve", "standalone"]], ids=["replica set", "standalone"])
def test_serve_prints_its_connection_string_and_serves_until_ctrl_c(argv):
    """``singlemongo serve`` (``python -m singlemongo.testing``) starts a simulated
    deployment from the command line: the first line of stdout is a connection string that
    works as printed (with the first user's credentials), and Ctrl-C stops it, exit 0."""
    import select
    import signal
    import subprocess
    import sys

    from singlemongo import MongoClient
    from .util import wait_or_explain
    proc = subprocess.Popen([sys.executable, "-m", "singlemongo", *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert select.select([proc.stdout], [], [], 20)[0], "no connection string in 20 s"
        uri = proc.stdout.readline().decode().strip()
        client = MongoClient(uri)
        client.app.c.insert_one({"_id": 1})
        assert client.app.c.find_one() == {"_id": 1}
        client.close()
        proc.send_signal(signal.SIGINT)
        assert wait_or_explain(proc, 20) == 0
    finally:
        proc.kill()
        proc.wait()
    assert uri.startswith("mongodb://") and ("ann:pw1@" in uri) == ("--user" in argv)


@pytest.mark.parametrize("argv, words", [
    (["--user", "ann"], "NAME:PASSWORD"),
    (["--port", "70000"], "from 0 to 65535, not '70000'"),
    (["--port", "-5"], "from 0 to 65535, not '-5'"),
    (["--port", "abc"], "from 0 to 65535, not 'abc'"),
    (["--members", "-1"], "1 or more, not '-1'"),
    (["--members", "0"], "1 or more, not '0'"),
    (["standalone", "--members", "2"], "--members must be 1"),
    (["--port", "65535"], "no room for 3 members"),
    (["--tls-key", "k.pem"], "need --tls-cert"),
])
def test_serve_refuses_bad_arguments_with_one_line(argv, words, capsys):
    """Issue 57: every bad argument of ``serve`` is one line naming it and exit status 2,
    nothing served (a port out of range and --members -1 printed tracebacks, --members 0
    started 3 members, a user without a password exited 1)."""
    assert cli.main(["serve", *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1, err


def test_serve_is_listed_in_the_help(capsys):
    """Issue 57: ``singlemongo --help`` lists ``serve`` among the commands."""
    assert cli.main(["--help"]) == 0
    assert "serve a simulated deployment" in capsys.readouterr().out


@pytest.mark.parametrize("control", ["elect", "remove_member"])
@pytest.mark.parametrize("index", [5, -4, "1", True])
def test_member_controls_name_the_members_there_are(control, index):
    """Issue 57: ``elect(5)`` on a 3-member set raised a bare IndexError (and
    ``remove_member`` took any index Python's list took); each control says how many members
    there are, and nothing changes."""
    from singlemongo.testing import ReplicaSet
    with ReplicaSet(3) as rs:
        with pytest.raises(IndexError, match=rf"{control}\(.*3 member\(s\), numbered 0 to 2"):
            getattr(rs, control)(index)
        assert [s.role for s in rs.members] == ["primary", "secondary", "secondary"]


def test_add_member_names_the_roles_it_makes():
    """Issue 57: a role the simulator has no member of is refused, naming the roles."""
    from singlemongo.testing import ReplicaSet
    with ReplicaSet(1) as rs:
        with pytest.raises(ValueError, match="secondary, arbiter, hidden"):
            rs.add_member("primary-ish")
        assert len(rs.members) == 1
