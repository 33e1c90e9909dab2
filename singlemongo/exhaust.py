"""Exhaust cursors (``CursorType.EXHAUST``): the batches the server streams unasked on the
cursor's connection (OP_MSG moreToCome), and draining a stream when another operation needs
that connection (one socket per server). Loaded only by an exhaust cursor.
"""
from __future__ import annotations

from typing import Any

from .clock import Deadline
from .errors import ConnectionFailure
from .replies import is_ok

# Another operation on an exhaust cursor's server first reads the rest of its stream, but at
# most this much, for at most this long (issue 46: a server that streams without end blocked
# every later operation while memory grew without bound).
DRAIN_MAX_BYTES = 32 * 2**20
DRAIN_MAX_S = 5.0


def receive_batch(cursor: Any, conn: Any, deadline: Any = None) -> None:
    """The next batch the server streams; events as for a getMore (PyMongo's)."""
    from .command_cursor import BATCH_FIELDS
    topology = cursor._topology
    assert cursor._ns is not None
    with topology.operation():
        deadline = deadline or topology.deadline or \
            topology.options.socket_timeout_ms / 1000.0 or None
        try:
            reply = topology.events.command(
                topology.clock, conn, cursor._ns[0], cursor._stream_command, deadline,
                codec=cursor._collection.codec_options, user_fields=BATCH_FIELDS,
                exhaust="receive")
        except ConnectionFailure:
            cursor._id = 0
            cursor._release_session(dirty=True)
            raise
        topology.sessions.advance_cluster_time(reply)
        if not is_ok(reply):
            cursor._id = 0
            cursor._release_session()
            from .reply_errors import error_from_reply
            raise error_from_reply(reply, conn.address)
        cursor._take_reply(reply, "nextBatch")


def drain(cursor: Any) -> None:
    """Read the rest of ``cursor``'s stream into its buffer; the documents stay readable.
    Bounded by DRAIN_MAX_BYTES and DRAIN_MAX_S: past either (a server that streams without
    end), the stream's connection is closed and the cursor ends with an error once its
    buffer is read."""
    topology = cursor._topology
    conn = topology.connections.get(cursor._address)
    if conn is None:
        return
    first_byte = conn.received_bytes
    deadline = Deadline(topology.clock, DRAIN_MAX_S, "the drain")
    while conn.more_to_come and not conn.closed:
        drained = conn.received_bytes - first_byte
        if drained > DRAIN_MAX_BYTES or deadline.expired():
            cursor._abandoned = (f"its exhaust stream was abandoned after {drained} bytes "
                                 f"and {DRAIN_MAX_S - (deadline.remaining() or 0):.1f} s of "
                                 f"draining, so that another operation could use the "
                                 f"connection (at most {DRAIN_MAX_BYTES} bytes, "
                                 f"{DRAIN_MAX_S:g} s)")
            conn.close_reason = "error"
            conn.close()
            if cursor._id and cursor._ns is not None:  # killed inline by a later operation
                topology.kill_queue.append((cursor._address, *cursor._ns, cursor._id))
            return
        receive_batch(cursor, conn, deadline)
