"""What a one-off loads (issue 20): the read path loads what a read needs. The lists below are
exact, so a new import on the read path (or one that stops being needed) is a visible
decision: change the list in the same commit and say why."""
import subprocess
import sys

import pytest

from singlemongo.testing import Standalone

# A plain one-off find_one on a standalone: package __init__s included (32, issue 20's goal;
# replies.py since issue 55: a reply is checked before any field of it is used; issue 61 gave
# the operation's admission (guard.py), the request with its command builder (request.py) and
# the selection loop (selection_loop.py) modules of their own; the checks joined the scanner
# and the retry rules load at a first failure: 35; common.py, split by subject into
# base_object.py and arguments.py, opening a socket (dial.py) apart from the connection, and
# the operation's lifecycle table (lifecycle.py): 38, each module costing about 0.19 M
# instructions to find and load through singlemongo's own finder, 0.32 M through Python's).
# What every server cursor shares is server_cursor.py's, so that CommandCursor's module
# (command_cursor.py, 0.15 M instructions: its class and code) is not loaded by a find.
ONE_OFF = {
    "singlemongo", "singlemongo.client", "singlemongo.clock", "singlemongo.collection",
    "singlemongo.collection_reads", "singlemongo.server_cursor", "singlemongo.base_object",
    "singlemongo.arguments",
    "singlemongo.cursor", "singlemongo.database", "singlemongo.engine",
    "singlemongo.engine.checkout", "singlemongo.engine.operation",
    "singlemongo.engine.scanner", "singlemongo.engine.sessions", "singlemongo.engine.topology",
    "singlemongo.engine.guard", "singlemongo.engine.handshake", "singlemongo.engine.selection_loop",
    "singlemongo.engine.request",
    "singlemongo.errors", "singlemongo.monitoring", "singlemongo.options",
    "singlemongo.options.client_options", "singlemongo.options.table", "singlemongo.options.uri",
    "singlemongo.records", "singlemongo.replies", "singlemongo.sdam", "singlemongo.sdam.address",
    "singlemongo.sdam.server_description", "singlemongo.sdam.topology_description",
    "singlemongo.selection", "singlemongo.wire",
    "singlemongo.engine.connection", "singlemongo.engine.dial", "singlemongo.wire.messages",
    "singlemongo.engine.lifecycle",
}
# Loaded by `from singlemongo import MongoClient`: the face down to the cursor; the engine
# (and socket) load when the first client is made.
ENGINE = {
    "singlemongo.engine.topology",
    "singlemongo.engine.guard", "singlemongo.engine.selection_loop",
    "singlemongo.wire", "singlemongo.engine.connection", "singlemongo.engine.dial",
    "singlemongo.wire.messages", "singlemongo.sdam.topology_description",
}
# Standard-library modules singlemongo itself adds to what bson and the floor load.
NEVER_ON_A_ONE_OFF = {"json", "tempfile", "shutil", "random", "ipaddress", "logging",
                      "hashlib", "hmac", "ssl", "zlib", "dns", "heapq", "urllib.parse",
                      "encodings.idna",  # an IP literal is connected to without a resolver
                      "importlib",
                      # what bson loads on 3.11 (through typing), but not on 3.12 and later,
                      # where it would cost a one-off 3.3 M instructions
                      "contextlib"}

PROBE = """
import sys
assert "importlib" not in sys.modules, "the probe starts without importlib"
import bson, socket, struct  # what the raw-socket floor loads
baseline = set(sys.modules)
from singlemongo import MongoClient
imported = {m for m in sys.modules if m.startswith("singlemongo")}
client = MongoClient(sys.argv[1])
client.t.c.find_one()
client.close()
print(sorted(imported))
print(sorted(m for m in sys.modules if m.startswith("singlemongo")))
print(sorted(set(sys.modules) - baseline))
import gc
print(sorted(c.__name__ for c in gc.get_objects() if isinstance(c, type)
             and issubclass(c, (BaseException, Warning))
             and c.__module__.startswith("singlemongo")))
"""


def _probe(uri):
    """The PROBE's three lists for a one-off against ``uri``, in a fresh interpreter."""
    # -S: no site hooks (an editable install's finder loads importlib at startup, which a
    # regular install does not); the checkout and the site-packages are on the path instead.
    import os
    import pathlib
    import site
    path = [str(pathlib.Path(__file__).resolve().parents[1])] + site.getsitepackages()
    out = subprocess.run([sys.executable, "-S", "-c", PROBE, uri], capture_output=True,
                         text=True, check=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(path)))
    return [eval(line) for line in out.stdout.splitlines()]  # the lists printed above


@pytest.fixture(scope="module")
def loaded():
    with Standalone() as sa:
        return _probe(sa.uri)


def test_a_one_off_loads_exactly_the_allowed_modules(loaded):
    """Rule: a plain one-off find_one loads the read path only: no writes, bulk, indexes,
    findAndModify, sessions beyond the implicit one, event classes, command monitoring,
    SDAM error handling, credentials, scan planner or wave, face concerns or read preference
    classes, backpressure before a retry. Before: 59 modules; goal 32."""
    one_off = set(loaded[1])
    assert one_off == ONE_OFF, (f"new: {sorted(one_off - ONE_OFF)}; "
                                f"no longer loaded: {sorted(ONE_OFF - one_off)}")


def test_a_one_off_makes_no_class_only_tests_or_commands_use(loaded):
    """Rule: a one-off find does not make FakeClock (tests' clock, 0.16 M instructions a
    one-off) nor CommandCursor (aggregate and the list commands', 0.15 M): each has a module
    of its own, loaded at first use; both keep their public paths."""
    assert not {"singlemongo.fake_clock", "singlemongo.command_cursor"} & set(loaded[1])
    from singlemongo.clock import FakeClock
    import singlemongo.command_cursor as command_cursor
    import singlemongo.fake_clock as fake_clock
    import singlemongo.server_cursor as server_cursor
    assert FakeClock is fake_clock.FakeClock
    assert command_cursor._ServerCursor is server_cursor._ServerCursor
    assert issubclass(command_cursor.CommandCursor, server_cursor._ServerCursor)


def test_the_clock_module_names_what_it_does_not_have():
    """Rule: the clock module's lazy name (FakeClock) leaves every other missing name an
    AttributeError that names it, as a module without one would."""
    import singlemongo.clock
    with pytest.raises(AttributeError, match="'singlemongo.clock' has no attribute 'Fake'"):
        singlemongo.clock.Fake
    assert not hasattr(singlemongo.clock, "__path__")


def test_importing_the_client_loads_the_face_not_the_engine(loaded):
    """Rule: `from singlemongo import MongoClient` loads no socket and no engine."""
    assert set(loaded[0]) == ONE_OFF - ENGINE
    code = "import sys; from singlemongo import MongoClient; print('socket' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


# The error classes a one-off creates: the trunk that every layer raises or catches. Each
# exception class costs about 130 k instructions to create (its MRO is 5 to 8 classes deep).
ERROR_TRUNK = {"PyMongoError", "ConfigurationError", "ConnectionFailure", "AutoReconnect",
               "NetworkTimeout", "ServerSelectionTimeoutError", "ProtocolError",
               "OperationFailure", "InvalidOperation",
               "FrozenInstanceError", "UndecodableDocument"}  # records', wire.messages' own


def test_a_one_off_creates_only_the_trunk_of_the_error_classes(loaded):
    """Rule (issue 20): the errors a one-off that succeeds never raises nor catches by name
    (bad input, configuration, threads, server replies) load with their first use. Before,
    a one-off created all 21 of singlemongo.errors' classes: 2.8 M instructions, 1.4% of
    a one-off."""
    assert set(loaded[3]) == ERROR_TRUNK, set(loaded[3]) ^ ERROR_TRUNK


def test_a_one_off_loads_no_optional_standard_library(loaded):
    """Rule: beyond what bson and a socket load, a one-off adds no standard-library module
    that only some programs need (before: random, ipaddress and, with a topology cache,
    json and tempfile)."""
    assert NEVER_ON_A_ONE_OFF.isdisjoint(loaded[2]), NEVER_ON_A_ONE_OFF & set(loaded[2])


def test_a_replica_set_one_off_adds_the_wave_and_not_the_heap_planner():
    """Rule: a one-off on a small replica set adds only the concurrent checks (wave.py) to a
    standalone's modules; the spec's O(n) scanning order serves a few servers, and the heap
    planner (scan_plan.py, heapq: 0.4 ms) loads only for a large topology."""
    from singlemongo.testing import ReplicaSet
    with ReplicaSet(3) as rs:
        loaded = _probe(rs.uri)
    assert set(loaded[1]) == ONE_OFF | {"singlemongo.engine.wave"}
    assert NEVER_ON_A_ONE_OFF.isdisjoint(loaded[2]), NEVER_ON_A_ONE_OFF & set(loaded[2])


COMPILES = """
import sys
compiled = []
def profile(frame, event, arg):
    # re's compiler runs only for a pattern not in re's cache: a compile, named by its caller
    if event == "call" and frame.f_code.co_name == "compile" and \\
            frame.f_code.co_filename.endswith(("_compiler.py", "sre_compile.py")):
        caller = frame
        while caller and "singlemongo" not in caller.f_code.co_filename:
            caller = caller.f_back
        compiled.append(caller and f"{caller.f_code.co_filename}:{caller.f_lineno}")
import bson, socket, struct
from singlemongo import MongoClient
from singlemongo.options.client_options import client_options
sys.setprofile(profile)
client_options("mongodb://alice:s3cret@h:27017/?serverSelectionTimeoutMS=5&w=1")
client = MongoClient(sys.argv[1])
client.t.c.find_one()
client.close()
sys.setprofile(None)
print(compiled)
"""


def test_a_one_off_compiles_no_regular_expression():
    """Rule (issue 20): a one-off's read path checks hosts, ports, credentials and integer
    options with string methods. Compiling a regular expression costs 0.6 M instructions,
    about 0.3% of a one-off, each: before, a standalone one-off compiled one (is it IPv4?),
    a replica set's two (is an announced host a plain name?), and a username or an integer
    option in the connection string one more each."""
    from singlemongo.testing import ReplicaSet
    with Standalone() as sa, ReplicaSet(3) as rs:
        for uri in (sa.uri, rs.uri):
            out = subprocess.run([sys.executable, "-c", COMPILES, uri], capture_output=True,
                                 text=True, check=True)
            assert out.stdout.strip() == "[]", out.stdout


@pytest.mark.parametrize("owner,cls,module,mixin", [
    ("collection", "Collection", "collection_writes", "WriteMethods"),
    ("collection", "Collection", "find_and_modify", "FindAndModifyMethods"),
    ("collection", "Collection", "collection_indexes", "IndexMethods"),
    ("collection", "Collection", "collection_queries", "QueryMethods"),
    ("cursor", "Cursor", "cursor_modifiers", "CursorModifiers"),
    ("database", "Database", "database_commands", "DatabaseCommands"),
    ("client", "MongoClient", "client_commands", "ClientCommands")])
def test_deferred_mixins_name_every_method_of_the_real_class(owner, cls, module, mixin):
    """Rule: the stand-ins for the deferred mixins (collection.py, database.py, client.py)
    list every attribute the real class defines: a method added there and not here would be
    taken for a sub-collection or a database by ``__getattr__``."""
    import importlib
    klass = getattr(importlib.import_module(f"singlemongo.{owner}"), cls)
    real = getattr(importlib.import_module(f"singlemongo.{module}"), mixin)
    stand_in = next(b for b in klass.__orig_bases__ if getattr(b, "mixin", None) == mixin)
    own = {n for n in vars(real) if not n.startswith("__")}
    assert set(stand_in.names) == own


def test_a_deferred_mixin_leaves_the_bases_and_keeps_the_resolution_order_of_its_names():
    """Rule: a deferred mixin is no class of the class using it (no class made at import),
    and its names resolve as they would through a real base in its place: a name the class
    or an earlier base defines stays theirs, the first mixin listing a name serves it, and
    the first use loads the real function into the class."""
    from singlemongo.base_object import Generic, deferred_mixin
    from singlemongo.collection_writes import WriteMethods

    class Base(Generic):
        def insert_one(self):
            return "base's"

    class Using(Base, deferred_mixin("singlemongo.collection_writes", "WriteMethods",
                                     ("insert_one", "insert_many", "delete_one")),
                deferred_mixin("singlemongo.no_such_module", "Other", ("insert_many",))):
        def delete_one(self):
            return "own"

    assert Using.__mro__ == (Using, Base, Generic, object)
    assert "insert_one" not in vars(Using) and Using().insert_one() == "base's"
    assert Using().delete_one() == "own"
    assert vars(Using)["insert_many"] == ("singlemongo.collection_writes", "WriteMethods",
                                          "insert_many")
    assert Using.insert_many is vars(WriteMethods)["insert_many"]
    assert vars(Using)["insert_many"] is vars(WriteMethods)["insert_many"]


@pytest.mark.parametrize("attribute", ["command", "list_collection_names", "address",
                                       "nodes", "start_session", "count_documents",
                                       "sort"])
def test_a_deferred_method_or_property_works_from_its_first_use(attribute):
    """Rule: a name served by a deferred mixin behaves as if defined on the class, from the
    first use in a fresh process: a method is bound, a property is read (never taken for a
    database or collection by ``__getattr__``)."""
    code = f"""
import sys
from singlemongo.testing import Standalone
import singlemongo
with Standalone() as sa:
    client = singlemongo.MongoClient(sa.uri)
    db = client.test
    owner = {{"command": db, "list_collection_names": db, "count_documents": db.c,
              "sort": db.c.find()}}.get({attribute!r}, client)
    value = getattr(owner, {attribute!r})
    if {attribute!r} == "command":
        value = value("ping")
    elif {attribute!r} == "count_documents":
        value = value({{}})
    elif {attribute!r} == "sort":
        value = value("x")
    elif callable(value) and {attribute!r} != "nodes":
        value = value()
    print(type(value).__name__)
    client.close()
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == [{"command": "dict", "list_collection_names": "list", "address": "tuple",
                    "nodes": "frozenset", "start_session": "ClientSession",
                    "count_documents": "int", "sort": "Cursor"}[attribute]]


@pytest.mark.parametrize("module,name", [
    *(("reply_errors", name) for name in (
        "NotPrimaryError", "WriteError", "DuplicateKeyError", "WTimeoutError",
        "BulkWriteError", "ExecutionTimeout", "WriteConcernError", "CursorNotFound")),
    *(("usage_errors", name) for name in (
        "SingleMongoWarning", "ConfigurationTypeError", "InvalidURI", "DNSError",
        "IncompatibleWireVersionError", "WaitQueueTimeoutError", "InvalidName",
        "CollectionInvalid", "InvalidDocument", "DocumentTooLarge"))])
def test_errors_loaded_at_first_use_are_still_the_errors_modules(module, name):
    """Rule: the errors that load with their first use (reply_errors.py, usage_errors.py)
    are singlemongo.errors' (pymongo.errors' under install_as_pymongo) for imports,
    ``except`` clauses, tracebacks and pickles, as before they moved."""
    import importlib
    import pickle

    from singlemongo import errors
    cls = getattr(errors, name)
    assert cls is getattr(importlib.import_module(f"singlemongo.{module}"), name)
    assert name in errors.__all__
    assert f"{cls.__module__}.{cls.__qualname__}" == f"singlemongo.errors.{name}"
    error = pickle.loads(pickle.dumps(cls({"writeErrors": []}) if name == "BulkWriteError"
                                      else cls("message")))
    assert type(error) is cls


def test_dir_of_the_errors_module_names_the_classes_not_loaded_yet():
    """Rule: a shell's completion of ``singlemongo.errors.`` (``pymongo.errors.``) offers
    every error class, those that load at first use included, before any is used."""
    code = ("import singlemongo.errors as e, sys; "
            "print(sorted(set(e.__all__) - set(dir(e))), 'singlemongo.usage_errors' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["[]", "False"]


def _import_time_graph():
    """Each driver module (the simulator aside) and the driver modules its body imports when
    it runs: imports in functions, and under ``if TYPE_CHECKING``, are not followed."""
    import ast
    import pathlib
    root = pathlib.Path(__file__).resolve().parents[1] / "singlemongo"
    files = {".".join(p.relative_to(root.parent).with_suffix("").parts).removesuffix(
        ".__init__"): p for p in root.rglob("*.py") if "testing" not in p.parts}

    def imports(body):
        for node in body:
            if isinstance(node, ast.If):
                if "TYPE_CHECKING" not in ast.unparse(node.test):
                    yield from imports(node.body)
                yield from imports(node.orelse)
            elif isinstance(node, ast.Try):
                yield from imports(node.body + node.finalbody)
                for handler in node.handlers:
                    yield from imports(handler.body)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                yield node

    def targets(module, path, node):
        if isinstance(node, ast.Import):
            return [alias.name for alias in node.names]
        package = module.split(".")[:None if path.name == "__init__.py" else -1]
        base = ".".join(package[:len(package) - node.level + 1] if node.level else [])
        base = ".".join(filter(None, (base, node.module)))
        return [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
    return {module: {t for node in imports(ast.parse(path.read_text()).body)
                     for t in targets(module, path, node) if t in files and t != module}
            for module, path in files.items()}


def test_the_driver_imports_in_one_direction():
    """Rule (issue 20): at import time the modules form no circle (client -> database ->
    collection -> cursor; what points back is imported in a function, or for annotations
    under TYPE_CHECKING), so any module can be read, and imported, on its own."""
    graph = _import_time_graph()
    assert {"singlemongo.client", "singlemongo.cursor"} <= graph.keys()
    assert "singlemongo.database" in graph["singlemongo.client"]  # the walk sees imports
    done, path = set(), []

    def walk(module):
        if module in path:
            return path[path.index(module):] + [module]
        if module in done:
            return None
        path.append(module)
        circle = next(filter(None, map(walk, sorted(graph[module]))), None)
        path.pop()
        done.add(module)
        return circle
    circles = [c for c in map(walk, sorted(graph)) if c]
    assert not circles, "import-time circle: " + " -> ".join(circles[0])
