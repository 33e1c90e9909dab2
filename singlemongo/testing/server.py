"""One simulated mongod/mongos: a real TCP listener on 127.0.0.1 with its own thread.

The simulator is test support, not the driver: it runs a thread per server so that latency
on one server never delays another. Faults are scripted per command; counters record every
connection and command.
"""
import collections
import selectors
import socket
import struct
import threading
import time
from ..records import dataclass, field
from typing import Optional, Tuple

from ..wire import messages as wire

_LINGER_RST = struct.pack("ii", 1, 0)


@dataclass
class Fault:
    """What to do instead of answering ``command`` ("*" for any), ``times`` times (None: forever).

    action: "error" (reply with ``code``/``errmsg``/``labels``/``extra``), "close" (drop the
    connection unanswered), "reset" (send half the reply, then reset the connection), "hang"
    (never answer).
    """
    command: str
    action: str = "error"
    times: Optional[int] = 1
    code: int = 0
    errmsg: str = ""
    labels: Tuple[str, ...] = ()
    extra: dict = field(default_factory=dict)

    def reply(self):
        doc = {"ok": 0, "errmsg": self.errmsg or f"simulated error {self.code}", "code": self.code}
        if self.labels:
            doc["errorLabels"] = list(self.labels)
        doc.update(self.extra)
        return doc


class _Conn:
    def __init__(self, sock, number):
        self.sock = sock
        self.number = number
        self.buffer = bytearray()
        self.hung = False
        self.state = {}


class SimServer:
    def __init__(self, handler, port=0, tls_context=None):
        self.handler = handler
        self.tls_context = tls_context  # handler(server, command_name, command, conn_state) -> reply
        self.port = port
        self.latency_s = 0.0
        self.faults = []
        self.connections = 0
        self.commands = collections.Counter()
        self.command_log = []
        self.compressed_requests = 0
        self.before_reply = None  # a test hook run in the server's thread before each reply
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
        return f"127.0.0.1:{self.port}"

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

    def fail(self, command, **kwargs):
        fault = Fault(command, **kwargs)
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear_faults(self):
        with self._lock:
            self.faults.clear()

    def _take_fault(self, name):
        with self._lock:
            for fault in self.faults:
                if fault.command in ("*", name):
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
                for key, _ in sel.select(0.5):
                    if key.data == "listen":
                        self._accept(sel)
                    elif key.data != "wake":
                        self._readable(sel, key.data)
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
            sock.settimeout(5)
            try:
                sock = self.tls_context.wrap_socket(sock, server_side=True)
            except OSError:
                sock.close()
                return
            sock.settimeout(None)
        self.connections += 1
        conn = _Conn(sock, self.connections)
        self._conns[sock.fileno()] = conn
        sel.register(sock, selectors.EVENT_READ, conn)

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
        try:
            data = conn.sock.recv(1 << 16)
            while getattr(conn.sock, "pending", lambda: 0)():
                data += conn.sock.recv(1 << 16)
        except OSError:
            data = b""
        if not data:
            self._close(sel, conn)
            return
        conn.buffer.extend(data)
        while len(conn.buffer) >= 16:
            length, request_id, _, op_code = wire.HEADER.unpack_from(conn.buffer)
            if len(conn.buffer) < length:
                return
            body = bytes(conn.buffer[16:length])
            del conn.buffer[:length]
            if not self._respond(sel, conn, request_id, op_code, body):
                return

    def _decode(self, op_code, body):
        """(command, legacy OP_QUERY?, compressor or None, expects a reply?)."""
        compressor = None
        if op_code == wire.OP_COMPRESSED:
            compressor = {v: k for k, v in wire.COMPRESSOR_IDS.items()}[body[8]]
            op_code, body = wire.decompress_body(body)
            self.compressed_requests += 1
        if op_code == wire.OP_QUERY:
            _, namespace, cmd = wire.decode_op_query(body)
            cmd = dict(cmd)
            cmd.setdefault("$db", namespace.split(".")[0])
            return cmd, True, compressor, True
        flags, cmd, sequences = wire.decode_op_msg(body)
        for identifier, docs in sequences.items():
            cmd[identifier] = docs
        return cmd, False, compressor, not flags & wire.MORE_TO_COME

    def _respond(self, sel, conn, request_id, op_code, body):
        cmd, legacy, compressor, wants_reply = self._decode(op_code, body)
        if not wants_reply:  # moreToCome: run it, answer nothing
            self.commands[next(iter(cmd), "")] += 1
            self.command_log.append(cmd)
            self.handler(self, next(iter(cmd), ""), cmd, conn.state)
            return True
        name = next(iter(cmd), "")
        self.commands[name] += 1
        self.command_log.append(cmd)
        conn.state["legacy"] = legacy
        fault = self._take_fault(name)
        reply = fault.reply() if fault and fault.action == "error" else \
            self.handler(self, name, cmd, conn.state)
        if fault and fault.action in ("close", "hang"):
            if fault.action == "close":
                self._close(sel, conn, reset=True)
            else:
                conn.hung = True
            return False
        if conn.hung:
            return False
        if self.latency_s:
            time.sleep(self.latency_s)
        if self.before_reply is not None:
            self.before_reply(self, name)
        data = (wire.encode_op_reply(request_id + 1, request_id, [reply]) if legacy
                else self._op_msg_reply(request_id, reply))
        if compressor is not None:
            data = wire.compress_message(data, compressor)
        try:
            if fault and fault.action == "reset":
                conn.sock.sendall(data[:len(data) // 2])
                self._close(sel, conn, reset=True)
                return False
            conn.sock.sendall(data)
        except OSError:
            self._close(sel, conn)
            return False
        return True

    @staticmethod
    def _op_msg_reply(request_id, reply):
        data = wire.encode_op_msg(request_id + 1, reply)
        return data[:8] + struct.pack("<i", request_id) + data[12:]
