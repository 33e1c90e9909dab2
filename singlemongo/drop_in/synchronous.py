"""``pymongo.synchronous``, where PyMongo 4.9+ keeps its classes: each of its modules is the
``pymongo`` module of the same name (``pymongo.synchronous.collection`` is
``pymongo.collection``)."""
from __future__ import annotations

import importlib
from typing import Any

__path__: list[str] = []


def __getattr__(name: str) -> Any:
    from singlemongo.drop_in import SYNCHRONOUS
    if name in SYNCHRONOUS:
        return importlib.import_module(f"pymongo.synchronous.{name}")
    raise AttributeError(f"module 'pymongo.synchronous' has no attribute {name!r}")
