"""The opt-in topology cache: a warm cache makes a one-off query cost one connection."""
import os
import stat
import subprocess
import sys
import warnings

import bson
import pytest

from singlemongo import SingleMongoWarning
from singlemongo.client import MongoClient
from singlemongo.clock import FakeClock
from singlemongo.testing import ReplicaSet


@pytest.fixture
def rs():
    with ReplicaSet(3) as deployment:
        deployment.store.seed("t", "c", [{"_id": 1}])
        yield deployment


def _client(rs, path, clock=None):
    return MongoClient(rs.uri, topologyCacheFile=str(path), clock=clock or FakeClock())


def _write(path, data, mode=0o600):
    """A cache file as this user's process would leave it (umask-independent): ``data`` is a
    document (encoded as the cache is) or raw bytes."""
    path.write_bytes(data if isinstance(data, bytes) else bson.encode(data))
    os.chmod(path, mode)


def _warm(rs, path):
    """A cold start writes the cache, without a word (no file yet is normal)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = _client(rs, path)
        first.t.c.find_one()
    first.close()
    return bson.decode(path.read_bytes())


def test_a_cold_start_says_nothing(rs, tmp_path):
    """No cache file yet is a program's first run, not a problem: no warning (issue 19).
    Before, every cold start warned "does not exist (yet)"."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        client = _client(rs, tmp_path / "cold.bson")
        assert client.t.c.find_one() == {"_id": 1}
        client.close()
    assert (tmp_path / "cold.bson").exists()


def test_warm_cache_costs_one_connection(rs, tmp_path):
    path = tmp_path / "topology.bson"
    data = _warm(rs, path)
    assert data["topologyType"] == "ReplicaSetWithPrimary" and len(data["servers"]) == 3
    before = rs.total_connections()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        client = _client(rs, path)
        assert client.t.c.find_one() == {"_id": 1}
    assert rs.total_connections() - before == 1
    assert client._topology.scan_count == 0


def test_surprise_marks_stale_and_scans(rs, tmp_path):
    path = tmp_path / "topology.bson"
    _warm(rs, path)
    rs.elect(2)
    client = _client(rs, path)
    client.t.c.insert_one({"_id": 2})
    assert rs.servers[2].commands["insert"] == 1
    assert client._topology.scan_count == 1


@pytest.mark.parametrize("content,why", [
    (b"{not bson", "cannot read"),
    (bson.encode({"version": 1})[:-3], "cannot read"),
    ({"version": 2, "key": [], "writtenAt": 0, "servers": []}, "another deployment"),
    ({"version": 99}, "another deployment"),
    (b'{"version": 1, "servers": []}', "cannot read"),  # the JSON of version 1
])
def test_bad_caches_are_ignored_with_a_warning(rs, tmp_path, content, why):
    path = tmp_path / "topology.bson"
    _write(path, content)
    with pytest.warns(SingleMongoWarning, match=why):
        client = _client(rs, path)
        assert client.t.c.find_one() == {"_id": 1}
    assert client._topology.scan_count == 1


def test_corrupt_cache_for_this_deployment_is_ignored(rs, tmp_path):
    path = tmp_path / "topology.bson"
    data = _warm(rs, path)
    data["servers"][0]["type"] = "NotAType"
    _write(path, data)
    with pytest.warns(SingleMongoWarning, match="corrupt"):
        _client(rs, path).t.c.find_one()


def test_cache_older_than_heartbeat_is_never_trusted(rs, tmp_path):
    path = tmp_path / "topology.bson"
    _warm(rs, path)
    clock = FakeClock()
    clock.advance(61)  # wall time moves with it
    client = _client(rs, path, clock)
    client.t.c.find_one()
    assert client._topology.scan_count == 1


def test_unwritable_cache_warns_but_works(rs, tmp_path):
    path = tmp_path / "missing-dir" / "topology.bson"
    with pytest.warns(SingleMongoWarning):
        client = _client(rs, path)
        assert client.t.c.find_one() == {"_id": 1}


# ----- a cache nobody else can plant (issue 12) ---------------------------------------------

@pytest.fixture
def evil():
    """Another user's server, where a planted cache would send the victim."""
    with ReplicaSet(1) as deployment:
        yield deployment


def _planted(rs, evil, path):
    """A fresh, well-formed cache for ``rs`` whose primary is ``evil``'s server."""
    data = _warm(rs, path)
    primary = next(d for d in data["servers"] if d["type"] == "RSPrimary")
    primary["address"] = evil.servers[0].address_text
    return data


def _assert_not_redirected(rs, evil, path, why):
    with pytest.warns(SingleMongoWarning, match=why):
        client = _client(rs, path)
        client.t.c.insert_one({"_id": "victim"})
    client.close()
    assert evil.total_connections() == 0
    assert {"_id": "victim"} in rs.store.documents("t", "c")


def test_a_cache_owned_by_another_user_is_ignored(rs, evil, tmp_path, monkeypatch):
    """Rule: a cache is used only when owned by the current user. Before, a planted file
    redirected the victim's insert (and its SCRAM exchange) to another user's server."""
    path = tmp_path / "topology.bson"
    text = _planted(rs, evil, path)
    _write(path, text)
    if os.geteuid() == 0:
        os.chown(path, 65534, 65534)
    else:  # the file is ours, so this process pretends to be someone else
        monkeypatch.setattr(os, "getuid", lambda: os.geteuid() + 1)
    _assert_not_redirected(rs, evil, path, "not private to this user: it is owned by uid")


@pytest.mark.parametrize("mode", [0o620, 0o602, 0o666], ids=["0620", "0602", "0666"])
def test_a_cache_writable_by_group_or_others_is_ignored(rs, evil, tmp_path, mode):
    """Rule: a cache writable by group or others is never trusted."""
    path = tmp_path / "topology.bson"
    _write(path, _planted(rs, evil, path), mode)
    _assert_not_redirected(rs, evil, path, "writable by group or others")


def test_a_symlinked_cache_is_ignored(rs, evil, tmp_path):
    """Rule: a cache that is a symbolic link is never followed."""
    path = tmp_path / "topology.bson"
    target = tmp_path / "elsewhere.bson"
    _write(target, _planted(rs, evil, path))
    path.unlink()
    path.symlink_to(target)
    _assert_not_redirected(rs, evil, path, "symbolic link")


def test_a_bare_name_lives_in_a_private_directory(rs, tmp_path, monkeypatch):
    """Rule: the default location is private: a bare name is written under XDG_CACHE_HOME in
    a 0700 directory with mode 0600, and read back from there."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    _client(rs, "app").t.c.find_one()
    path = tmp_path / "xdg" / "singlemongo" / "app.bson"
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    before = rs.total_connections()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _client(rs, "app").t.c.find_one() == {"_id": 1}
    assert rs.total_connections() - before == 1


def test_a_shared_private_directory_is_refused(rs, tmp_path, monkeypatch):
    """Rule: the private directory must be private: one writable by others is not written to."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    (tmp_path / "xdg" / "singlemongo").mkdir(parents=True)
    os.chmod(tmp_path / "xdg" / "singlemongo", 0o777)
    with pytest.warns(SingleMongoWarning, match="cannot write.*writable by group or others"):
        _client(rs, "app").t.c.find_one()
    assert not (tmp_path / "xdg" / "singlemongo" / "app.bson").exists()


BAD_FIELDS = {
    "rtt as a string": ("servers", 0, "rtt", "fast"),
    "hosts as a string": ("servers", 0, "hosts", "a:1"),
    "tags with a number": ("servers", 0, "tags", {"dc": 1}),
    "address as a number": ("servers", 0, "address", 5),
    "a bad electionId": ("servers", 0, "electionId", "0" * 24),
    "a UNIX socket host": ("servers", 0, "hosts", ["/tmp/evil.sock"]),
    "a port out of range": ("servers", 0, "hosts", ["a:70000"]),
    "a label over 63 characters": ("servers", 0, "hosts", ["a" * 64 + ".x:1"]),
    "a UNIX socket address": ("servers", 0, "address", "/tmp/evil.sock"),
    "servers as an object": (None, None, "servers", {}),
    "writtenAt as a string": (None, None, "writtenAt", "now"),
    "setName as a list": (None, None, "setName", ["rs"]),
}


@pytest.mark.parametrize("where", BAD_FIELDS.values(), ids=BAD_FIELDS.keys())
def test_a_cache_with_wrong_field_types_is_ignored_with_a_warning(rs, tmp_path, where):
    """Rule: every field has its type and hosts are validated like URI hosts; anything else is
    the documented "corrupt" warning and a scan. Before: a TypeError at the first operation,
    or a connection to whatever the file named."""
    path = tmp_path / "topology.bson"
    data = _warm(rs, path)
    key, index, name, value = where
    (data[key][index] if key else data)[name] = value
    _write(path, data)
    with pytest.warns(SingleMongoWarning, match="corrupt"):
        client = _client(rs, path)
        assert client.t.c.find_one() == {"_id": 1}
    assert client._topology.scan_count == 1


def test_a_cache_holding_trailing_bytes_is_ignored(rs, tmp_path):
    path = tmp_path / "topology.bson"
    _write(path, bson.encode(_warm(rs, path)) + b"\x00")
    with pytest.warns(SingleMongoWarning, match="not one BSON document"):
        assert _client(rs, path).t.c.find_one() == {"_id": 1}


def test_a_scan_that_confirms_the_cache_writes_nothing(rs, tmp_path):
    """Rule (issue 20): the cache is written only when the topology changed (or the file was
    missing or too old). Before, every scan rewrote it."""
    path = tmp_path / "topology.bson"
    _warm(rs, path)
    before = path.read_bytes(), path.stat().st_ino
    clock = FakeClock()
    client = _client(rs, path, clock)
    client.t.c.find_one()
    client._topology.mark_stale("test")  # what an error would do: the next operation scans
    client.t.c.find_one()
    assert client._topology.scan_count == 1
    assert (path.read_bytes(), path.stat().st_ino) == before
    rs.elect(2)
    client._topology.mark_stale("test")  # what an error would do; the rescan finds a new primary
    client.t.c.insert_one({"_id": 3})
    assert _read(path)["servers"] != bson.decode(before[0])["servers"]


def test_a_scan_that_confirms_an_expired_cache_refreshes_it(rs, tmp_path):
    """Rule: a file older than heartbeatFrequencyMS is rewritten by the next scan even if
    nothing changed; otherwise every later process would scan for ever."""
    path = tmp_path / "topology.bson"
    _warm(rs, path)
    clock = FakeClock()
    client = _client(rs, path, clock)
    client.t.c.find_one()
    written = _read(path)["writtenAt"]
    clock.advance(61)  # heartbeatFrequencyMS: the next operation scans again
    client.t.c.find_one()
    assert client._topology.scan_count == 1
    assert _read(path)["writtenAt"] > written


def _read(path):
    return bson.decode(path.read_bytes())


def test_reading_the_cache_loads_no_json_or_tempfile(rs, tmp_path):
    """Rule (issue 20): the read path costs less than the wave it saves; before, reading the
    cache imported json and tempfile (with shutil, bz2, lzma): ~4-5 ms per process."""
    path = tmp_path / "topology.bson"
    _warm(rs, path)
    code = ("import sys; from singlemongo import MongoClient; "
            f"c = MongoClient({rs.uri!r}, topologyCacheFile={str(path)!r}); c.t.c.find_one(); "
            "print(sorted(m for m in ('json', 'tempfile', 'shutil') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_a_failed_write_leaves_no_temporary_file(rs, tmp_path):
    """Rule: a failed write removes its temporary file. Before: one was left per failure."""
    path = tmp_path / "topology.bson"
    path.mkdir()  # os.replace onto a directory fails after the temporary file is written
    with pytest.warns(SingleMongoWarning, match="cannot write"):
        _client(rs, path).t.c.find_one()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["topology.bson"]
    assert list(path.iterdir()) == []


def test_a_fifo_planted_at_the_cache_path_is_refused_without_blocking(rs, tmp_path):
    """Issue 46 (open without blocking, check the open file): a FIFO at the cache path, which
    another user can plant in a shared directory, blocked every process in ``open()`` for
    ever, before the ownership check. It is refused with the usual warning, at once."""
    import signal
    path = tmp_path / "topology.bson"
    os.mkfifo(path, 0o600)

    def hung(signum, frame):
        raise TimeoutError("open() of the FIFO blocked")
    previous = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, 5.0)
    try:
        with pytest.warns(SingleMongoWarning, match="not a regular file"):
            client = _client(rs, path)
            client.t.c.insert_one({"_id": "fifo"})
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    client.close()
    assert {"_id": "fifo"} in rs.store.documents("t", "c")


def test_a_user_whose_home_cannot_hold_a_cache_gets_one_in_the_temporary_directory(
        rs, tmp_path, monkeypatch):
    """Rule: the default location is one a web server's user can write (issue 58). Apache's
    www-data has the home /var/www, which it cannot write, and "nobody" has /nonexistent:
    a bare name goes to a private singlemongo-UID directory in $TMPDIR there. Before, every
    CGI request warned that the cache could not be written, and scanned."""
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "nonexistent"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _client(rs, "app").t.c.find_one()
        before = rs.total_connections()
        assert _client(rs, "app").t.c.find_one() == {"_id": 1}
    assert rs.total_connections() - before == 1  # the second process read the cache
    directory = tmp_path / "tmp" / f"singlemongo-{os.getuid()}"
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert (directory / "app.bson").exists() and not (tmp_path / "nonexistent").exists()


def test_a_cache_that_cannot_be_written_warns_once_a_process_in_one_line(rs, tmp_path):
    """Rule: one quiet warning per process when the cache cannot be written (issue 58): one
    line on stderr however many clients write it, never a source line. Before, each write
    warned with the driver's source line below it (116 lines for 116 CGI requests' 116
    processes, and two per process here)."""
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    code = (f"from singlemongo import MongoClient\n"
            f"for _ in range(2):\n"
            f"    c = MongoClient({rs.uri!r}, topologyCacheFile={str(blocked / 'app')!r})\n"
            f"    c.t.c.find_one(); c.close()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "SingleMongoWarning: cannot write topology cache" in lines[0], \
        out.stderr


@pytest.mark.parametrize("environ, writable, expected", [
    ({"XDG_CACHE_HOME": "/x", "HOME": "/h"}, set(), "/x/singlemongo"),
    ({"HOME": "/h"}, {"/h/.cache"}, "/h/.cache/singlemongo"),
    ({"HOME": "/h"}, {"/h/.cache/singlemongo"}, "/h/.cache/singlemongo"),
    ({"HOME": "/var/www", "TMPDIR": "/run/t"}, set(), "/run/t/singlemongo-UID"),
    ({"HOME": "/nonexistent"}, set(), "/tmp/singlemongo-UID"),
], ids=["XDG_CACHE_HOME", "~/.cache", "its singlemongo directory", "www-data", "nobody"])
def test_where_a_bare_name_lives(environ, writable, expected):
    """Each row of the default location's rule (private_files.cache_directory)."""
    from singlemongo.engine.private_files import cache_directory
    assert cache_directory(environ, writable.__contains__) == \
        expected.replace("UID", str(os.getuid()))
