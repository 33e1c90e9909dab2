"""Listeners registered on a client, and the SDAM log messages (SDAM logging spec).

Every event goes to each listener; a listener that raises never breaks an operation. SDAM
and heartbeat events are also logged under ``singlemongo.topology`` with the spec's texts.
"""

from . import log
from ..sdam import monitoring as m
from ..sdam.address import format_address



def _server_fields(address):
    host, port = address
    return {"serverHost": host, "serverPort": port}


def _heartbeat_text(verb, e, tid):
    host, port = e.connection_id
    timing = f" in {e.duration * 1000:.3f} ms" if hasattr(e, "duration") else ""
    return (f"Heartbeat {verb}{timing} for {host}:{port} on connection with driver-generated ID "
            f"None and server-generated ID None in topology with ID {tid}. Awaited: {e.awaited}")


def _sdam_message(event, tid):
    """(text, fields) for an SDAM event, or None."""
    if isinstance(event, m.TopologyOpeningEvent):
        return f"Starting monitoring for topology with ID {tid}", {"message": "Starting topology monitoring"}
    if isinstance(event, m.TopologyClosedEvent):
        return f"Stopped monitoring for topology with ID {tid}", {"message": "Stopped topology monitoring"}
    if isinstance(event, (m.ServerOpeningEvent, m.ServerClosedEvent)):
        opening = isinstance(event, m.ServerOpeningEvent)
        return (f"{'Starting' if opening else 'Stopped'} monitoring for server "
                f"{format_address(event.address)} in topology with ID {tid}",
                {"message": "Starting server monitoring" if opening else "Stopped server monitoring",
                 **_server_fields(event.address)})
    if isinstance(event, m.TopologyDescriptionChangedEvent):
        old, new = event.previous_description.summary(), event.new_description.summary()
        return (f"Description changed for topology with ID {tid}. Previous description: {old}. "
                f"New description: {new}", {"message": "Topology description changed",
                                            "previousDescription": old, "newDescription": new})
    if isinstance(event, m.ServerHeartbeatStartedEvent):
        return _heartbeat_text("started", event, tid), {
            "message": "Server heartbeat started", "awaited": False,
            **_server_fields(event.connection_id)}
    if isinstance(event, m.ServerHeartbeatSucceededEvent):
        reply = log.document(event.reply)
        return _heartbeat_text("succeeded", event, tid) + f". Reply: {reply}", {
            "message": "Server heartbeat succeeded", "awaited": False, "reply": reply,
            "durationMS": event.duration * 1000, **_server_fields(event.connection_id)}
    if isinstance(event, m.ServerHeartbeatFailedEvent):
        return _heartbeat_text("failed", event, tid) + f". Failure: {event.failure}", {
            "message": "Server heartbeat failed", "awaited": False, "failure": str(event.failure),
            "durationMS": event.duration * 1000, **_server_fields(event.connection_id)}
    return None


class EventBus:
    def __init__(self, listeners=(), topology_id=None):
        self.listeners = list(listeners)
        self.topology_id = topology_id

    def add(self, listener):
        self.listeners.append(listener)

    def publish(self, event):
        if self.listeners:  # listener classes are loaded only by programs that register some
            from .listeners import deliver
        for listener in self.listeners:
            try:
                deliver(listener, event)
            except Exception:  # a broken listener must not break the driver
                import logging
                logging.getLogger("singlemongo.events").exception(
                    "event listener %r raised on %s", listener, type(event).__name__)
        if log.enabled(log.TOPOLOGY) and type(event).__module__ == m.__name__:
            found = _sdam_message(event, self.topology_id)
            if found is not None:
                text, fields = found
                log.emit(log.TOPOLOGY, log.DEBUG, text, topology_id=self.topology_id,
                         topologyId=self.topology_id, **fields)

    def __bool__(self):
        return bool(self.listeners)

    @property
    def active(self):
        """Whether publishing does anything: a listener, or SDAM logging enabled."""
        return bool(self.listeners) or log.enabled(log.TOPOLOGY)
