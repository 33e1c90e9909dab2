"""Runner for the project's own scenario files in fixtures/ (format described in
fixtures/README.md): a simulated deployment, a client, and steps with expectations, run once
under a fake clock and once under freezegun.
"""
import json
import pathlib

import freezegun

from singlemongo import errors
from singlemongo.client import MongoClient
from singlemongo.clock import Clock, FakeClock
from singlemongo.sdam import format_address
from singlemongo.testing import LoadBalancer, ReplicaSet, Sharded, Standalone, hellos

FIXTURES = pathlib.Path(__file__).resolve().parent.parent / "fixtures"


class _Hooks:
    """Sleep recording and actions scheduled on the n-th sleep, for either clock."""

    def _init_hooks(self):
        self.recorded = []
        self.on_sleep = {}

    def _after_sleep(self, seconds):
        self.recorded.append(round(seconds, 6))
        action = self.on_sleep.pop(len(self.recorded), None)
        if action:
            action()


class ScenarioFakeClock(_Hooks, FakeClock):
    def __init__(self):
        FakeClock.__init__(self)
        self._init_hooks()

    def sleep(self, seconds):
        FakeClock.sleep(self, seconds)
        self._after_sleep(seconds)


class ScenarioRealClock(_Hooks, Clock):
    """The real clock (so freezegun's patched time is what it reads); sleeps are short."""

    def __init__(self, frozen):
        self._init_hooks()
        self.frozen = frozen

    def sleep(self, seconds):
        self.frozen.tick(seconds)  # frozen time moves as a real sleep would have moved it
        self._after_sleep(seconds)

    def choice(self, items):
        return items[0]

    def random(self):
        return 0.5  # deterministic ties and jitter, as FakeClock

    def shuffle(self, items):
        pass


def build_deployment(spec):
    kind = spec["type"]
    if kind == "replica-set":
        dep = ReplicaSet(spec.get("members", 3), arbiters=spec.get("arbiters", 0),
                         hidden=spec.get("hidden", 0))
    elif kind == "standalone":
        dep = Standalone()
    elif kind == "sharded":
        dep = Sharded(spec.get("mongoses", 2))
    elif kind == "load-balanced":
        dep = LoadBalancer(service_id=spec.get("service_id", True))
    else:
        raise ValueError(f"unknown deployment type {kind!r}")
    return dep


def uri_for(dep, spec):
    seeds = spec.get("seeds")
    if seeds is None:
        return dep.uri
    hosts = ",".join(dep.servers[i].address_text for i in seeds)
    query = dep.uri.partition("?")[2]
    return f"mongodb://{hosts}/" + (f"?{query}" if query else "")


class Scenario:
    def __init__(self, doc, mode, clock):
        self.doc, self.mode, self.clock = doc, mode, clock

    def run(self, frozen=None):
        self.frozen = frozen
        with build_deployment(self.doc["deployment"]) as dep:
            self.dep = dep
            self.client = MongoClient(uri_for(dep, self.doc["deployment"]), clock=self.clock,
                                      **self.doc.get("options", {}))
            self.topology = self.client._topology
            try:
                for i, step in enumerate(self.doc["steps"]):
                    self.step(i, step)
            finally:
                self.client.close()

    def server_action(self, index, action, arg=None):
        dep = self.dep
        if action == "stop":
            return lambda: dep.servers[index].stop()
        if action == "start":
            return lambda: dep.servers[index].start()
        if action == "step_down":
            return lambda: dep.step_down()
        if action == "elect":
            return lambda: dep.elect(index)
        if action == "remove":
            return lambda: dep.remove_member(index)
        raise ValueError(f"unknown server action {action!r}")

    def step(self, i, step):
        where = f"step {i} {json.dumps(step)}"
        if "run" in step:
            self.run_op(step, where)
        elif "advance" in step:
            if self.frozen is not None:
                self.frozen.tick(step["advance"])
            else:
                self.clock.advance(step["advance"])
        elif "do" in step:
            action = self.server_action(step.get("server", 0), step["do"])
            if "on_sleep" in step:
                self.clock.on_sleep[len(self.clock.recorded) + step["on_sleep"]] = action
            else:
                action()
        elif "fail" in step:
            spec = dict(step["fail"])
            server = self.dep.servers[spec.pop("server", 0)]
            if "labels" in spec:
                spec["labels"] = tuple(spec["labels"])
            server.fail(spec.pop("command"), **spec)
        elif "expect" in step:
            self.check(step["expect"], where)
        else:
            raise ValueError(f"{where}: unknown step")

    def run_op(self, step, where):
        op = step["run"]
        cmd = {"ping": {"ping": 1}, "insert": {"insert": "c", "documents": [{"x": 1}]}}[op] \
            if isinstance(op, str) else op
        expected = step.get("expect_error")
        try:
            self.client.admin.command(cmd)
        except errors.SingleMongoError as exc:
            assert expected, f"{where}: unexpected {type(exc).__name__}: {exc}"
            assert type(exc).__name__ == expected or any(
                c.__name__ == expected for c in type(exc).__mro__), f"{where}: raised {exc!r}"
            for text in step.get("message_contains", ()):
                assert text in str(exc), f"{where}: {text!r} not in message:\n{exc}"
            return
        assert not expected, f"{where}: expected {expected}, but it succeeded"

    def check(self, expect, where):
        servers = self.dep.servers
        td = self.topology.description
        history = self.topology.scanner.history
        actual = {
            "hellos": lambda: [hellos(s) for s in servers],
            "connections": lambda: [s.connections for s in servers],
            "scans": lambda: self.topology.scan_count,
            "checks": lambda: len(history),
            "topology_type": lambda: td.topology_type.value,
            "stale": lambda: self.topology.stale,
            "server_types": lambda: [td.servers[s.address].server_type.value
                                     if s.address in td.servers else "absent" for s in servers],
            "check_order": lambda: [self._index(a) for n, a, *_ in history
                                    if n == self.topology.scan_count],
            "sleeps": lambda: list(self.clock.recorded),
        }
        for key, want in expect.items():
            if key.startswith("commands."):
                name = key.split(".", 1)[1]
                got = [s.commands[name] for s in servers]
            else:
                got = actual[key]()
            if key == "sleeps":
                got = [round(x, 3) for x in got]
            assert got == want, f"{where}: {key} is {got}, expected {want}"

    def _index(self, address):
        for i, s in enumerate(self.dep.servers):
            if s.address == address:
                return i
        return format_address(address)


def files():
    return sorted(FIXTURES.glob("scenario-*.json"))


def run_file(path, mode):
    doc = json.loads(path.read_text(encoding="utf-8"))
    if mode == "fake":
        Scenario(doc, mode, ScenarioFakeClock()).run()
        return
    with freezegun.freeze_time("2026-01-01 12:00:00") as frozen:
        Scenario(doc, mode, ScenarioRealClock(frozen)).run(frozen)
