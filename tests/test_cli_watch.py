"""`singlemongo watch`, run as a user runs it: a separate process, Extended JSON lines on
stdout, the resume token on stderr, and its exit codes (0 at --max-events, at --idle-exit
and at the end of the stream; 130 on Ctrl-C; 2 for bad arguments; 5 for a server error)."""
import os
import select
import signal
import subprocess
import sys

import pytest
from bson import json_util

import singlemongo
from singlemongo.testing import ReplicaSet, Standalone

from .util import wait_or_explain

CLI = [sys.executable, "-m", "singlemongo"]
TOKEN_PREFIX = "resume token: "


@pytest.fixture()
def rs():
    with ReplicaSet(1) as deployment:
        yield deployment


def watch(uri, *args, timeout=60):
    done = subprocess.run(CLI + ["--uri", uri, "watch", *args], capture_output=True,
                          text=True, timeout=timeout)
    changes = [json_util.loads(line) for line in done.stdout.splitlines()]
    return done.returncode, changes, done.stderr


def token_in(stderr):
    lines = [line for line in stderr.splitlines() if line.startswith(TOKEN_PREFIX)]
    assert len(lines) == 1, stderr
    return lines[0][len(TOKEN_PREFIX):]


def start_token(coll):
    """Where a stream opened now starts (a user's earlier run would have printed it)."""
    with coll.watch() as stream:
        assert stream.try_next() is None
        return json_util.dumps(stream.resume_token)


def watcher_after_one_change(rs, *args):
    """(process, the first line it printed): a watcher of app.jobs started before an insert
    of {_id: "a"}, once it printed that change."""
    coll = singlemongo.MongoClient(rs.uri).app.jobs
    begin = start_token(coll)
    coll.insert_one({"_id": "a"})
    proc = subprocess.Popen(CLI + ["--uri", rs.uri, "watch", "app.jobs", "--resume-after",
                                   begin, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(os.environ, PYTHONFAULTHANDLER="1"))
    if not select.select([proc.stdout], [], [], 20)[0]:
        proc.kill()
        proc.wait()
        pytest.fail("no change printed within 20 s")
    return proc, os.read(proc.stdout.fileno(), 65536).decode().splitlines()[0]


def test_max_events_then_continue_from_the_printed_token_until_idle(rs):
    """The token printed at --max-events continues the stream in a later run: together the
    two runs print every change once, in order; both exit 0."""
    coll = singlemongo.MongoClient(rs.uri).app.jobs
    begin = start_token(coll)
    coll.insert_many([{"_id": i} for i in range(3)])
    coll.update_one({"_id": 1}, {"$set": {"done": True}})
    coll.delete_one({"_id": 2})
    code, first, err = watch(rs.uri, "app.jobs", "--resume-after", begin, "--max-events", "3")
    assert code == 0 and len(first) == 3, err
    assert json_util.loads(token_in(err)) == first[-1]["_id"]
    code, rest, err = watch(rs.uri, "app.jobs", "--resume-after", token_in(err),
                            "--idle-exit", "0.3", "--full-document", "updateLookup")
    assert code == 0, err
    assert [(c["operationType"], c["documentKey"]["_id"]) for c in first + rest] == [
        ("insert", 0), ("insert", 1), ("insert", 2), ("update", 1), ("delete", 2)]
    assert rest[0]["fullDocument"] == {"_id": 1, "done": True}  # updateLookup
    assert token_in(err)  # the batch's token: a third run would start after the delete


def test_a_database_stream_with_a_pipeline_ends_with_the_database(rs):
    """A database's stream ends (exit 0) at its invalidate event, after dropDatabase; the
    --pipeline stages filter what is printed."""
    db = singlemongo.MongoClient(rs.uri).shop
    begin = start_token(db)
    db.orders.insert_one({"_id": 1})
    db.items.insert_one({"_id": 2})
    db.orders.update_one({"_id": 1}, {"$set": {"x": 1}})
    singlemongo.MongoClient(rs.uri).drop_database("shop")
    code, changes, err = watch(rs.uri, "shop", "--resume-after", begin, "--pipeline",
                               '[{"$match": {"operationType": {"$ne": "update"}}}]')
    assert code == 0, err
    assert [c["operationType"] for c in changes] == ["insert", "insert", "drop", "drop",
                                                     "dropDatabase", "invalidate"]


def test_ctrl_c_exits_130_with_the_token_of_the_last_change(rs):
    """Ctrl-C (SIGINT) while the watcher waits for changes: exit 130, and the last token on
    stderr, as for every other end. (An interrupt landing between a change's write and the
    watcher's note of it prints the token before it: that change is printed again by a
    resumed run, never lost. The pause lets the watcher reach its wait first.)"""
    import time
    proc, line = watcher_after_one_change(rs)
    try:
        time.sleep(0.5)  # the watcher is back in its getMore
        proc.send_signal(signal.SIGINT)
        code = wait_or_explain(proc, 20)
        err = proc.stderr.read().decode()
    finally:
        proc.kill()
        proc.wait()
    assert code == 130, err
    change = json_util.loads(line)
    assert change["documentKey"] == {"_id": "a"}
    assert json_util.loads(token_in(err)) == change["_id"]
    assert "interrupted" in err


@pytest.mark.parametrize("args, message", [
    (["app.jobs", "--max-events", "0"], "--max-events must be at least 1"),
    (["app.jobs", "--idle-exit", "-1"], "--idle-exit must be a number of seconds above 0"),
    (["app.jobs", "--pipeline", '{"$match": {}}'], "--pipeline"),
    (["app.", "--max-events", "1"], "expected DATABASE or DATABASE.COLLECTION"),
    (["app.jobs", "--full-document", "sometimes"], "invalid choice"),
])
def test_bad_arguments_exit_2_naming_the_problem(rs, args, message):
    """Bad input: exit 2 and one line naming the argument, before anything is sent."""
    code, changes, err = watch(rs.uri, *args)
    assert code == 2 and not changes
    assert message in err and "Traceback" not in err


def test_a_standalone_cannot_be_watched_exit_5():
    """A server error (a standalone has no change streams: 40573) exits 5 with its message;
    no token was ever seen, so none is printed."""
    with Standalone() as standalone:
        code, changes, err = watch(standalone.uri, "app.jobs", "--max-events", "1")
    assert code == 5 and not changes
    assert "40573" in err and TOKEN_PREFIX not in err


def test_a_broken_pipe_prints_the_token_of_the_last_change_written(rs):
    """Issue 46 (`singlemongo watch | head -1`): after the reader went away, the token on
    stderr is that of the last change actually written, so a run resumed from it prints the
    change that could not be written. Before, it was the unwritten change's token: resuming
    skipped that change."""
    proc, line = watcher_after_one_change(rs)
    first = json_util.loads(line)
    try:
        proc.stdout.close()  # the reader goes away, as head -1 does
        singlemongo.MongoClient(rs.uri).app.jobs.insert_one({"_id": "b"})
        code = wait_or_explain(proc, 20)
        err = proc.stderr.read().decode()
    finally:
        proc.kill()
        proc.wait()
    assert code == 141, err
    assert first["documentKey"] == {"_id": "a"}
    assert json_util.loads(token_in(err)) == first["_id"]
    code, rest, err = watch(rs.uri, "app.jobs", "--resume-after", token_in(err),
                            "--max-events", "1")
    assert code == 0 and rest[0]["documentKey"] == {"_id": "b"}, err


def _stalled_watcher(rs, *args):
    """A watcher that printed one change, whose server then stops answering (its getMores,
    and any new connection's handshake, hang)."""
    proc, _ = watcher_after_one_change(rs, *args)
    rs.primary.fail("*", commands=("getMore", "aggregate", "hello", "isMaster",
                                   "killCursors"), action="hang", times=None)
    return proc


def test_idle_exit_ends_the_run_when_the_server_stops_answering(rs):
    """Issue 46: ``--idle-exit 2`` never exited when the server stopped answering getMore
    (the getMore waited for ever). Each wait is bounded, so the run ends soon after the
    idle time (here 1 s), exit 0, with the token."""
    import time
    proc = _stalled_watcher(rs, "--idle-exit", "1")
    started = time.monotonic()
    try:
        code = wait_or_explain(proc, 20)
        err = proc.stderr.read().decode()
    finally:
        proc.kill()
        proc.wait()
        rs.primary.clear_faults()
    assert code == 0, err
    assert time.monotonic() - started < 8
    assert token_in(err)


def test_ctrl_c_exits_at_once_when_the_server_stops_answering(rs):
    """Issue 46: Ctrl-C while the server did not answer took 10 s: closing the stream sent
    killCursors on a new connection, whose handshake waited connectTimeoutMS. Closing is
    best effort within a short bound; exit 130 with the token."""
    import time
    proc = _stalled_watcher(rs)
    try:
        time.sleep(0.8)  # in a getMore the server never answers
        proc.send_signal(signal.SIGINT)
        interrupted = time.monotonic()
        code = wait_or_explain(proc, 20)
        elapsed = time.monotonic() - interrupted
        err = proc.stderr.read().decode()
    finally:
        proc.kill()
        proc.wait()
        rs.primary.clear_faults()
    assert code == 130, err
    assert elapsed < 3, f"{elapsed:.1f} s after Ctrl-C"
    assert token_in(err)
