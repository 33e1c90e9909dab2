"""The engine's narrow waist (issue 61): the face, everything in the package outside
``engine/`` (the simulator in ``testing/`` aside: it is a server, not a client), talks to the
engine only through the calls named here, and never writes the engine's state. Before,
modules of the face read and wrote ``topology.connections``, ``kill_queue``,
``selection_waits`` and ``_description``, and four of them computed the current deadline
themselves; the flow DESIGN.md draws one way was a convention. These tests make it a
boundary: each fails when a module of the face reaches past the waist."""
import ast
import pathlib

import pytest

import singlemongo

PACKAGE = pathlib.Path(singlemongo.__file__).parent
# What the face may call or read on a Topology: the waist the issue names, the lifecycle of
# a client (open, close, release after a drop, a fork, one operation at a time), the
# read-only state, and the diagnostics the CLI and the demo print.
WAIST = {
    "current_deadline", "cursor_connection", "defer_kill", "flush_deferred_kills",
    "selection_may_wait",
    "select_server", "mark_stale", "timeout_scope", "new_deadline", "deadline",
}
LIFECYCLE = {"open", "close", "release", "refresh", "operation", "check_open", "check_fork",
             "forget_after_fork", "pid", "closed", "append_driver"}
READ_ONLY = {"description", "options", "clock", "events", "sessions", "drivers",
             "server_selector", "stale"}
DIAGNOSTICS = {"scanner", "scan", "scan_count", "connections_opened"}
ALLOWED = WAIST | LIFECYCLE | READ_ONLY | DIAGNOSTICS
TOPOLOGY_NAMES = {"topology", "_topology", "topo"}


def _face_modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if not rel.startswith(("engine/", "testing/")):
            yield rel, ast.parse(path.read_text(), rel)


def _names_a_topology(node):
    """Whether an expression is, by its name, a Topology (``topology``, ``self._topology``,
    ``client._topology``, an options view's private ``__topology``)."""
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name in TOPOLOGY_NAMES or name.endswith("__topology")


def _engine_private_names():
    """Every ``_name`` the engine's classes define (methods, and attributes set on self)."""
    names = set()
    for path in (PACKAGE / "engine").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("_") \
                    and not node.name.startswith("__"):
                names.add(node.name)
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                    and getattr(node.value, "id", None) == "self" \
                    and node.attr.startswith("_") and not node.attr.startswith("__"):
                names.add(node.attr)
    return names


def violations(modules):
    """(module, line, what) for every reach past the waist in ``modules``."""
    found = []
    for rel, tree in modules:
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and _names_a_topology(node.value)):
                continue
            if isinstance(node.ctx, ast.Store):
                found.append((rel, node.lineno, f"writes topology.{node.attr}"))
            elif node.attr not in ALLOWED:
                found.append((rel, node.lineno, f"reads topology.{node.attr}"))
    return found


def test_the_face_calls_only_the_narrow_waist():
    """Rule (issue 61): outside engine/, a Topology is used only through ALLOWED, and
    nothing there assigns to one of its attributes."""
    assert violations(_face_modules()) == []


def test_the_face_touches_no_private_engine_name():
    """Rule (issue 61): no module outside engine/ names a private attribute or method the
    engine defines, whatever object it reaches it through."""
    private = _engine_private_names()
    assert {"_connections", "_kill_queue", "_selection_waits", "_description",
            "_stale"} <= private  # the test knows what it guards
    found = []
    for rel, tree in _face_modules():
        # self, and what a mixin names self as (``cursor = self._as_cursor()``)
        selves = {"self"} | {
            t.id for n in ast.walk(tree) if isinstance(n, ast.Assign)
            and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Attribute)
            and getattr(n.value.func.value, "id", None) == "self"
            and n.value.func.attr.startswith("_as_") for t in n.targets
            if isinstance(t, ast.Name)}
        own = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)
               and isinstance(n.ctx, ast.Store) and getattr(n.value, "id", None) in selves}
        own |= {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in private - own:
                found.append((rel, node.lineno, node.attr))
    assert found == []


@pytest.mark.parametrize("source, expected", [
    ("topology.connections.get(address)", "reads topology.connections"),
    ("self._topology.kill_queue.append(x)", "reads topology.kill_queue"),
    ("self._topology.selection_waits = True", "writes topology.selection_waits"),
    ("client._topology.stale = True", "writes topology.stale"),
    ("topo._description", "reads topology._description"),
])
def test_the_boundary_test_catches_each_old_reach(source, expected):
    """The check itself can fail: each way the face reached into the engine before
    issue 61 is caught."""
    found = violations([("face.py", ast.parse(source))])
    assert [what for _, _, what in found] == [expected]


@pytest.mark.parametrize("old, new, name", [
    ("operation", "request", "Request"), ("operation", "request", "MAX_TIMEOUT_RETRIES"),
    ("operation", "retry", "NO_RETRYABLE_WRITES"), ("operation", "retry", "RETRYABLE_WRITE_ERROR"),
    ("operation", "cursors", "kill_cursor"), ("operation", "cursors", "flush_kill_queue"),
    ("scanner", "selection_loop", "select_server"), ("scanner", "selection_loop", "MIN_INTERVAL_S"),
    ("topology", "guard", "timeout_block"), ("check", "handshake", "client_metadata"),
    ("check", "handshake", "METADATA_LIMIT"), ("check", "scanner", "check_server"),
])
def test_old_import_paths_keep_working(old, new, name):
    """Rule (issue 61): what moved is still importable from where it was, the same object."""
    import importlib
    moved_from = importlib.import_module(f"singlemongo.engine.{old}")
    moved_to = importlib.import_module(f"singlemongo.engine.{new}")
    assert getattr(moved_from, name) is getattr(moved_to, name)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        getattr(moved_from, "nothing_here")


@pytest.mark.parametrize("new, name", [
    ("base_object", "BaseObject"), ("base_object", "lazy_attributes"),
    ("base_object", "_DocumentType"), ("arguments", "validate_database_name"),
    ("arguments", "index_list"), ("arguments", "is_raw"),
])
def test_common_keeps_serving_what_it_held(new, name):
    """Rule (issue 61): ``common.py`` was split into modules named for what they hold; its
    old import path serves the same objects, and nothing else."""
    import importlib
    common = importlib.import_module("singlemongo.common")
    assert getattr(common, name) is getattr(importlib.import_module(f"singlemongo.{new}"), name)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        getattr(common, "nothing_here")
