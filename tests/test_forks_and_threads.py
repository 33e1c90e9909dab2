"""Forks and threads (issues 12 and 18): a forked child never touches its parent's sockets,
and a client used from a second thread mid-operation makes it wait instead of corrupting
replies. Each test failed before the fix; its docstring says how."""
import gc
import os
import threading

import pytest

from singlemongo import errors, get_client
from singlemongo.client import MongoClient
from singlemongo.clock import FakeClock

from .util import eventually


def _in_child(work):
    """Run ``work()`` in a forked child; its exit status (0 when it returned True)."""
    pid = os.fork()
    if pid == 0:  # the child: report through the exit status only
        try:
            code = 0 if work() else 1
        except BaseException:
            code = 2
        os._exit(code)
    return os.waitpid(pid, 0)[1] >> 8


@pytest.fixture
def cursor_setup(mongo_replica_set):
    client = MongoClient(mongo_replica_set.uri, clock=FakeClock())
    coll = client.test.c
    coll.insert_many([{"i": i} for i in range(10)])
    cursor = coll.find({}, batch_size=2, sort=[("i", 1)])
    assert next(cursor)["i"] == 0
    yield client, coll, cursor
    client.close()


def test_a_child_cannot_iterate_its_parents_cursor(cursor_setup, mongo_replica_set):
    """After fork, a cursor's getMore checks the pid. Before, a child iterating the parent's
    cursor sent getMores on the parent's socket and stole its replies: the parent missed
    documents."""
    client, coll, cursor = cursor_setup

    def child():
        try:
            list(cursor)
        except errors.InvalidOperation as exc:
            return "fork" in str(exc)
        return False
    assert _in_child(child) == 0
    assert [d["i"] for d in cursor] == list(range(1, 10))  # the parent loses nothing
    assert coll.insert_one({"i": 10}).inserted_id  # ...and its socket is still in order


def test_a_child_closing_or_dropping_the_parents_cursor_kills_nothing(cursor_setup,
                                                                      mongo_replica_set):
    """Cursor close and the queue of abandoned cursors check the pid too: the child never
    kills the parent's cursor. Before, close() sent killCursors on the parent's socket."""
    client, coll, cursor = cursor_setup
    primary = mongo_replica_set.servers[0]

    def child():
        cursor.close()
        client2 = MongoClient(mongo_replica_set.uri, clock=FakeClock())
        client2.admin.command("ping")
        client2.close()
        return True
    kills = primary.commands["killCursors"]
    assert _in_child(child) == 0
    assert primary.commands["killCursors"] == kills
    assert [d["i"] for d in cursor] == list(range(1, 10))


def test_a_child_never_ends_its_parents_sessions(mongo_replica_set):
    """endSessions at exit checks the pid: a child ends only its own sessions."""
    client = MongoClient(mongo_replica_set.uri, clock=FakeClock())
    client.admin.command("ping")  # the parent's pooled session
    parent_lsid = client._topology.sessions._pool[0].lsid

    def child():
        client.close()  # what the child's atexit does too
        return True
    assert _in_child(child) == 0
    assert parent_lsid not in mongo_replica_set.sessions_ended
    client.close()
    assert eventually(lambda: parent_lsid in mongo_replica_set.sessions_ended)


def test_two_clients_alike_each_end_their_sessions_at_exit(mongo_replica_set):
    """Every open client is closed at exit, whatever other client equals it (same seeds):
    the exit registry holds clients by identity. Before, it was a WeakSet, which holds by
    equality: a second client alike was never registered, and closing the first removed
    the entry, so the second's sessions were never ended at exit."""
    import subprocess
    import sys
    code = ("import sys; from singlemongo.client import MongoClient\n"
            "a, b = MongoClient(sys.argv[1]), MongoClient(sys.argv[1])\n"
            "a.admin.command('ping'); b.admin.command('ping')\n"
            "print(b._topology.sessions._pool[0].lsid['id'].hex())\n"
            "a.close()\n")
    out = subprocess.run([sys.executable, "-c", code, mongo_replica_set.uri],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    b_session = out.stdout.strip()
    assert eventually(lambda: b_session in [s["id"].hex()
                                            for s in mongo_replica_set.sessions_ended])


def test_a_second_thread_waits_for_the_operation_in_flight(mongo_replica_set):
    """One operation at a time per client (issue 18): a second thread using the client while
    an operation is in flight waits for it to finish, as PyMongo's pool makes a thread wait
    for a connection, so libraries sharing one client across threads (mongoengine, a Flask
    app on a threaded server) work. Before, the second thread got InvalidOperation (issue 12
    had it refuse; earlier still, the two threads' replies were interleaved on one socket)."""
    client = MongoClient(mongo_replica_set.uri, clock=FakeClock())
    client.test.c.insert_one({"x": 1})
    mongo_replica_set.servers[0].fail("find", action="block", block_s=0.5)
    found = []
    worker = threading.Thread(target=lambda: found.append(client.test.c.find_one()))
    worker.start()
    assert eventually(lambda: mongo_replica_set.servers[0].commands["find"] == 1)
    client.test.c.insert_one({"x": 2})  # waits for the find, then runs
    worker.join()
    assert found[0]["x"] == 1
    log = [c for c in mongo_replica_set.servers[0].command_log if "find" in c or "insert" in c]
    assert [next(iter(c)) for c in log][-2:] == ["find", "insert"]  # never interleaved
    assert client.test.c.count_documents({}) == 2
    client.close()


def test_a_thread_waits_at_most_wait_queue_timeout(mongo_replica_set):
    """The wait is bounded (timeoutMS, else waitQueueTimeoutMS, else
    serverSelectionTimeoutMS): WaitQueueTimeoutError, a ConnectionFailure as PyMongo's,
    saying how to give each thread a client."""
    client = MongoClient(mongo_replica_set.uri, waitQueueTimeoutMS=100)
    client.test.c.insert_one({"x": 1})
    mongo_replica_set.servers[0].fail("find", action="block", block_s=1.0)
    worker = threading.Thread(target=client.test.c.find_one)
    worker.start()
    assert eventually(lambda: mongo_replica_set.servers[0].commands["find"] == 1)
    with pytest.raises(errors.WaitQueueTimeoutError, match="get_client") as caught:
        client.test.c.insert_one({"x": 2})
    assert isinstance(caught.value, errors.ConnectionFailure)
    worker.join()
    assert client.test.c.count_documents({}) == 1
    client.close()


def test_an_operation_interrupted_by_a_signal_never_locks_its_own_thread_out(
        mongo_replica_set):
    """Rule (a signal never leaves the client unusable; every wait has a bound): a
    KeyboardInterrupt landing between the client's operation lock being taken and the
    ``with`` block that releases it (CPython checks signals between the two) leaves the lock
    held for no operation. The thread's next operation, the watcher's ``close()`` after
    Ctrl-C among them, then waited serverSelectionTimeoutMS and failed with
    WaitQueueTimeoutError (``singlemongo watch`` hung 30 s after Ctrl-C in CI). The lock
    knows its thread: that thread goes on; another thread still waits for it."""
    client = MongoClient(mongo_replica_set.uri, waitQueueTimeoutMS=200)
    client.test.c.insert_one({"x": 1})
    client._topology._in_use.acquire()  # what the interrupted operation left behind
    assert client.test.c.find_one()["x"] == 1
    other = []
    worker = threading.Thread(target=lambda: other.append(
        pytest.raises(errors.WaitQueueTimeoutError, client.test.c.find_one)))
    worker.start()
    worker.join()
    assert other, "the other thread waited for the lock and timed out"
    client.close()


def test_get_client_returns_one_client_per_thread(mongo_replica_set):
    """get_client() keeps one client per (process, thread)."""
    mine = get_client(mongo_replica_set.uri)
    assert get_client(mongo_replica_set.uri) is mine
    theirs = []
    thread = threading.Thread(target=lambda: theirs.append(get_client(mongo_replica_set.uri)))
    thread.start()
    thread.join()
    assert theirs[0] is not mine
    gc.collect()
