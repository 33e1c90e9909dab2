"""The SDAM log messages (SDAM logging spec): SDAM and heartbeat events logged under
``singlemongo.topology`` with the spec's texts, loaded only when that logger is enabled
(``EventBus.publish``).
"""

from singlemongo.monitoring import log
from singlemongo.monitoring import sdam_events as m
from singlemongo.sdam.address import format_address



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


def log_sdam_event(event, topology_id):
    found = _sdam_message(event, topology_id)
    if found is not None:
        text, fields = found
        log.emit(log.TOPOLOGY, log.DEBUG, text, topology_id=topology_id,
                 topologyId=topology_id, **fields)
