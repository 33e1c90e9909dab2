"""Test support users can use too: simulated deployments on loopback and a fake DNS resolver.

Names load on first use (PEP 562): the pytest plugin of this package is registered for every
install, and must load without the ``testing`` extra (mongomock-ng), which the simulated
deployments need."""
from __future__ import annotations

import importlib

_LAZY = {"LoadBalancer": "deployments", "ReplicaSet": "deployments", "Sharded": "deployments",
         "Standalone": "deployments", "hellos": "deployments", "FakeResolver": "dns",
         "Fault": "failpoints", "SimServer": "server",
         "AuthenticatedReplicaSet": "auth.authenticated"}
HINT = "the simulated deployments need the testing extra: pip install singlemongo[testing]"

__all__ = ["AuthenticatedReplicaSet", "FakeResolver", "Fault", "LoadBalancer", "ReplicaSet",
           "Sharded", "SimServer", "Standalone", "hellos"]


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'singlemongo.testing' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(f".{module}", __name__), name)
    except ImportError as exc:
        if "mongomock_ng" not in str(exc):
            raise
        raise ImportError(f"{HINT} ({exc})") from exc
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
