"""Observability: event listeners, command monitoring and logging under the spec's components.

As ``pymongo.monitoring``: the listener base classes and the event classes are importable from
here (``from singlemongo.monitoring import CommandListener``), loaded on first use.

This module is also what every client loads of observability: the two gates (is anyone
listening? would a log message go anywhere?) and the ``EventBus``. Event classes, command
monitoring and log formatting load only when a gate is open."""
import itertools
import sys

# Logging spec components, under singlemongo's name; levels as stdlib logging numbers them.
COMMAND = "singlemongo.command"
SERVER_SELECTION = "singlemongo.serverSelection"
TOPOLOGY = "singlemongo.topology"
CONNECTION = "singlemongo.connection"
DEBUG, INFO, WARNING = 10, 20, 30
# The logger each component logs to: its own name, or PyMongo's ("pymongo.command", ...) once
# install_as_pymongo() ran, so that a PyMongo program's logging configuration catches them.
LOGGER_NAMES = {name: name for name in (COMMAND, SERVER_SELECTION, TOPOLOGY, CONNECTION)}


def use_pymongo_logger_names(on: bool = True) -> None:
    """Log under PyMongo's logger names (``install_as_pymongo()``), or singlemongo's again."""
    for name in LOGGER_NAMES:
        LOGGER_NAMES[name] = name.replace("singlemongo.", "pymongo.", 1) if on else name

# The listener and event classes, loaded on first use, by module. Text, not names in code, as
# singlemongo's own table (``_LAZY_TEXT``): every client loads this module, few load these.
_NAMES = {name: module for module, names in (
    ("listeners", "CommandListener ServerListener ServerHeartbeatListener TopologyListener "
                  "ConnectionPoolListener"),
    ("command_monitoring", "CommandStartedEvent CommandSucceededEvent CommandFailedEvent"),
    ("pool_events", "PoolCreatedEvent PoolReadyEvent PoolClearedEvent PoolClosedEvent "
                    "ConnectionCreatedEvent ConnectionReadyEvent ConnectionClosedEvent "
                    "ConnectionCheckOutStartedEvent ConnectionCheckOutFailedEvent "
                    "ConnectionCheckedOutEvent ConnectionCheckedInEvent ConnectionClosedReason "
                    "ConnectionCheckOutFailedReason"),
) for name in names.split()}
_SDAM = tuple("ServerHeartbeatStartedEvent ServerHeartbeatSucceededEvent "
              "ServerHeartbeatFailedEvent ServerOpeningEvent ServerClosedEvent "
              "ServerDescriptionChangedEvent TopologyOpenedEvent TopologyOpeningEvent "
              "TopologyClosedEvent TopologyDescriptionChangedEvent TopologyEvent".split())

__all__ = [*_NAMES, *_SDAM, "register"]
# Listeners every client made after register() gets, before its own (PyMongo's global list).
_GLOBAL_LISTENERS: list = []


def register(listener):
    """Register a listener (an instance of one of the listener classes) for every client
    created from now on, as ``pymongo.monitoring.register``."""
    from singlemongo.monitoring.listeners import _EventListener, _kinds
    if not (isinstance(listener, _EventListener) or _kinds(listener)):
        raise TypeError(f"listeners must be an instance of CommandListener, ServerListener, "
                        f"ServerHeartbeatListener, TopologyListener or ConnectionPoolListener, "
                        f"not {type(listener)}")
    _GLOBAL_LISTENERS.append(listener)
    if "_LISTENERS" in globals():
        _by_kind(_LISTENERS, listener)


def _by_kind(lists, listener):
    from singlemongo.monitoring.listeners import _kinds
    for kind, field in _KIND_FIELDS:
        if kind in _kinds(listener):
            getattr(lists, field).append(listener)


# PyMongo's ``monitoring._LISTENERS``: the registered listeners by kind (libraries read it:
# flask-mongoengine's debug panel). Made when first read; a listener a library appends there
# directly reaches the clients made after, as in PyMongo.
_KIND_FIELDS = tuple(zip([name for name, module in _NAMES.items() if module == "listeners"],
                         "command_listeners server_listeners server_heartbeat_listeners "
                         "topology_listeners cmap_listeners".split()))


def global_listeners():
    """What a new client gets before its own listeners: those registered (and those a library
    appended to ``_LISTENERS``), each once, in the order they came."""
    if "_LISTENERS" not in globals():
        return list(_GLOBAL_LISTENERS)
    seen = dict.fromkeys(_GLOBAL_LISTENERS)
    for lists in _LISTENERS:
        seen.update(dict.fromkeys(lists))
    return list(seen)


def logging_enabled(component, level=DEBUG):
    """Whether a message of ``component`` at ``level`` would go anywhere. ``logging`` is never
    imported by singlemongo: if the program has not imported it, nothing can be configured
    to receive the message, and a one-off pays nothing for logging."""
    logging = sys.modules.get("logging")
    if logging is None:
        return False
    name = LOGGER_NAMES.get(component, component)
    known = _loggers.get(name)
    if known is None or known[0] is not logging:  # getLogger takes logging's lock each time
        known = _loggers[name] = (logging, logging.getLogger(name))
    return known[1].isEnabledFor(level)


_loggers: dict = {}  # logger name -> (the logging module, its Logger), as looked up

_operation_ids = itertools.count(1)


def next_operation_id():
    """A new operationId (command monitoring spec): one per operation, shared by its
    retries and by a bulk write's commands."""
    return next(_operation_ids)


class EventBus:
    """A client's listeners: events go to each (a listener that raises never breaks an
    operation), and SDAM events are also logged under ``singlemongo.topology``."""

    def __init__(self, listeners=(), topology_id=None):
        self.listeners = list(listeners)
        self.topology_id = topology_id

    def add(self, listener):
        self.listeners.append(listener)

    def publish(self, event):
        if self.listeners:  # listener classes are loaded only by programs that register some
            from singlemongo.monitoring.listeners import deliver
        for listener in self.listeners:
            try:
                deliver(listener, event)
            except Exception:  # a broken listener must not break the driver
                import logging
                logging.getLogger("singlemongo.events").exception(
                    "event listener %r raised on %s", listener, type(event).__name__)
        if logging_enabled(TOPOLOGY) and \
                type(event).__module__ == "singlemongo.monitoring.sdam_events":
            from singlemongo.monitoring.events import log_sdam_event
            log_sdam_event(event, self.topology_id)

    def __bool__(self):
        return bool(self.listeners)

    def command(self, clock, conn, db, cmd, timeout_s=None, sequences=(), operation_id=None,
                codec=None, user_fields=None, unacknowledged=False, exhaust=None):
        """``conn.dispatch`` of an application command, with command monitoring's events
        and log messages when anyone listens (``command_monitoring.run``)."""
        if not self.listeners and not logging_enabled(COMMAND):
            return conn.dispatch(db, cmd, timeout_s, sequences, codec, user_fields,
                                 unacknowledged, exhaust)
        from singlemongo.monitoring.command_monitoring import run
        return run(self, clock, conn, db, cmd, timeout_s, sequences, operation_id, codec,
                   user_fields, unacknowledged, exhaust)


def __getattr__(name):
    import importlib
    if name == "_LISTENERS":
        from singlemongo.monitoring.listeners import _Listeners
        value = _Listeners([], [], [], [], [])
        for listener in _GLOBAL_LISTENERS:
            _by_kind(value, listener)
    elif name in _SDAM:
        value = getattr(importlib.import_module(".sdam_events", __name__), name)
    elif name in _NAMES:
        value = getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
    else:
        raise AttributeError(f"module 'singlemongo.monitoring' has no attribute {name!r}")
    globals()[name] = value
    return value
