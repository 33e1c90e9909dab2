"""Exhaust cursors (``CursorType.EXHAUST``): the batches the server streams unasked on the
cursor's connection (OP_MSG moreToCome), and giving a stream up when another operation needs
that connection (one socket per server). Loaded only by an exhaust cursor.
"""
from __future__ import annotations

from typing import Any

from singlemongo.errors import ConnectionFailure
from singlemongo.replies import is_ok

def receive_batch(cursor: Any, conn: Any, deadline: Any = None) -> None:
    """The next batch the server streams; events as for a getMore (PyMongo's)."""
    from singlemongo.server_cursor import BATCH_FIELDS
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
            from singlemongo.reply_errors import error_from_reply
            raise error_from_reply(reply, conn.address)
        cursor._take_reply(reply, "nextBatch")


def abandon(cursor: Any) -> None:
    """Another operation needs the server while ``cursor``'s stream has not ended: the
    stream's connection is closed at once (it cannot be reused mid-stream; the server ends
    the cursor with it), none of the rest is read, and the cursor, once its buffer is read,
    says why it ended. Before, the rest was drained first: a server streaming without end
    held the next operation up to 5 s and 32 MiB."""
    topology = cursor._topology
    conn = topology.cursor_connection(cursor._address)
    cursor._abandoned = ("its exhaust stream's connection was closed when another operation "
                         "needed the server before the stream ended")
    cursor._release_session(dirty=True)  # the server ends the cursor with the connection
    if conn is not None and not conn.closed:
        conn.close_reason = "error"  # CMAP: a connection that cannot be used again
        conn.close()
