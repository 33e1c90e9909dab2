"""A loopback relay between a client and FerretDB's plain listener that records what the client
sends: each message's opcode and its command's first key and field names (OP_MSG section 0,
or OP_QUERY's query). It shows what command monitoring never does: the handshake and the
authentication conversation. The relay is test code and may use threads."""
import socket
import struct
import threading

import bson

OP_QUERY, OP_MSG = 2004, 2013
HEADER = struct.Struct("<iiii")


def _command(op_code, body):
    """(name, field names) of the command a client message carries."""
    if op_code == OP_MSG:
        document = bson.decode(body[5:5 + struct.unpack_from("<i", body, 5)[0]])
    elif op_code == OP_QUERY:
        at = body.index(b"\0", 4) + 1 + 8  # flags, the namespace, skip and return counts
        document = bson.decode(body[at:at + struct.unpack_from("<i", body, at)[0]])
    else:
        return f"opcode {op_code}", []
    return next(iter(document), ""), list(document)


def _one_document(body):
    """Whether an OP_MSG body is one section-0 document and nothing else (no checksum)."""
    return not body[0] & 1 and body[4] == 0 and \
        struct.unpack_from("<i", body, 5)[0] == len(body) - 5


class Relay:
    """``with Relay(target) as relay:`` listens on a free loopback port (``relay.address``)
    and forwards each connection to ``target``; ``relay.sent`` lists (opcode, command name,
    field names) in the order clients sent them."""

    def __init__(self, target, rewrite_reply=None):
        self.target = target
        # rewrite_reply(command name, reply document) -> the document the client gets
        # (OP_MSG replies only; None: every reply as the server sent it).
        self.rewrite_reply = rewrite_reply
        self.sent = []
        self.connections = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = self.listener.getsockname()
        self.threads = []
        self.stopping = False

    def __enter__(self):
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        self.threads.append(thread)
        return self

    def __exit__(self, *exc):
        self.stopping = True
        self.listener.close()
        for thread in self.threads:
            thread.join(5)

    def names(self):
        return [name for _, name, _ in self.sent]

    def _accept(self):
        while not self.stopping:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.connections += 1
            server = socket.create_connection(self.target, timeout=10)
            asked = {}  # this connection's request ids -> their command names
            for source, sink, record in ((client, server, True), (server, client, False)):
                thread = threading.Thread(target=self._pump,
                                          args=(source, sink, record, asked), daemon=True)
                thread.start()
                self.threads.append(thread)

    def _pump(self, source, sink, record, asked):
        try:
            while True:
                header = self._read(source, HEADER.size)
                length, request_id, response_to, op_code = HEADER.unpack(header)
                body = self._read(source, length - HEADER.size)
                if record:
                    command = _command(op_code, body)
                    self.sent.append((op_code, *command))
                    asked[request_id] = command[0]
                elif self.rewrite_reply is not None and op_code == OP_MSG and \
                        response_to in asked and _one_document(body):
                    flags = body[:4]
                    reply = self.rewrite_reply(asked.pop(response_to), bson.decode(body[5:]))
                    body = flags + b"\0" + bson.encode(reply)
                    header = HEADER.pack(HEADER.size + len(body), request_id, response_to,
                                         op_code)
                sink.sendall(header + body)
        except (OSError, EOFError):
            for sock in (source, sink):
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                sock.close()

    @staticmethod
    def _read(sock, n):
        chunks = []
        while n:
            chunk = sock.recv(n)
            if not chunk:
                raise EOFError
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)
