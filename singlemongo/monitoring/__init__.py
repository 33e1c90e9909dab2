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

__all__ = [*_NAMES, *_SDAM, "register"]
# Listeners every client made after register() gets, before its own (PyMongo's global list).
_GLOBAL_LISTENERS: list = []


def register(listener):
    """Register a listener (an instance of one of the listener classes) for every client
    created from now on, as ``pymongo.monitoring.register``."""
    from .listeners import _EventListener, _kinds
    if not (isinstance(listener, _EventListener) or _kinds(listener)):
        raise TypeError(f"listeners must be an instance of CommandListener, ServerListener, "
                        f"ServerHeartbeatListener, TopologyListener or ConnectionPoolListener, "
                        f"not {type(listener)}")
    _GLOBAL_LISTENERS.append(listener)


def __getattr__(name):
    import importlib
    if name in _SDAM:
        value = getattr(importlib.import_module("..sdam.monitoring", __name__), name)
    elif name in _NAMES:
        value = getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
    else:
        raise AttributeError(f"module 'singlemongo.monitoring' has no attribute {name!r}")
    globals()[name] = value
    return value
