"""Command monitoring (command logging and monitoring spec): started, succeeded and failed
events and log messages around every application command, each attempt of a retried
operation included. Sensitive commands and their replies are replaced by empty documents."""
from ..records import dataclass
from typing import Any

from . import log, next_operation_id

SENSITIVE = frozenset({"authenticate", "saslstart", "saslcontinue", "getnonce", "createuser",
                       "updateuser", "copydbgetnonce", "copydbsaslstart", "copydb"})
def is_sensitive(name, cmd):
    lname = name.lower()
    return lname in SENSITIVE or (lname in ("hello", "ismaster")
                                  and "speculativeAuthenticate" in cmd)


@dataclass(frozen=True, kw_only=True)
class _CommandEvent:
    command_name: str
    database_name: str
    request_id: int
    operation_id: int
    connection_id: Any  # the server's (host, port), as PyMongo's
    server_connection_id: Any = None
    service_id: Any = None


@dataclass(frozen=True, kw_only=True)
class CommandStartedEvent(_CommandEvent):
    command: dict


class _Timed:
    duration: float

    @property
    def duration_micros(self) -> int:
        """The duration in microseconds (PyMongo's name; ``duration`` is in seconds)."""
        return int(self.duration * 1_000_000)


@dataclass(frozen=True, kw_only=True)
class CommandSucceededEvent(_CommandEvent, _Timed):
    duration: float
    reply: dict


@dataclass(frozen=True, kw_only=True)
class CommandFailedEvent(_CommandEvent, _Timed):
    duration: float
    failure: Any


def _redacted_failure(failure):
    if isinstance(failure, dict):
        return {k: failure[k] for k in ("code", "codeName", "errorLabels") if k in failure}
    return type(failure).__name__


def _common(conn, db, name, request_id, operation_id):
    host, port = conn.address
    fields = {"commandName": name, "databaseName": db, "requestId": request_id,
              "operationId": operation_id, "driverConnectionId": conn.id, "serverHost": host,
              "serverPort": port,
              "serverConnectionId": (conn.hello or {}).get("connectionId")}
    if conn.service_id is not None:
        fields["serviceId"] = str(conn.service_id)
    return fields


def _where(f):
    service = f" with service ID {f['serviceId']}" if "serviceId" in f else ""
    return (f"using a connection with driver-generated ID {f['driverConnectionId']} and "
            f"server-generated ID {f['serverConnectionId']} to {f['serverHost']}:{f['serverPort']}"
            f"{service}. The requestID is {f['requestId']} and the operation ID is "
            f"{f['operationId']}")


def run(bus, clock, conn, db, cmd, timeout_s=None, sequences=(), operation_id=None,
        codec=None, user_fields=None, unacknowledged=False, exhaust=None):
    """``conn.dispatch`` with events and log messages (``EventBus.command`` calls it only
    when anyone listens). An exhaust stream publishes the events as PyMongo does for every
    batch."""
    logging_on = log.enabled(log.COMMAND)
    name = next(iter(cmd))
    operation_id = operation_id or next_operation_id()
    request_id = conn.peek_request_id()
    sensitive = is_sensitive(name, cmd)
    shown = {} if sensitive else dict(cmd, **{k: v for k, v in sequences}, **{"$db": db})
    ids = dict(command_name=name, database_name=db, request_id=request_id,
               operation_id=operation_id, connection_id=conn.address,
               server_connection_id=(conn.hello or {}).get("connectionId"),
               service_id=conn.service_id)
    f = _common(conn, db, name, request_id, operation_id)
    bus.publish(CommandStartedEvent(command=shown, **ids))
    if logging_on:
        log.emit(log.COMMAND, log.DEBUG, f'Command "{name}" started on database "{db}" '
                 f'{_where(f)}. Command: {log.document(shown)}', message="Command started",
                 command=log.document(shown), topology_id=bus.topology_id, **f)
    start = clock.monotonic()
    try:
        reply = conn.dispatch(db, cmd, timeout_s, sequences, codec, user_fields,
                              unacknowledged, exhaust)
    except Exception as exc:
        # "Security": only a server's error is redacted; a network error carries nothing of
        # the server's, and the exception is shown whole.
        _failed(bus, clock, start, exc, ids, f, logging_on)
        raise
    if reply.get("ok") in (0, 0.0, False):
        failure = _redacted_failure(reply) if sensitive else reply
        _failed(bus, clock, start, failure, ids, f, logging_on)
        return reply
    duration = clock.monotonic() - start
    shown_reply = {} if sensitive else reply
    bus.publish(CommandSucceededEvent(duration=duration, reply=shown_reply, **ids))
    if logging_on:
        log.emit(log.COMMAND, log.DEBUG, f'Command "{name}" succeeded on database "{db}" in '
                 f'{duration * 1000:.3f} ms {_where(f)}. Command reply: '
                 f'{log.document(shown_reply)}', message="Command succeeded",
                 durationMS=duration * 1000, reply=log.document(shown_reply),
                 topology_id=bus.topology_id, **f)
    return reply


def _failed(bus, clock, start, failure, ids, f, logging_on):
    duration = clock.monotonic() - start
    bus.publish(CommandFailedEvent(duration=duration, failure=failure, **ids))
    name, db = ids["command_name"], ids["database_name"]
    if logging_on:
        text = log.document(failure) if isinstance(failure, dict) else str(failure)
        log.emit(log.COMMAND, log.DEBUG, f'Command "{name}" failed on database "{db}" in '
                 f'{duration * 1000:.3f} ms {_where(f)}. Error: {text}',
                 message="Command failed", durationMS=duration * 1000, failure=text,
                 topology_id=bus.topology_id, **f)
