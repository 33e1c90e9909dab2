"""The connection component's log messages (logging spec, CMAP's messages): each pool event
of ``engine/cmap_events.py`` logged under ``singlemongo.connection`` at debug, with the spec's
fields, loaded only when that logger is enabled."""
from singlemongo.monitoring import log
from singlemongo.monitoring import pool_events as e
from singlemongo.sdam.address import format_address

# ConnectionClosedReason and ConnectionCheckOutFailedReason -> the spec's texts.
CLOSED_REASONS = {
    e.ConnectionClosedReason.STALE: "Connection became stale because the pool was cleared",
    e.ConnectionClosedReason.IDLE: ("Connection has been available but unused for longer than "
                                    "the configured max idle time"),
    e.ConnectionClosedReason.ERROR: "An error occurred while using the connection",
    e.ConnectionClosedReason.POOL_CLOSED: "Connection pool was closed",
}
CHECK_OUT_FAILED_REASONS = {
    e.ConnectionCheckOutFailedReason.TIMEOUT: ("Wait queue timeout elapsed without a connection "
                                               "becoming available"),
    e.ConnectionCheckOutFailedReason.POOL_CLOSED: "Connection pool was closed",
    e.ConnectionCheckOutFailedReason.CONN_ERROR: ("An error occurred while trying to establish a "
                                                  "new connection"),
}
# Event class -> (message, whether it names the connection).
MESSAGES = {
    e.PoolCreatedEvent: ("Connection pool created", False),
    e.PoolReadyEvent: ("Connection pool ready", False),
    e.PoolClearedEvent: ("Connection pool cleared", False),
    e.PoolClosedEvent: ("Connection pool closed", False),
    e.ConnectionCheckOutStartedEvent: ("Connection checkout started", False),
    e.ConnectionCheckOutFailedEvent: ("Connection checkout failed", False),
    e.ConnectionCreatedEvent: ("Connection created", True),
    e.ConnectionReadyEvent: ("Connection ready", True),
    e.ConnectionCheckedOutEvent: ("Connection checked out", True),
    e.ConnectionCheckedInEvent: ("Connection checked in", True),
    e.ConnectionClosedEvent: ("Connection closed", True),
}


def fields_of(event, error=None):
    """The spec's fields for ``event`` (``error``: the failure behind a closed connection or
    a failed check-out)."""
    message, names_connection = MESSAGES[type(event)]
    host, port = event.address
    fields = {"message": message, "serverHost": host, "serverPort": port}
    if names_connection:
        fields["driverConnectionId"] = event.connection_id
    if isinstance(event, e.PoolCreatedEvent):
        fields.update(event.options)
    if isinstance(event, e.PoolClearedEvent) and event.service_id is not None:
        fields["serviceId"] = str(event.service_id)
    if isinstance(event, e.ConnectionClosedEvent):
        fields["reason"] = CLOSED_REASONS.get(event.reason, event.reason)
    if isinstance(event, e.ConnectionCheckOutFailedEvent):
        fields["reason"] = CHECK_OUT_FAILED_REASONS.get(event.reason, event.reason)
    if getattr(event, "duration", None) is not None:
        fields["durationMS"] = event.duration * 1000
    if error is not None:
        fields["error"] = error
    return fields


def log_pool_event(event, topology_id, error=None):
    fields = fields_of(event, error)
    text = f"{fields['message']} for {format_address(event.address)}"
    if "driverConnectionId" in fields:
        text += f", connection {fields['driverConnectionId']}"
    if "reason" in fields:
        text += f": {fields['reason']}"
    if error is not None:
        text += f" ({error})"
    log.emit(log.CONNECTION, log.DEBUG, text, topology_id=topology_id, **fields)
