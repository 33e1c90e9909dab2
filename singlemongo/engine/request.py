"""One operation as the face asks for it (``Request``), what it gets back (``Outcome``), and
how a failed attempt of it may be retried (``retry_kind``: retryable reads and writes
specs), decided in this one place.
"""
from __future__ import annotations

from typing import Any, Optional

from ..records import dataclass
from ..sdam.server_description import ServerDescription, ServerType


@dataclass
class Request:
    db: str
    command: dict
    criteria: Any
    is_read: bool = True
    retry: Optional[str] = None  # "read", "write" or None
    sequences: tuple = ()
    session: Any = None  # a ServerSession the caller keeps (cursors); else implicit
    keep_session: bool = False  # an implicit session outlives the call (a cursor owns it)
    pinned: Any = None  # the connection a cursor is bound to: no selection, same server
    unacknowledged: bool = False  # w: 0: sent with moreToCome, no reply, never retried
    codec: Any = None  # the user's CodecOptions: encodes the command, decodes the reply
    user_fields: Any = None  # where the user's documents are in the reply (selective decoding)
    explicit_session: Any = None  # the user's ClientSession (client_session.py), if any
    # False for the generic command: a writeConcernError in an ok reply is returned, not
    # raised (PyMongo's Database.command does not parse it).
    parse_write_concern_error: bool = True
    exhaust: Optional[str] = None  # "allow": a getMore the server may answer with a stream
    # prepare(connection): called once, on the first connection the operation gets, before
    # anything is sent; it checks sizes against that server's limits (DocumentTooLarge) and
    # may set ``sequences`` and ``retry`` (a bulk write's batch is cut to those limits).
    # One selection per operation: no separate lookup of the limits.
    prepare: Any = None
    operation_id: Optional[int] = None  # the caller's, shared by a bulk write's commands
    # Without timeoutMS, what bounds the reply instead of socketTimeoutMS (None: that).
    reply_timeout_s: Optional[float] = None
    # CSOT, "Tailable non-awaitData Cursors": False sends no maxTimeMS (the server would cap
    # every later getMore with it); the timeout is kept on the client only.
    send_max_time: bool = True


@dataclass
class Outcome:
    reply: dict
    server: ServerDescription
    session: Any
    deadline: Any = None  # the timeoutMS it ran within (a cursor lives within it)
    # Behind a load balancer, with pool events: checks the cursor's connection back in
    # (engine/pool.py). The cursor that takes this outcome calls it when it ends.
    check_in: Any = None
    command_name: str = ""  # what the reply answers (an error about its shape names it)
    statements: Optional[int] = None  # a write's documents, updates or deletes sent


def retry_kind(req, step, options, unacknowledged, has_session, server_type=None):
    """How a failed attempt of ``req`` may be retried: "read", "write" or None. In a
    transaction, the transaction's rule (``step``); else a retryable read when retryReads,
    a retryable write when retryWrites, acknowledged, with a session (sessions supported),
    and, once the server is known (``server_type``), not on a standalone (retryable writes,
    "Supported Server Versions")."""
    if step is not None:
        return step.retry_kind
    if req.retry == "read":
        return "read" if options.retry_reads else None
    if req.retry == "write" and options.retry_writes and not unacknowledged and has_session \
            and server_type is not ServerType.STANDALONE:
        return "write"
    return None
