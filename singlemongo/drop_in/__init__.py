"""``singlemongo.install_as_pymongo()``: PyMongo's module names served by singlemongo, so that
programs and libraries written for PyMongo run unchanged (the convention of PyMySQL's
``install_as_MySQLdb()``).

After the call, ``import pymongo``, ``from pymongo.errors import ...``, ``import gridfs`` and
the other public modules PyMongo 4.20 has resolve to singlemongo's modules (the same objects:
``pymongo.MongoClient is singlemongo.MongoClient``). Modules load when first imported, as
they would from PyMongo. ``bson`` is not touched: it is the ``bson`` of the pymongo
distribution either way.

What singlemongo does not offer is still importable; it fails where it is called, with a
message naming what and why (``unsupported.py``). A private PyMongo module no library should
import (``pymongo.pool``, ``pymongo.message``, ...) raises ModuleNotFoundError naming it.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType
from typing import Any, Optional, Sequence

_PKG = "singlemongo"
_HERE = f"{_PKG}.drop_in"

# PyMongo's public modules (the part after "pymongo.") -> the module that serves them.
PYMONGO_MODULES = {
    "errors": f"{_PKG}.errors",
    "results": f"{_PKG}.results",
    "operations": f"{_PKG}.operations",
    "read_preferences": f"{_PKG}.read_preferences",
    "read_concern": f"{_PKG}.read_concern",
    "write_concern": f"{_PKG}.write_concern",
    "collation": f"{_PKG}.collation",
    "server_api": f"{_PKG}.server_api",
    "monitoring": f"{_PKG}.monitoring",
    "cursor": f"{_PKG}.cursor",
    "cursor_shared": f"{_PKG}.cursor",
    "command_cursor": f"{_PKG}.command_cursor",
    "collection": f"{_PKG}.collection",
    "database": f"{_PKG}.database",
    "mongo_client": f"{_PKG}.client",
    "client_session": f"{_PKG}.client_session",
    "client_options": f"{_PKG}.options_view",
    "pool_options": f"{_PKG}.options_view",
    "uri_parser": f"{_PKG}.uri_parser",
    "uri_parser_shared": f"{_PKG}.uri_parser",  # where PyMongo 4.20 keeps its functions
    "driver_info": f"{_PKG}.driver_info",
    "change_stream": f"{_PKG}.change_stream",
    "typings": f"{_PKG}.typings",
    "bulk": f"{_PKG}.bulk",
    "common": f"{_HERE}.common",
    "database_shared": f"{_HERE}.common",
    "helpers_shared": f"{_HERE}.common",
    "server_type": f"{_HERE}.descriptions",
    "server_description": f"{_HERE}.descriptions",
    "topology_description": f"{_HERE}.descriptions",
    "event_loggers": f"{_HERE}.event_loggers",
    "encryption": f"{_HERE}.unsupported",
    "encryption_options": f"{_HERE}.unsupported",
    "auth_oidc": "singlemongo.auth_oidc",
    "asynchronous": f"{_HERE}.unsupported",
}
# pymongo.synchronous.X is pymongo.X (PyMongo 4.9+ keeps its classes there).
SYNCHRONOUS = ("collection", "database", "mongo_client", "cursor", "command_cursor",
               "client_session", "change_stream", "uri_parser", "bulk", "encryption")
GRIDFS_MODULES = {
    "": f"{_PKG}.gridfs",
    "errors": f"{_PKG}.gridfs.errors",
    "grid_file": f"{_PKG}.gridfs.grid_file",
    "synchronous": f"{_PKG}.gridfs",
    "synchronous.grid_file": f"{_PKG}.gridfs.grid_file",
    "asynchronous": f"{_HERE}.unsupported",
}


def target(fullname: str) -> Optional[str]:
    """The module that serves ``fullname`` (a ``pymongo`` or ``gridfs`` module), or None."""
    top, _, rest = fullname.partition(".")
    if top == "pymongo":
        if not rest:
            return f"{_HERE}.pymongo"
        if rest == "synchronous":
            return f"{_HERE}.synchronous"
        if rest.startswith("synchronous.") and rest[12:] in SYNCHRONOUS:
            return PYMONGO_MODULES[rest[12:]]
        if rest.startswith("asynchronous."):
            return f"{_HERE}.unsupported"
        return PYMONGO_MODULES.get(rest)
    if top == "gridfs":
        if rest.startswith("asynchronous."):
            return f"{_HERE}.unsupported"
        return GRIDFS_MODULES.get(rest)
    return None


class _Alias(importlib.abc.Loader):
    """Loads a ``pymongo`` name as an existing singlemongo module (the same object)."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.spec = module.__spec__

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        module.__spec__ = self.spec  # the import system set the alias's spec: keep its own


class _Finder(importlib.abc.MetaPathFinder):
    """Finds ``pymongo``, ``pymongo.*``, ``gridfs`` and ``gridfs.*`` (see PYMONGO_MODULES)."""

    def find_spec(self, fullname: str, path: Optional[Sequence[str]],
                  target_module: Optional[ModuleType] = None
                  ) -> Optional[importlib.machinery.ModuleSpec]:
        top = fullname.partition(".")[0]
        if top not in ("pymongo", "gridfs"):
            return None
        name = target(fullname)
        if name is None:
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: singlemongo.install_as_pymongo() serves "
                f"PyMongo's public modules, and {fullname} is not one of them (docs: "
                f"coming-from-pymongo, \"Running PyMongo-based libraries\")", name=fullname)
        module = importlib.import_module(name)
        return importlib.machinery.ModuleSpec(fullname, _Alias(module),
                                              is_package=hasattr(module, "__path__"))


FINDER = _Finder()


def install_as_pymongo() -> None:
    """Make ``import pymongo`` and ``import gridfs`` (and their public submodules) import
    singlemongo, so code written for PyMongo 4 runs unchanged. Call it before the first
    ``import pymongo`` of the program (a library imported earlier keeps the PyMongo objects
    it already holds: a SingleMongoWarning names them). Idempotent."""
    if FINDER not in sys.meta_path:
        sys.meta_path.insert(0, FINDER)
    from singlemongo.monitoring import use_pymongo_logger_names
    use_pymongo_logger_names()  # the program's logging configuration names pymongo.*
    already = sorted(name for name, module in list(sys.modules.items())
                     if name.partition(".")[0] in ("pymongo", "gridfs")
                     and not _is_ours(module))
    for name in already:
        del sys.modules[name]
    if already:
        from singlemongo.errors import SingleMongoWarning
        warnings.warn(f"install_as_pymongo(): PyMongo was imported before ({', '.join(already)}"
                      f"); from now on those names import singlemongo, but whatever imported "
                      f"them earlier keeps PyMongo's objects", SingleMongoWarning, stacklevel=2)


def uninstall() -> None:
    """Undo install_as_pymongo(): ``import pymongo`` imports PyMongo again (for tests that
    run both drivers in one process)."""
    while FINDER in sys.meta_path:
        sys.meta_path.remove(FINDER)
    from singlemongo.monitoring import use_pymongo_logger_names
    use_pymongo_logger_names(False)
    for name in [n for n, m in list(sys.modules.items())
                 if n.partition(".")[0] in ("pymongo", "gridfs") and _is_ours(m)]:
        del sys.modules[name]


def _is_ours(module: Any) -> bool:
    return getattr(module, "__name__", "").startswith(f"{_PKG}.")
