"""Replies a simulated server sends later or unasked: an exhaust getMore's next batches, and
the awaitable hello of MongoDB 4.4+ (a hello carrying ``topologyVersion`` and
``maxAwaitTimeMS`` waits until this server's topology version changes or the time passes;
with ``exhaustAllowed`` the server goes on sending one such reply after another, as
PyMongo's streaming monitors expect: "Server Monitoring", "Streaming Protocol").

Both run in the server's own thread, from its select loop; a waiting hello is re-checked
every ``POLL_S`` and holds its connection (``conn.paused``) until it is answered.
"""
import selectors
import time

from singlemongo.wire import compression
from singlemongo.testing.query.codes import error_reply

POLL_S = 0.05
HELLOS = frozenset({"hello", "ismaster", "isMaster"})


def cursor_open(reply):
    """Whether a getMore reply leaves its cursor open (an exhaust stream goes on)."""
    cursor = reply.get("cursor") if reply.get("ok") else None
    return isinstance(cursor, dict) and bool(cursor.get("id"))


def stream_next(server, sel, conn):
    """The next reply of an exhaust stream: its requestId follows the last one, and it
    answers that one (OP_MSG moreToCome); the stream ends with the cursor."""
    last_id, cmd, compressor = conn.stream
    reply = server._run("getMore", cmd, conn)
    streaming = cursor_open(reply)
    server.streamed += 1
    conn.stream = (last_id + 1, cmd, compressor) if streaming else None
    if not streaming:
        sel.modify(conn.sock, selectors.EVENT_READ, conn)
    _send(server, sel, conn, last_id, reply, compressor, streaming)


def await_seconds(server, name, cmd):
    """How long an awaitable hello may wait (0: answer now), or None for any other request.
    A client that knows an older topology version, or another process's, is answered now
    ("topologyVersion"): only the current one waits."""
    wait_ms = cmd.get("maxAwaitTimeMS")
    known = cmd.get("topologyVersion")
    if name not in HELLOS or not isinstance(known, dict) or isinstance(wait_ms, bool) or \
            not isinstance(wait_ms, int) or wait_ms < 0:
        return None
    return wait_ms / 1000 if _current(server, known) else 0.0


def _current(server, known):
    return known.get("processId") == server.process_id and \
        known.get("counter") == server.tv_counter


def await_hello(server, sel, conn, request_id, name, cmd, compressor, exhaust, unasked=False):
    """Answer an awaitable hello when the topology changes or its time is up; with
    ``exhaust``, wait again from the version just sent, until the client hangs up (those
    replies are ``unasked``, counted in ``server.streamed``)."""
    conn.paused = True
    due = time.monotonic() + await_seconds(server, name, cmd)

    def check():
        if conn.sock.fileno() < 0 or not server.running:
            return
        left = due - time.monotonic()
        if left > 0 and _current(server, cmd["topologyVersion"]):
            server._defer(min(POLL_S, left), check)
            return
        reply = server._run(name, cmd, conn)
        streaming = exhaust and bool(reply.get("ok"))
        if unasked:
            server.streamed += 1  # before the send: the client may look as soon as it reads
        if not _send(server, sel, conn, request_id, reply, compressor, streaming):
            return
        if streaming:
            again = dict(cmd, topologyVersion=reply["topologyVersion"])
            await_hello(server, sel, conn, request_id + 1, name, again, compressor, True, True)
            return
        conn.paused = False
        server._drain(sel, conn)
    server._defer(0, check)


def await_data(server, sel, conn, request_id, name, cmd, compressor):
    """An awaitData getMore (a change stream with nothing new): answered when there is
    something to return or when its maxTimeMS is up, the connection held meanwhile."""
    conn.paused = True
    due = time.monotonic() + server.await_data(cmd)
    opid = next(server.opids)  # currentOp lists it meanwhile; killOp interrupts it

    def answer(reply):
        if _send(server, sel, conn, request_id, reply, compressor, False):
            conn.paused = False
            server._drain(sel, conn)

    def check():
        if opid not in server.waiting:  # interrupted by killOp: answered already
            return
        if conn.sock.fileno() < 0 or not server.running:
            server.waiting.pop(opid, None)
            return
        left = due - time.monotonic()
        if left > 0 and server.await_data(cmd):
            server._defer(min(POLL_S, left), check)
            return
        server.waiting.pop(opid, None)
        answer(server._run(name, cmd, conn))
    server.waiting[opid] = (cmd, time.monotonic(), lambda: answer(
        error_reply(11601, "operation was interrupted")))
    server._defer(0, check)


def _send(server, sel, conn, request_id, reply, compressor, more_to_come):
    data = server._op_msg_reply(request_id, reply, more_to_come)
    if compressor is not None:
        data = compression.compress_message(data, compressor)
    try:
        conn.sock.sendall(data)
    except OSError:
        server._close(sel, conn)
        return False
    return True
