"""The per-process client cache and fork safety."""
import os
import pickle

import pytest

from singlemongo import client_cache, get_client
from singlemongo.testing import ReplicaSet, Standalone


@pytest.fixture(autouse=True)
def _clean_cache():
    yield
    client_cache.clear()


def test_get_client_reuses_per_uri_and_options():
    with Standalone() as s:
        a = get_client(s.uri)
        assert get_client(s.uri) is a
        assert get_client(s.uri, appname="x") is not a
        assert get_client(s.uri + "/") is a  # normalised: the same seeds and options
        a.close()
        assert get_client(s.uri) is not a


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_gets_a_fresh_client_and_leaves_the_parent_alone():
    with ReplicaSet(3) as rs:
        parent = get_client(rs.uri)
        parent.test.c.insert_one({"from": "parent"})
        before = rs.total_connections()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child
            code = 1
            try:
                child = get_client(rs.uri)
                ok = child is not parent and child.test.c.count_documents({}) == 1
                child.close()  # must not end the parent's sessions
                os.write(write, pickle.dumps(ok))
                code = 0
            finally:
                os._exit(code)
        os.close(write)
        _, status = os.waitpid(pid, 0)
        ok = pickle.loads(os.read(read, 4096))
        assert status == 0 and ok
        parent_lsid = next(c["lsid"] for c in rs.servers[0].command_log if "insert" in c)
        assert parent_lsid not in rs.sessions_ended
        assert rs.total_connections() == before + 3  # the child scanned on its own sockets
        # The parent's connections survived the child's exit.
        assert parent.test.c.find_one({"from": "parent"}) is not None
        assert rs.total_connections() == before + 3


def test_plain_client_used_after_fork_starts_fresh():
    with Standalone() as s:
        from singlemongo import MongoClient
        client = MongoClient(s.uri)
        client.admin.command("ping")
        client._topology.pid = -1  # as if this process were a forked child
        client.admin.command("ping")
        assert s.servers[0].connections == 2
