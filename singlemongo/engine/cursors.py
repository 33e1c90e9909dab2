"""Killing cursors: killCursors for a cursor closed by the user, and for those the garbage
collector dropped since the last operation (queued by ``Topology.defer_kill``: no I/O in
``__del__``), sent inline before the next operation.
"""
from bson import Int64

from singlemongo.errors import PyMongoError
from singlemongo.engine.request import Request


def flush_kill_queue(topology):
    """killCursors for cursors garbage-collected since the last operation (no I/O in __del__)."""
    while topology._kill_queue:
        address, db, coll, cursor_id, check_in = topology._kill_queue.pop(0)
        conn = topology._connections.get(address)
        if cursor_id and conn is not None and not conn.closed:
            kill_cursor(topology, conn, db, coll, cursor_id)
        if check_in is not None:  # the connection the cursor was pinned to, after its kill
            check_in()


def kill_cursor(topology, conn, db, coll, cursor_id, session=None, explicit_session=None):
    """killCursors on ``conn``, as every command (overload retries, client backpressure),
    within the timeoutMS in force; without one within socketTimeoutMS, else
    connectTimeoutMS: never unbounded. A failure is not raised: the server times the cursor
    out."""
    options = topology.options
    fallback_ms = options.socket_timeout_ms or options.connect_timeout_ms
    try:
        from singlemongo.engine.operation import execute  # the operation runs this module's flush first
        execute(topology, Request(
            db, {"killCursors": coll, "cursors": [Int64(cursor_id)]}, None, is_read=False,
            session=session, keep_session=True, pinned=conn, explicit_session=explicit_session,
            reply_timeout_s=fallback_ms / 1000.0 if fallback_ms else None))
    except PyMongoError:
        pass
