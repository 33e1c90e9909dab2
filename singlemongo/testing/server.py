"""One simulated mongod/mongos: a real TCP listener on 127.0.0.1 with its own thread.

The simulator is test support, not the driver: it runs a thread per server so that latency
on one server never delays another. Faults are scripted per command; counters record every
connection and command.
"""
from __future__ import annotations

import collections
import heapq
import itertools
import selectors
import socket
import ssl
import struct
import threading
import time
from typing import Any

from bson import Int64
from bson.codec_options import CodecOptions, DatetimeConversion

from singlemongo.wire import compression, messages as wire
from singlemongo.testing.failpoints import (DRIP, FAULT_ACTIONS, FAULT_REPLY, HALF_THEN_RESET, HANG, NO_FAULT,
                         NO_REPLY, RAW, RUN_ADD_WCE, RUN_NO_REPLY, SEND, Fault,
                         add_write_concern_error, canonical, check_command_name, from_command,
                         is_retryable_write)
from singlemongo.testing.query import waits
from singlemongo.testing.query.codes import error_reply
from singlemongo.testing import streaming
from singlemongo.testing.streaming import cursor_open

_LINGER_RST = struct.pack("ii", 1, 0)
# mongod's maxMessageSizeBytes: a header claiming more is refused before the body is read.
MAX_MESSAGE_SIZE = 48_000_000
# A server keeps dates as UTC instants; naive datetimes are what the query engine compares.
# A date outside Python's range (years before 1 or after 9999) stays a BSON value (DatetimeMS),
# as a server keeps it, never a request the server cannot read.
SERVER_CODEC: CodecOptions[dict[str, Any]] = CodecOptions(
    tz_aware=False, datetime_conversion=DatetimeConversion.DATETIME_AUTO)


class _Conn:
    def __init__(self, sock, number):
        self.sock = sock
        self.number = number
        self.buffer = bytearray()
        self.hung = False
        self.paused = False  # a reply is deferred: read nothing more until it is sent
        self.state = {}
        # An exhaust getMore streaming: (the last reply's requestId, the getMore command,
        # compressor); the next reply goes out when the socket is writable.
        self.stream = None
        self.handshaking = False  # TLS: the handshake is still under way
        # Reply bytes the socket has not taken yet (a client that does not read): until they
        # are gone the connection is only written to, and nothing more of it is read.
        self.outgoing = bytearray()


class SimServer:
    def __init__(self, handler, port=0, tls_context=None):
        self.handler = handler
        self.tls_context = tls_context  # handler(server, command_name, command, conn_state) -> reply
        self.port = port
        self.host = "127.0.0.1"  # the name it announces (it always listens on 127.0.0.1)
        self.latency_s = 0.0
        self.faults = []
        self.failpoints = {}  # fail point name -> its Fault (configureFailPoint)
        self.connections = 0  # accepted since start or reset
        self._connection_ids = 0
        self.commands = collections.Counter()
        self.command_log = []
        self.streamed = 0  # exhaust replies sent unasked (not counted in commands)
        self.compressed_requests = 0
        self.compressed_replies = 0
        self.before_reply = None  # a test hook run in the server's thread before each reply
        self.errors = []  # what went wrong inside the server (a connection was dropped)
        self._deferred = []  # (due, sequence, work): replies held back by blockConnection
        self._sequence = itertools.count()
        # The operations whose replies wait (blockConnection, $where's sleep): opid ->
        # (command, when it started, what answers it if killOp interrupts it).
        self.waiting = {}
        self.opids = itertools.count(1)  # currentOp's operation ids
        self.unanswered = []  # commands sent with moreToCome (no reply expected)
        self.accepts_op_query = True
        self.limits = {}  # maxBsonObjectSize... overrides in this server's hello
        self.hello_extra = {}  # fields merged into this server's hello (hostile servers)
        # Whether a retryable write already ran (a deployment's store answers; see Fault).
        self.executed_before = lambda cmd: False
        self.time_limited = lambda name, cmd: bool(cmd.get("maxTimeMS"))
        self.await_data = None  # how long a getMore may wait for data (the store says)
        self._listener = None
        self._thread = None
        self._running = False
        self._conns = {}
        self._wake_r = self._wake_w = None
        self._lock = threading.Lock()

    @property
    def address(self):
        return ("127.0.0.1", self.port)

    @property
    def address_text(self):
        return f"{self.host}:{self.port}"

    @property
    def running(self):
        return self._running

    def start(self):
        if self._running:
            return self
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(64)
        listener.setblocking(False)
        self.port = listener.getsockname()[1]
        self._listener = listener
        self._wake_r, self._wake_w = socket.socketpair()
        self._running = True
        self._thread = threading.Thread(target=self._serve, name=f"sim-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self):
        """Stop listening and drop every connection (connections are then refused)."""
        if not self._running:
            return
        self._running = False
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        self._thread.join(5)
        self._wake_r.close()
        self._wake_w.close()

    def reset(self):
        """Up, with no faults, latency, hooks or counters (for reuse between tests)."""
        self.clear_faults()
        self.limits = {}
        self.hello_extra = {}
        self.latency_s = 0.0
        self.before_reply = None
        self.connections = 0
        self.commands.clear()
        self.command_log.clear()
        self.streamed = 0
        self.unanswered.clear()
        self.compressed_requests = 0
        self.compressed_replies = 0
        self.errors.clear()
        self.start()

    def fail(self, command, **kwargs):
        """Script a Fault (see ``failpoints.Fault``) for ``command``; returns it. A name one
        letter or two from a command the simulator serves is refused as a typo: its fault
        would never fire."""
        for name in (command, *kwargs.get("commands", ())):
            check_command_name(name)
        fault = Fault(command, **kwargs)
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear_faults(self):
        with self._lock:
            self.faults.clear()
            self.failpoints.clear()

    def _configure(self, cmd):
        """configureFailPoint: a fail point replaces any earlier one of the same name."""
        try:
            name, fault = from_command(cmd)
        except Exception as exc:  # a bad fail point is the client's error, not a dead server
            return error_reply(getattr(exc, "code", 2), str(exc))
        with self._lock:
            old = self.failpoints.pop(name, None)
            if old in self.faults:
                self.faults.remove(old)
            if fault is not None:
                self.failpoints[name] = fault
                self.faults.append(fault)
        return {"ok": 1}

    def _take_fault(self, name, cmd, conn):
        # The handshake that carries the client metadata already counts as that client's.
        client = conn.state.get("handshake", {}).get("client") or (
            cmd.get("client") if isinstance(cmd.get("client"), dict) else None) or {}
        app_name = (client.get("application") or {}).get("name")
        with self._lock:
            for fault in list(self.faults):
                if not fault.matches(name, cmd, app_name):
                    continue
                if fault.transactional and (not is_retryable_write(cmd)
                                            or self.executed_before(cmd)):
                    continue
                if fault.time_limited_only and not self.time_limited(name, cmd):
                    continue
                if fault.skip:
                    fault.skip -= 1
                    continue
                if fault.times is not None:
                    fault.times -= 1
                    if fault.times <= 0:
                        self.faults.remove(fault)
                return fault
        return None

    def _serve(self):
        sel = selectors.DefaultSelector()
        sel.register(self._listener, selectors.EVENT_READ, "listen")
        sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        try:
            while self._running:
                wait = 0.5 if not self._deferred else max(
                    0.0, min(0.5, self._deferred[0][0] - time.monotonic()))
                ready = sel.select(wait)
                self._run_deferred()
                for key, events in ready:
                    if key.data == "listen":
                        self._accept(sel)
                    elif key.data != "wake":
                        try:
                            if events & selectors.EVENT_WRITE and key.data.outgoing:
                                self._flush(sel, key.data)
                            elif events & selectors.EVENT_WRITE and key.data.stream:
                                streaming.stream_next(self, sel, key.data)
                            if events & selectors.EVENT_READ:
                                self._readable(sel, key.data)
                        except Exception as exc:  # never let one connection kill the server
                            self.errors.append(repr(exc))
                            self._close(sel, key.data)
        finally:
            for conn in list(self._conns.values()):
                self._close(sel, conn)
            sel.close()
            self._listener.close()

    def _accept(self, sel):
        try:
            sock, _ = self._listener.accept()
        except OSError:
            return
        sock.setblocking(True)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.tls_context is not None:
            # The handshake goes on as the client's bytes come (_readable), never holding
            # the other connections: a client that connects and sends nothing costs nothing.
            try:
                sock = self.tls_context.wrap_socket(sock, server_side=True,
                                                    do_handshake_on_connect=False)
            except OSError:
                sock.close()
                return
            sock.setblocking(False)
        self.connections += 1
        self._connection_ids += 1
        conn = _Conn(sock, self._connection_ids)
        conn.state["connection_id"] = self._connection_ids
        conn.handshaking = self.tls_context is not None
        self._conns[sock.fileno()] = conn
        sel.register(sock, selectors.EVENT_READ, conn)

    def _tls_handshake(self, sel, conn):
        """One step of a connection's TLS handshake; True once it is done."""
        try:
            conn.sock.do_handshake()
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return False
        except OSError:
            self._close(sel, conn)
            return False
        conn.handshaking = False
        # MONGODB-X509 reads the client's certificate.
        conn.state["peer_certificate"] = conn.sock.getpeercert() or None
        return True

    def _close(self, sel, conn, reset=False):
        self._conns.pop(conn.sock.fileno(), None)
        try:
            sel.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        if reset:
            try:
                conn.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, _LINGER_RST)
            except OSError:
                pass
        conn.sock.close()

    def _readable(self, sel, conn):
        if conn.handshaking and not self._tls_handshake(sel, conn):
            return
        tls = self.tls_context is not None
        try:
            if tls:  # a record not yet whole waits for its other half, holding nobody
                conn.sock.setblocking(False)
            data = conn.sock.recv(1 << 16)
            while getattr(conn.sock, "pending", lambda: 0)():
                data += conn.sock.recv(1 << 16)
        except ssl.SSLWantReadError:
            return
        except OSError:
            data = b""
        finally:
            if tls and conn.sock.fileno() >= 0:
                conn.sock.setblocking(True)  # replies are sent whole
        if not data:
            self._close(sel, conn)
            return
        conn.buffer.extend(data)
        self._drain(sel, conn)

    def _drain(self, sel, conn):
        """Answer every complete request buffered on ``conn``, in order, until one is deferred."""
        while len(conn.buffer) >= 16 and not conn.paused and not conn.outgoing:
            length, request_id, _, op_code = wire.HEADER.unpack_from(conn.buffer)
            if not 16 <= length <= MAX_MESSAGE_SIZE:  # mongod closes it, unread
                self._close(sel, conn)
                return
            if len(conn.buffer) < length:
                return
            body = bytes(conn.buffer[16:length])
            del conn.buffer[:length]
            if not self._respond(sel, conn, request_id, op_code, body):
                return

    def _decode(self, op_code, body):
        """(command, legacy OP_QUERY?, compressor or None, expects a reply?, exhaust
        allowed?)."""
        compressor = None
        if op_code == wire.OP_COMPRESSED:
            compressor = {v: k for k, v in compression.COMPRESSOR_IDS.items()}[body[8]]
            op_code, body = compression.decompress_body(body)  # the server accepts what it offered
            self.compressed_requests += 1
        if op_code == wire.OP_QUERY:
            _, namespace, cmd = wire.decode_op_query(body, SERVER_CODEC)
            cmd = dict(cmd)
            cmd.setdefault("$db", namespace.split(".")[0])
            return cmd, True, compressor, True, False
        flags, cmd, sequences = wire.decode_op_msg(body, SERVER_CODEC)
        for identifier, docs in sequences.items():
            cmd[identifier] = docs
        return (cmd, False, compressor, not flags & wire.MORE_TO_COME,
                bool(flags & wire.EXHAUST_ALLOWED))

    def _respond(self, sel, conn, request_id, op_code, body):
        try:
            cmd, legacy, compressor, wants_reply, exhaust = self._decode(op_code, body)
        except Exception:  # a server drops a connection that sends what it cannot read
            self._close(sel, conn)
            return False
        conn.state["exhaust"] = exhaust and next(iter(cmd), "") == "getMore"
        name = next(iter(cmd), "")
        self.commands[canonical(name)] += 1
        self.command_log.append(cmd)
        if not wants_reply:  # moreToCome: run it, answer nothing
            self.unanswered.append(cmd)
            self._run(name, cmd, conn)
            return True
        if legacy and not self.accepts_op_query:
            conn.hung = True  # a peer that only speaks OP_MSG never answers OP_QUERY
            return False
        conn.state["legacy"] = legacy
        fault = self._take_fault(name, cmd, conn)
        if fault is None and not legacy and streaming.await_seconds(self, name, cmd):
            streaming.await_hello(self, sel, conn, request_id, name, cmd, compressor, exhaust)
            return False
        if fault is None and self._awaits_data(name, cmd, legacy):
            streaming.await_data(self, sel, conn, request_id, name, cmd, compressor)
            return False
        if fault is not None and fault.block_s:
            # blockConnection blocks this operation only, as on a real server: the reply is
            # deferred and the other connections are served meanwhile. A getMore blocked and
            # then run as usual then waits for data as usual (awaitData).
            conn.paused = True
            interrupted = self._interrupted(sel, conn, request_id, name, cmd, legacy,
                                            compressor)
            if fault.action == "block" and self._awaits_data(name, cmd, legacy):
                self._wait(fault.block_s, cmd, lambda: streaming.await_data(
                    self, sel, conn, request_id, name, cmd, compressor), interrupted)
                return False
            self._wait(fault.block_s, cmd, lambda: self._reply(
                sel, conn, request_id, name, cmd, legacy, compressor, fault), interrupted)
            return False
        return self._reply(sel, conn, request_id, name, cmd, legacy, compressor, fault)

    def _awaits_data(self, name, cmd, legacy):
        return (not legacy and name == "getMore" and self.await_data is not None
                and bool(self.await_data(cmd)))

    def _defer(self, seconds, work):
        heapq.heappush(self._deferred, (time.monotonic() + seconds, next(self._sequence), work))

    def _wait(self, seconds, cmd, work, interrupted):
        """``work`` (the reply) after ``seconds``, meanwhile listed by currentOp; killOp
        answers ``interrupted`` instead."""
        opid = next(self.opids)
        self.waiting[opid] = (cmd, time.monotonic(), interrupted)

        def done():
            if self.waiting.pop(opid, None) is not None:
                work()
        self._defer(seconds, done)

    def _interrupted(self, sel, conn, request_id, name, cmd, legacy, compressor):
        reply = error_reply(11601, "operation was interrupted")
        return lambda: self._send_later(sel, conn, request_id, name, cmd, legacy, compressor,
                                        SEND, None, reply)

    def kill_op(self, opid):
        """killOp: a waiting operation is answered Interrupted (11601) now; False if no
        operation of that opid waits."""
        entry = self.waiting.pop(opid, None)
        if entry is not None:
            entry[2]()
        return entry is not None

    def _run_deferred(self):
        while self._deferred and self._deferred[0][0] <= time.monotonic():
            try:
                heapq.heappop(self._deferred)[2]()
            except Exception as exc:  # a deferred reply never kills the server either
                self.errors.append(repr(exc))

    def _reply(self, sel, conn, request_id, name, cmd, legacy, compressor, fault):
        """Answer one request (after its fault's block, if any); False if the connection ends."""
        if conn.paused:  # a deferred reply: the connection reads again once it is sent
            conn.paused = False
            if conn.sock.fileno() < 0:
                return False
            ok = self._reply(sel, conn, request_id, name, cmd, legacy, compressor, fault)
            if ok:
                self._drain(sel, conn)
            return ok
        answer, delivery = FAULT_ACTIONS[fault.action] if fault is not None else NO_FAULT
        reply = self._answer(answer, fault, name, cmd, conn)
        wait_s = waits.take()  # what the command asked to wait ($where's sleep)
        if reply is None or conn.hung:
            if delivery == HANG:
                conn.hung = True
            elif not conn.hung:
                self._close(sel, conn, reset=True)
            return False
        if wait_s > 0:
            # The reply waits, as blockConnection's does: the store's lock is free and this
            # thread serves the other connections meanwhile.
            conn.paused = True
            self._wait(wait_s, cmd, lambda: self._send_later(
                sel, conn, request_id, name, cmd, legacy, compressor, delivery, fault, reply),
                self._interrupted(sel, conn, request_id, name, cmd, legacy, compressor))
            return False
        return self._send_reply(sel, conn, request_id, name, cmd, legacy, compressor, delivery,
                                fault, reply)

    def _send_later(self, sel, conn, *reply_args):
        conn.paused = False
        if conn.sock.fileno() < 0:
            return False
        ok = self._send_reply(sel, conn, *reply_args)
        if ok:
            self._drain(sel, conn)
        return ok

    def _send_reply(self, sel, conn, request_id, name, cmd, legacy, compressor, delivery, fault,
                    reply):
        """Encode ``reply`` and send it as ``delivery`` says; False if the connection ends."""
        if self.latency_s:
            time.sleep(self.latency_s)
        if self.before_reply is not None:
            self.before_reply(self, name)
        streams = conn.state.get("exhaust") and cursor_open(reply)
        data = self._encode(request_id, reply, legacy, streams)
        if compressor is not None:  # compression spec: the reply uses the request's
            data = compression.compress_message(data, compressor)
            self.compressed_replies += 1
        if streams:  # exhaust: the next batch goes out unasked, when the socket can take it
            conn.stream = (request_id + 1, cmd, compressor)
            sel.modify(conn.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, conn)
        if delivery == RAW:
            data = fault.raw(request_id)
        try:
            return self._DELIVERIES[delivery](self, sel, conn, data, fault)
        except OSError:
            self._close(sel, conn)
            return False

    def _deliver(self, sel, conn, data, fault):
        self._send(sel, conn, data)
        return True

    def _half_then_reset(self, sel, conn, data, fault):
        conn.sock.sendall(data[:len(data) // 2])
        self._close(sel, conn, reset=True)
        return False

    def _drip(self, sel, conn, data, fault):
        for i in range(len(data)):
            conn.sock.sendall(data[i:i + 1])
            time.sleep(fault.drip_s)
            if not self._running:
                return False
        return True

    # How a reply's bytes go out (failpoints.FAULT_ACTIONS); False: the connection ended.
    _DELIVERIES = {SEND: _deliver, RAW: _deliver, HALF_THEN_RESET: _half_then_reset,
                   DRIP: _drip}

    def _send(self, sel, conn, data):
        """Send what the socket takes now; the rest goes out as the client reads (_flush),
        so a client that stops reading holds itself only, never the server's one thread."""
        if not conn.outgoing:
            data = memoryview(data)[self._send_some(conn, data):]
        if len(data):
            conn.outgoing += data
            sel.modify(conn.sock, selectors.EVENT_WRITE, conn)

    @staticmethod
    def _send_some(conn, data):
        conn.sock.setblocking(False)
        try:
            return conn.sock.send(data)
        except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
            return 0
        finally:
            conn.sock.setblocking(True)

    def _flush(self, sel, conn):
        """The socket can take more of the held-back reply bytes; once all are gone the
        connection is read again (and an exhaust stream goes on)."""
        del conn.outgoing[:self._send_some(conn, conn.outgoing)]
        if not conn.outgoing:
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if conn.stream else 0)
            sel.modify(conn.sock, events, conn)
            self._drain(sel, conn)

    def _run(self, name, cmd, conn):
        if name == "configureFailPoint":
            return self._configure(cmd)
        try:
            return self.handler(self, name, cmd, conn.state)
        except Exception as exc:  # a command never kills the server
            return error_reply(1, f"the simulated server failed: {type(exc).__name__}: {exc}")

    def _answer(self, answer, fault, name, cmd, conn):
        """The reply ``answer`` (failpoints.FAULT_ACTIONS) says, or None when the connection
        is not answered (closed or hung)."""
        if answer == FAULT_REPLY:
            return fault.reply(cmd)
        if answer == NO_REPLY:
            return None
        reply = self._run(name, cmd, conn)
        if answer == RUN_ADD_WCE and reply.get("ok"):
            reply = add_write_concern_error(reply, cmd, fault.write_concern_error, fault.labels)
        return None if answer == RUN_NO_REPLY else reply

    def _encode(self, request_id, reply, legacy, more_to_come=False):
        try:
            return (wire.encode_op_reply(request_id + 1, request_id, [reply]) if legacy
                    else self._op_msg_reply(request_id, reply, more_to_come))
        except Exception as exc:  # a reply the server cannot encode is its own error
            return self._encode(request_id, error_reply(
                1, f"the simulated server cannot encode its reply: {exc}"), legacy)

    @staticmethod
    def _op_msg_reply(request_id, reply, more_to_come=False):
        cursor = reply.get("cursor")
        if isinstance(cursor, dict) and type(cursor.get("id")) is int:
            # A server's cursor id is always a long (NumberLong), 0 included.
            reply = {**reply, "cursor": {**cursor, "id": Int64(cursor["id"])}}
        data = wire.encode_op_msg(request_id + 1, reply,
                                  flags=wire.MORE_TO_COME if more_to_come else 0)
        return data[:8] + struct.pack("<i", request_id) + data[12:]
