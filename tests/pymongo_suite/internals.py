"""A pytest plugin for the singlemongo run of PyMongo's suite: the suite's helpers import
PyMongo's *internal* modules (``pymongo.hello``, ``pymongo.message``,
``pymongo.synchronous.pool``, ...), which ``install_as_pymongo()`` does not serve.

Before singlemongo is installed, every module of the installed PyMongo is imported once, so
that each internal module is bound to PyMongo's own public modules (an internal module such
as ``pymongo.message`` needs PyMongo's private helpers in ``pymongo.common``). After the
install, the name ``pymongo.<internal>`` resolves to that internal module object. A public
name (``drop_in.target`` serves it) always resolves to singlemongo's module: the suite's code
never gets a PyMongo public module."""
import importlib
import importlib.abc
import importlib.machinery
import pkgutil
import sys

from singlemongo.drop_in import FINDER, target

# Private names the suite's helpers (test/__init__.py, helpers.py, utils.py) import from
# *public* modules at import time, so that no test could run without them. They are set on
# singlemongo's module for this run only, each with singlemongo's true value, never taken
# from PyMongo's implementation; a test that then reads them is a test of internals.
HELPER_NAMES = {
    # Client-side field-level encryption is not offered: no libmongocrypt is used.
    "pymongo.encryption_options": {"_HAVE_PYMONGOCRYPT": False},
    # The command monitoring spec's security-sensitive commands: singlemongo's names, in a
    # set of the helpers' own, as PyMongo's (the helpers add to a copy). singlemongo's
    # redaction never reads it: a test that empties it to see user commands fails.
    "pymongo.helpers_shared": {"_SENSITIVE_COMMANDS": "singlemongo.monitoring."
                               "command_monitoring:SENSITIVE:set"},
    # ... and the event base classes the unified-format runner filters events with.
    "pymongo.monitoring": {
        "_SENSITIVE_COMMANDS": "singlemongo.monitoring.command_monitoring:SENSITIVE:set",
        "_CommandEvent": "singlemongo.monitoring.command_monitoring:_CommandEvent",
        "_PoolEvent": "singlemongo.monitoring.pool_events:_PoolEvent",
        "_ConnectionEvent": "singlemongo.monitoring.pool_events:_ConnectionEvent",
        "_ServerEvent": "singlemongo.monitoring.sdam_events:_ServerEvent",
        "_ServerHeartbeatEvent": "singlemongo.monitoring.sdam_events:_ServerHeartbeatEvent"},
    # The handshake's metadata: singlemongo's own document. singlemongo reads no coding-agent
    # variables (PyMongo's client.env.agent): none to list, and the one the helper blanks
    # is read by nothing here.
    # The suite's URI spec runner compares options in PyMongo's case-insensitive dictionary:
    # singlemongo's uri_parser has its own.
    "pymongo.common": {"_CaseInsensitiveDictionary":
                       "singlemongo.uri_parser:_CaseInsensitiveDictionary"},
    "pymongo.pool_options": {"_METADATA": "singlemongo.engine.handshake:client_metadata()",
                             "_AGENT_ENV_VARS": [], "_GENERIC_AGENT_ENV_VAR": "AI_AGENT"},
}


def _pymongo_internals():
    """{name: module} of PyMongo's internal modules, imported with PyMongo's public ones."""
    import pymongo
    modules = {}
    for info in pkgutil.walk_packages(pymongo.__path__, "pymongo."):
        if ".asynchronous" in info.name or info.name.endswith("encryption"):
            continue
        try:
            modules[info.name] = importlib.import_module(info.name)
        except Exception:  # noqa: BLE001 an optional dependency missing: not needed here
            continue
    return {name: module for name, module in modules.items() if target(name) is None}


class _Existing(importlib.abc.Loader):
    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class InternalsFinder(importlib.abc.MetaPathFinder):
    """Serves ``pymongo.<internal>`` as PyMongo's module; public names go on to singlemongo."""

    def __init__(self, internals):
        self.internals = internals

    def find_spec(self, fullname, path, target_module=None):
        module = self.internals.get(fullname)
        if module is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Existing(module),
                                              is_package=hasattr(module, "__path__"))


MARKER = "PyMongo internal not in singlemongo"


class PyMongoInternal:
    """Stands for a PyMongo internal a test module imports by name from a public module
    (``from pymongo.operations import _Op``): the module imports, and only a test that uses
    it fails, naming it (``compare.py`` lists those tests as tests of internals)."""

    def __init__(self, where):
        object.__setattr__(self, "_where", where)

    def _fail(self, *args, **kwargs):
        raise AttributeError(f"{MARKER}: {object.__getattribute__(self, '_where')}")

    __call__ = __iter__ = __getitem__ = __len__ = __contains__ = __bool__ = _fail
    __enter__ = __setattr__ = __int__ = __index__ = __hash__ = _fail
    __eq__ = __ne__ = __lt__ = __le__ = __gt__ = __ge__ = _fail  # a constant compared

    def __getattr__(self, name):
        self._fail()

    def __repr__(self):
        return f"<{MARKER}: {object.__getattribute__(self, '_where')}>"


def placeholders(root):
    """{module: [name]} of what the suite's modules import by name from a public module of
    PyMongo's that singlemongo's module does not have (read from their source)."""
    import ast
    import pathlib
    wanted = {}
    for path in sorted(pathlib.Path(root, "test").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and \
                    node.module.split(".")[0] in ("pymongo", "gridfs") and \
                    target(node.module) is not None:
                wanted.setdefault(node.module, set()).update(a.name for a in node.names)
    missing = {}
    pymongo_dir = pathlib.Path(importlib.machinery.PathFinder.find_spec("pymongo").origin).parent
    for module, names in wanted.items():
        served = importlib.import_module(module)
        # A PyMongo submodule ("from pymongo import message") is imported, never replaced.
        absent = sorted(n for n in names if n != "*" and not hasattr(served, n) and not (
            module == "pymongo" and (pymongo_dir / f"{n}.py").exists()))
        if absent:
            missing[module] = absent
    return missing


def _rebind(internals):
    """Each internal module's references to PyMongo's *public* classes, functions and modules
    become singlemongo's (``bulk_shared.BulkWriteError``, the ``ConfigurationError`` that
    ``uri_parser_shared`` raises): what the suite catches and compares is then singlemongo's,
    never a second copy of PyMongo's."""
    import types
    for module in internals.values():
        for name, value in list(vars(module).items()):
            if name.startswith("__"):
                continue
            if isinstance(value, types.ModuleType):
                home = value.__name__
            else:
                home = getattr(value, "__module__", None)
            if not isinstance(home, str) or not home.startswith(("pymongo.", "gridfs")) or \
                    target(home) is None:
                continue
            served = importlib.import_module(home)
            replacement = served if isinstance(value, types.ModuleType) else \
                getattr(served, name, None)
            if replacement is not None:
                setattr(module, name, replacement)


def install(root=None):
    """Import PyMongo's internals, install singlemongo as pymongo, then serve the internals
    before singlemongo's finder, give the helpers their private names and, for the suite
    at ``root``, placeholders for the internals its modules import by name."""
    import warnings
    internals = _pymongo_internals()
    import singlemongo
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "PyMongo was imported before": on purpose
        singlemongo.install_as_pymongo()
    sys.meta_path.insert(sys.meta_path.index(FINDER), InternalsFinder(internals))
    _rebind(internals)
    # Imported now, each becomes an attribute of its parent as a submodule import makes it
    # (``from pymongo import message`` reads the attribute: the served module's own name is
    # singlemongo's, so the import system would not find it by name).
    for name in sorted(internals):
        importlib.import_module(name)
    for module, names in HELPER_NAMES.items():
        served = importlib.import_module(module)
        for name, value in names.items():
            if isinstance(value, str) and value.startswith("singlemongo."):  # our own object
                where, _, attribute = value.partition(":")
                attribute, _, as_set = attribute.partition(":")
                call = attribute.endswith("()")
                value = getattr(importlib.import_module(where), attribute.removesuffix("()"))
                value = value() if call else value
                value = set(value) if as_set else value
            if not hasattr(served, name):
                setattr(served, name, value)
    for module, names in (placeholders(root) if root else {}).items():
        served = importlib.import_module(module)
        for name in names:
            setattr(served, name, PyMongoInternal(f"{module}.{name}"))
