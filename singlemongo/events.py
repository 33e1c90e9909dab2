"""Listeners registered on a client. A listener that raises never breaks an operation."""
import logging

_log = logging.getLogger("singlemongo.events")


class EventBus:
    def __init__(self, listeners=()):
        self.listeners = list(listeners)

    def add(self, listener):
        self.listeners.append(listener)

    def publish(self, event):
        for listener in self.listeners:
            try:
                listener(event)
            except Exception:  # a broken listener must not break the driver
                _log.exception("event listener %r raised on %s", listener, type(event).__name__)

    def __bool__(self):
        return bool(self.listeners)
