"""A bounded soak (issue 12): one client against a replica set while request-timeout signals
interrupt operations at random points, connections are reset mid-reply and servers hang.

It asserts what a CGI process relies on: no write is stored twice (retries reuse their
txnNumber), nothing reported as written is missing, no reply is ever read by the wrong
operation (no ProtocolError), every operation ends within its timeoutMS (plus scheduling
slack), and neither file descriptors nor the driver's memory grow. A few seconds in
`make test`; `make fuzz` runs it for a minute (SINGLEMONGO_SOAK_SECONDS)."""
import gc
import os
import random
import signal
import time
import tracemalloc

import pytest

import singlemongo
from singlemongo import errors
from singlemongo.client import MongoClient
from singlemongo.testing import ReplicaSet

SECONDS = float(os.environ.get("SINGLEMONGO_SOAK_SECONDS", "3"))
TIMEOUT_MS = 800
SLACK_S = 0.3  # the signal handler, the GIL and a busy CI machine


class RequestTimeout(Exception):
    """What a CGI framework's SIGALRM handler raises."""


def _raise(signum, frame):
    raise RequestTimeout


def _fds():
    for path in ("/proc/self/fd", "/dev/fd"):
        if os.path.isdir(path):
            return len(os.listdir(path))
    pytest.skip("platform: no /proc/self/fd or /dev/fd to count descriptors")


def _driver_memory(rs):
    for server in rs.servers:  # the simulator's own record of every command is not the driver's
        server.command_log.clear()
    gc.collect()
    snapshot = tracemalloc.take_snapshot().filter_traces([
        # The installed package's directory, not any path with "singlemongo" in it (a
        # checkout cloned as "singlemongo" holds the tests there too).
        tracemalloc.Filter(True, os.path.join(os.path.dirname(singlemongo.__file__), "*")),
        tracemalloc.Filter(False, os.path.join(os.path.dirname(singlemongo.__file__),
                                               "testing", "*"))])
    return sum(stat.size for stat in snapshot.statistics("filename"))


class _Soak:
    def __init__(self, rs, rng, seed):
        self.rs, self.rng, self.seed = rs, rng, seed
        self.client = MongoClient(rs.uri, timeoutMS=TIMEOUT_MS, socketCheckIntervalMS=0)
        self.coll = self.client.soak.docs
        self.acknowledged, self.tokens, self.outcomes = set(), 0, {}
        self.slowest = 0.0

    def fault(self):
        server = self.rng.choice(self.rs.servers)
        action = self.rng.choice(["reset", "hang", "close", None, None, None])
        if action is not None:
            server.fail(self.rng.choice(["insert", "find", "aggregate"]), action=action)

    def operation(self, kind=None, timer_s=None):
        self.tokens += 1
        token = self.tokens
        kind = kind or self.rng.choice(["insert", "insert", "find", "count"])
        op = {"insert": lambda: self.coll.insert_one({"token": token}),
              "find": lambda: self.coll.find_one({"token": token - 1}),
              "count": lambda: self.coll.count_documents({})}[kind]
        if timer_s is None and self.rng.random() < 0.3:
            timer_s = self.rng.uniform(0.0005, 0.05)
        if timer_s is not None:
            signal.setitimer(signal.ITIMER_REAL, timer_s)
        start = time.monotonic()
        try:
            op()
            signal.setitimer(signal.ITIMER_REAL, 0)
            if kind == "insert":
                self.acknowledged.add(token)
            outcome = "ok"
        except RequestTimeout:
            outcome = "signal"
        except errors.ProtocolError as exc:  # a stale reply read by the wrong operation
            raise AssertionError(f"operation {token} read a wrong reply: {exc}") from None
        except errors.SingleMongoError as exc:
            outcome = type(exc).__name__
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        elapsed = time.monotonic() - start
        self.slowest = max(self.slowest, elapsed)
        assert elapsed <= TIMEOUT_MS / 1000.0 + SLACK_S, (
            f"{kind} ended as {outcome} after {elapsed:.3f} s (SINGLEMONGO_SOAK_SEED={self.seed})")
        self.outcomes[outcome] = self.outcomes.get(outcome, 0) + 1

    def interrupt_for_sure(self):
        """A signal that certainly lands mid-operation (a random timer mostly fires after a
        fast operation ended): the primary hangs the next find, the timer fires first."""
        self.rs.primary.fail("find", action="hang")
        self.operation(kind="find", timer_s=0.005)

    def run(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self.rng.random() < 0.2:
                self.fault()
            if self.tokens % 50 == 0:
                self.interrupt_for_sure()
            self.operation()


def _import_the_driver():
    """Every driver module, before any timer is armed. Under pytest the driver is imported
    through assertion rewriting (``ast.parse`` of its source; the rewritten code is not
    cached when bytecode writing is off), and an exception a signal handler raises inside
    ``ast.parse`` comes out as CPython's SystemError ("AST constructor recursion depth
    mismatch"): the test runner's artifact, not the driver's behaviour, as a plain import
    reads compiled code. The soak is about operations, so the imports happen first."""
    import importlib
    import pkgutil

    import singlemongo
    for info in pkgutil.walk_packages(singlemongo.__path__, "singlemongo."):
        if ".testing" not in info.name and not info.name.endswith("__main__"):
            importlib.import_module(info.name)


def test_signals_resets_and_hangs_never_duplicate_lose_or_leak():
    seed = int(os.environ.get("SINGLEMONGO_SOAK_SEED", random.SystemRandom().randrange(10**6)))
    _import_the_driver()
    previous = signal.signal(signal.SIGALRM, _raise)
    tracemalloc.start()
    try:
        with ReplicaSet(3) as rs:
            soak = _Soak(rs, random.Random(seed), seed)
            soak.run(SECONDS / 3)  # warm: connections, sessions, caches
            gc.collect()
            fds, memory = _fds(), _driver_memory(rs)
            soak.run(SECONDS * 2 / 3)
            for server in rs.servers:
                server.clear_faults()
            time.sleep(0.6)  # the next scan may start 500 ms after the last one
            soak.coll.insert_one({"token": 0})  # the client still works afterwards
            gc.collect()
            fd_growth, memory_growth = _fds() - fds, _driver_memory(rs) - memory
            counts = {}
            for doc in rs.store.documents("soak", "docs"):
                counts[doc["token"]] = counts.get(doc["token"], 0) + 1
            soak.client.close()
    finally:
        signal.signal(signal.SIGALRM, previous)
        tracemalloc.stop()
    context = f"seed {seed}, outcomes {soak.outcomes}, slowest {soak.slowest:.3f} s"
    print(f"soak: {context}; {len(counts)} documents, fd growth {fd_growth}, driver memory "
          f"growth {memory_growth} bytes")
    assert {t: n for t, n in counts.items() if n > 1} == {}, f"stored twice ({context})"
    assert soak.acknowledged - set(counts) == set(), f"acknowledged but missing ({context})"
    assert soak.outcomes.get("signal", 0) > 0 and soak.outcomes.get("ok", 0) > 0, context
    assert fd_growth <= 6, f"{fd_growth} descriptors more ({context})"  # ≤ 1 socket per server
    assert memory_growth < 512 * 1024, f"driver memory grew {memory_growth} bytes ({context})"
