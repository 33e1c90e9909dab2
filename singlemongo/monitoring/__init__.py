"""Observability: event listeners, command monitoring and logging under the spec's components.

As ``pymongo.monitoring``: the listener base classes and the event classes are importable from
here (``from singlemongo.monitoring import CommandListener``), loaded on first use."""

_NAMES = {
    "CommandListener": "listeners", "ServerListener": "listeners",
    "ServerHeartbeatListener": "listeners", "TopologyListener": "listeners",
    "ConnectionPoolListener": "listeners",
    "CommandStartedEvent": "command_monitoring", "CommandSucceededEvent": "command_monitoring",
    "CommandFailedEvent": "command_monitoring",
    "PoolClearedEvent": "pool_events",
}
_SDAM = ("ServerHeartbeatStartedEvent", "ServerHeartbeatSucceededEvent",
         "ServerHeartbeatFailedEvent", "ServerOpeningEvent", "ServerClosedEvent",
         "ServerDescriptionChangedEvent", "TopologyOpeningEvent", "TopologyClosedEvent",
         "TopologyDescriptionChangedEvent")

__all__ = [*_NAMES, *_SDAM]


def __getattr__(name):
    import importlib
    if name in _SDAM:
        return getattr(importlib.import_module("..sdam.monitoring", __name__), name)
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'singlemongo.monitoring' has no attribute {name!r}")
    return getattr(importlib.import_module(f".{module}", __name__), name)
