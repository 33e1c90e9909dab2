"""Change streams across processes (issue 22, "Must show"): one process writes, another
watches; the watcher's connection is reset in the middle, its stream resumes once from the
cached resume token, and it sees every write, in order, exactly once. The same watcher runs
under a frozen clock (freezegun) without sleeping at all."""
import json
import os
import select
import subprocess
import sys
import time

import pytest
from bson import json_util

from singlemongo.testing import ReplicaSet

WATCHER = r"""
import json, sys, time
from bson import json_util
frozen = sys.argv[3] == "frozen"
if frozen:
    import freezegun
    freezegun.freeze_time("2026-01-01 00:00:00").start()
slept = []
real_sleep = time.sleep
time.sleep = lambda s: (slept.append(s), real_sleep(s))
import singlemongo
from singlemongo import monitoring

class Commands(monitoring.CommandListener):
    names = []
    def started(self, event): self.names.append(event.command_name)
    def succeeded(self, event): pass
    def failed(self, event): pass

client = singlemongo.MongoClient(sys.argv[1], appname="watcher", event_listeners=[Commands()])
expected = int(sys.argv[2])
with client.app.log.watch(max_await_time_ms=50) as stream:
    print("READY", flush=True)
    seen = 0
    for change in stream:
        print("EVENT " + json_util.dumps(change), flush=True)
        seen += 1
        if seen == expected:
            break
print("DONE " + json.dumps({"aggregates": Commands.names.count("aggregate"),
                            "getMores": Commands.names.count("getMore"),
                            "slept": slept, "frozen": frozen}), flush=True)
"""

WRITER = r"""
import sys
import singlemongo
client = singlemongo.MongoClient(sys.argv[1], appname="writer")
log = client.app.log
first, last = int(sys.argv[2]), int(sys.argv[3])
for i in range(first, last):
    log.insert_one({"_id": i, "n": 0})
    log.update_one({"_id": i}, {"$inc": {"n": 1}})
    if i % 2:
        log.delete_one({"_id": i})
"""


def _expected(first, last):
    out = []
    for i in range(first, last):
        out += [("insert", i), ("update", i)] + ([("delete", i)] if i % 2 else [])
    return out


def _write(uri, first, last):
    subprocess.run([sys.executable, "-c", WRITER, uri, str(first), str(last)], check=True,
                   timeout=60)


class Lines:
    """The watcher's stdout, a line at a time, each read bounded (a change that never
    comes fails the test instead of hanging it)."""

    def __init__(self, process):
        self.process, self.buffer = process, b""

    def next(self, prefix, timeout_s=20.0):
        fd = self.process.stdout.fileno()
        while b"\n" not in self.buffer:
            if not select.select([fd], [], [], timeout_s)[0]:
                self.process.kill()
                raise AssertionError(f"no {prefix} line from the watcher within {timeout_s} s; "
                                     f"its stderr: {self.process.stderr.read()!r}")
            data = os.read(fd, 65536)
            if not data:
                raise AssertionError(f"the watcher ended before a {prefix} line; its stderr: "
                                     f"{self.process.stderr.read()!r}")
            self.buffer += data
        line, self.buffer = self.buffer.split(b"\n", 1)
        text = line.decode()
        assert text.startswith(prefix), text
        return text[len(prefix):].strip()


def _until(condition, what, timeout_s=20.0):
    """The test process's own wait (the watcher never sleeps), bounded."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout_s} s for {what}"
        time.sleep(0.01)


@pytest.mark.parametrize("clock", ["real", "frozen"])
def test_a_watcher_process_sees_every_write_of_another_across_a_reset(clock):
    """Change Streams, "Resume Process" and "Resume Token": the reply of a getMore is lost
    (the connection reset half-way through it) with changes in it; the stream resumes once,
    from the token of the last change it returned, so the lost changes come again and none
    twice: every write before, during and after the reset arrives, in order. Frozen: no
    wait of the driver needs time to move (no sleep at all)."""
    with ReplicaSet(3) as rs:
        expected = _expected(0, 4) + _expected(4, 8) + _expected(8, 12)
        watcher = subprocess.Popen(
            [sys.executable, "-c", WATCHER, rs.uri, str(len(expected)), clock],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        lines = Lines(watcher)
        try:
            lines.next("READY")
            _write(rs.uri, 0, 4)
            changes = [json_util.loads(lines.next("EVENT")) for _ in _expected(0, 4)]
            # The watcher's next getMore is held a second, answered with the changes written
            # meanwhile, and its connection reset half-way through that reply.
            primary = rs.primary
            aggregates = primary.commands["aggregate"]
            fault = primary.fail("getMore", action="reset", app_name="watcher", block_s=1.0)
            _until(lambda: fault not in primary.faults, "the watcher's next getMore")
            _write(rs.uri, 4, 8)
            _until(lambda: primary.commands["aggregate"] > aggregates, "the resume")
            _write(rs.uri, 8, 12)
            changes += [json_util.loads(lines.next("EVENT"))
                        for _ in _expected(4, 8) + _expected(8, 12)]
            report = json.loads(lines.next("DONE"))
            assert watcher.wait(timeout=30) == 0
        finally:
            watcher.kill()
            watcher.wait()
    assert [(c["operationType"], c["documentKey"]["_id"]) for c in changes] == expected
    assert len({json_util.dumps(c["_id"]) for c in changes}) == len(changes)
    assert report["aggregates"] == 2, report  # the first and the one resume
    if clock == "frozen":
        assert report["frozen"] and report["slept"] == [], report
