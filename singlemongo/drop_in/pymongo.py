"""The ``pymongo`` package as ``install_as_pymongo()`` serves it: PyMongo 4.20's top-level
names, each singlemongo's own object, and its submodules (loaded on first use).

``version`` and ``version_tuple`` report the PyMongo API level singlemongo implements, which
is what libraries test to choose code paths; singlemongo's own version is
``singlemongo.__version__``.
"""
from __future__ import annotations

import importlib
from typing import Any

from singlemongo import (ASCENDING, DESCENDING, GEO2D, GEOSPHERE, HASHED, MAX_SUPPORTED_WIRE_VERSION,
                MIN_SUPPORTED_WIRE_VERSION, TEXT)

__path__: list[str] = []  # a package: ``import pymongo.errors`` goes to the finder

_PYMONGO_API_VERSION = "4.20.0"
__version__ = version = _PYMONGO_API_VERSION
version_tuple = (4, 20, 0)

_NAMES = {
    "MongoClient": "client", "CursorType": "cursor", "ReturnDocument": "collection",
    "ReadPreference": "read_preferences", "WriteConcern": "write_concern",
    "InsertOne": "operations", "UpdateOne": "operations", "UpdateMany": "operations",
    "ReplaceOne": "operations", "DeleteOne": "operations", "DeleteMany": "operations",
    "IndexModel": "operations", "timeout": "csot",
}

__all__ = ["ASCENDING", "DESCENDING", "GEO2D", "GEOSPHERE", "HASHED", "TEXT",
           "MAX_SUPPORTED_WIRE_VERSION", "MIN_SUPPORTED_WIRE_VERSION", "AsyncMongoClient",
           "__version__", "get_version_string", "has_c", "version", "version_tuple", *_NAMES]


def get_version_string() -> str:
    """The PyMongo API version implemented (``version``)."""
    return _PYMONGO_API_VERSION


def has_c() -> bool:
    """False: singlemongo has no C extension of its own (``bson``'s is used as it is)."""
    return False


def __getattr__(name: str) -> Any:
    if name == "AsyncMongoClient":
        from singlemongo.drop_in import unsupported
        globals()[name] = unsupported.AsyncMongoClient
        return unsupported.AsyncMongoClient
    module = _NAMES.get(name)
    if module is not None:
        value = getattr(importlib.import_module(f"singlemongo.{module}"), name)
        globals()[name] = value
        return value
    from singlemongo.drop_in import target
    if target(f"pymongo.{name}") is not None:  # ``pymongo.errors`` without importing it
        return importlib.import_module(f"pymongo.{name}")
    raise AttributeError(f"module 'pymongo' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
