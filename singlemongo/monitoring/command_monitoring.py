"""Command monitoring (command logging and monitoring spec): started, succeeded and failed
events and log messages around every application command, each attempt of a retried
operation included. Sensitive commands and their replies are replaced by empty documents."""
from typing import Any

from singlemongo.replies import is_ok
from singlemongo.monitoring import log, next_operation_id

SENSITIVE = frozenset({"authenticate", "saslstart", "saslcontinue", "getnonce", "createuser",
                       "updateuser", "copydbgetnonce", "copydbsaslstart", "copydb"})
def is_sensitive(name, cmd):
    lname = name.lower()
    return lname in SENSITIVE or (lname in ("hello", "ismaster")
                                  and "speculativeAuthenticate" in cmd)


class _CommandEvent:
    """Base class of the command events, with PyMongo's constructor arguments and reprs (a
    program's own listener tests build them as for PyMongo)."""

    __slots__ = ("command_name", "request_id", "connection_id", "operation_id", "service_id",
                 "database_name", "server_connection_id")

    def __init__(self, command_name: str, request_id: int, connection_id: Any,
                 operation_id: Any, service_id: Any = None, database_name: str = "",
                 server_connection_id: Any = None) -> None:
        self.command_name, self.request_id = command_name, request_id
        self.connection_id, self.operation_id = connection_id, operation_id
        self.service_id, self.database_name = service_id, database_name
        self.server_connection_id = server_connection_id

    def _repr_fields(self) -> str:
        return ""

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.connection_id} db: {self.database_name!r}, "
                f"command: {self.command_name!r}, operation_id: {self.operation_id}"
                f"{self._repr_fields()}, service_id: {self.service_id}, "
                f"server_connection_id: {self.server_connection_id}>")


class CommandStartedEvent(_CommandEvent):
    """A command was sent: ``command`` (empty for a sensitive one), its ``command_name``."""

    __slots__ = ("command",)

    def __init__(self, command: Any, database_name: str, request_id: int,
                 connection_id: Any, operation_id: Any, service_id: Any = None,
                 server_connection_id: Any = None) -> None:
        if not command:
            raise ValueError(f"{command!r} is not a valid command")
        name = next(iter(command))
        super().__init__(name, request_id, connection_id, operation_id, service_id,
                         database_name, server_connection_id)
        # Command monitoring spec, "Security": a sensitive command is shown empty.
        self.command = {} if is_sensitive(name, command) else command


class _Timed(_CommandEvent):
    __slots__ = ("duration",)

    def __init__(self, duration: Any, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # PyMongo takes a timedelta; the driver passes seconds. ``duration`` is in seconds.
        self.duration = duration.total_seconds() if hasattr(duration, "total_seconds") \
            else duration

    @property
    def duration_micros(self) -> int:
        """The duration in microseconds (PyMongo's name; ``duration`` is in seconds)."""
        return int(self.duration * 1_000_000)

    def _repr_fields(self) -> str:
        return f", duration_micros: {self.duration_micros}"


class CommandSucceededEvent(_Timed):
    """A command succeeded: ``reply`` (empty for a sensitive command), ``duration``."""

    __slots__ = ("reply",)

    def __init__(self, duration: Any, reply: Any, command_name: str, request_id: int,
                 connection_id: Any, operation_id: Any, service_id: Any = None,
                 database_name: str = "", server_connection_id: Any = None) -> None:
        super().__init__(duration, command_name, request_id, connection_id, operation_id,
                         service_id, database_name, server_connection_id)
        lname = command_name.lower()
        # Command monitoring spec, "Security": no reply of a sensitive command is shown.
        # Only a hello's reply is looked into (a lazy reply is never inflated otherwise).
        sensitive = lname in SENSITIVE or (
            lname in ("hello", "ismaster") and "speculativeAuthenticate" in reply)
        self.reply = {} if sensitive else reply


class CommandFailedEvent(_Timed):
    """A command failed: ``failure`` is the server's reply, or for an error with no reply
    ``{"errmsg": ..., "errtype": ...}`` (as PyMongo)."""

    __slots__ = ("failure",)

    def __init__(self, duration: Any, failure: Any, command_name: str, request_id: int,
                 connection_id: Any, operation_id: Any, service_id: Any = None,
                 database_name: str = "", server_connection_id: Any = None) -> None:
        super().__init__(duration, command_name, request_id, connection_id, operation_id,
                         service_id, database_name, server_connection_id)
        self.failure = failure

    def _repr_fields(self) -> str:
        return f"{super()._repr_fields()}, failure: {self.failure!r}"


def redacted_failure(failure):
    """A sensitive command's failure as it may be shown: its code, name and labels."""
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
    whole = dict(cmd, **{k: v for k, v in sequences}, **{"$db": db})
    shown = {} if sensitive else whole
    ids = dict(command_name=name, database_name=db, request_id=request_id,
               operation_id=operation_id, connection_id=conn.address,
               server_connection_id=(conn.hello or {}).get("connectionId"),
               service_id=conn.service_id)
    f = _common(conn, db, name, request_id, operation_id)
    bus.publish(CommandStartedEvent(whole, db, request_id, conn.address,
                                    operation_id, conn.service_id,
                                    ids["server_connection_id"]))
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
    if not is_ok(reply):
        failure = redacted_failure(reply) if sensitive else reply
        _failed(bus, clock, start, failure, ids, f, logging_on)
        return reply
    duration = clock.monotonic() - start
    shown_reply = {} if sensitive else reply
    bus.publish(CommandSucceededEvent(duration, shown_reply, **ids))
    if logging_on:
        log.emit(log.COMMAND, log.DEBUG, f'Command "{name}" succeeded on database "{db}" in '
                 f'{duration * 1000:.3f} ms {_where(f)}. Command reply: '
                 f'{log.document(shown_reply)}', message="Command succeeded",
                 durationMS=duration * 1000, reply=log.document(shown_reply),
                 topology_id=bus.topology_id, **f)
    return reply


def _failed(bus, clock, start, failure, ids, f, logging_on):
    duration = clock.monotonic() - start
    # PyMongo's form of an error with no reply: what a listener can log or serialize.
    shown = failure if isinstance(failure, dict) else {"errmsg": str(failure),
                                                       "errtype": type(failure).__name__}
    bus.publish(CommandFailedEvent(duration, shown, **ids))
    name, db = ids["command_name"], ids["database_name"]
    if logging_on:
        text = log.document(failure) if isinstance(failure, dict) else str(failure)
        log.emit(log.COMMAND, log.DEBUG, f'Command "{name}" failed on database "{db}" in '
                 f'{duration * 1000:.3f} ms {_where(f)}. Error: {text}',
                 message="Command failed", durationMS=duration * 1000, failure=text,
                 topology_id=bus.topology_id, **f)
