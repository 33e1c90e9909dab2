"""Concurrent checks in one thread: a wave of hellos on non-blocking sockets.

The scanner asks for a wave when the planner's next server has not been checked yet: every
server the planner would check next is checked at once (new connections connect and
handshake concurrently; open ones get their hello concurrently), and the scanner then
applies the outcomes one by one in the planner's order, exactly as a sequential scan would.
A cold scan of a replica set thus costs about one round of connect + hello, not three.
TLS and UNIX-socket servers are checked sequentially.
"""
import errno
import selectors
import socket

from ..wire import messages as wire
from ..wire.connection import next_request_id
from ..errors import ConnectionFailure, NetworkTimeout, ProtocolError
from .handshake import handshake_command
from ..sdam.server_description import format_address

_IN_PROGRESS = (0, errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EALREADY)


class _Check:
    def __init__(self, address, sock, conn, message, request_id, conversation=None):
        self.address, self.sock, self.conn = address, sock, conn
        self.out = message
        self.request_id = request_id
        self.conversation = conversation
        self.inbox = bytearray()
        self.sent_at = None
        self.connecting = conn is None
        self.other_addresses = False  # the name has more addresses than the one tried


def waveable(topology, address):
    options = topology.options
    return address[1] is not None and not options.tls and not options.load_balanced


def _start(topology, address):
    conn = topology.connections.get(address)
    request_id = next_request_id()
    if conn is not None and not conn.closed:
        cmd = dict(handshake_command(topology.options, initial=False, hello_ok=conn.hello_ok),
                   **{"$db": "admin"})
        conn.sock.setblocking(False)
        return _Check(address, conn.sock, conn, wire.encode_op_msg(request_id, cmd), request_id)
    cmd, conversation = topology.handshake_document()
    host, port = address
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    family, kind, proto, _, sockaddr = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setblocking(False)
    error = sock.connect_ex(sockaddr)
    if error not in _IN_PROGRESS:
        sock.close()
        raise ConnectionFailure(f"could not connect to {format_address(address)}: "
                                f"{errno.errorcode.get(error, error)}", address)
    message = wire.encode_op_query(request_id, "admin.$cmd", cmd)
    check = _Check(address, sock, None, message, request_id, conversation)
    check.other_addresses = len(infos) > 1
    return check


def _on_event(check, mask, clock):
    """Advance one check; returns the reply when it is complete."""
    sock = check.sock
    if check.connecting and mask & selectors.EVENT_WRITE:
        error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if error:
            raise ConnectionFailure(f"could not connect to {format_address(check.address)}: "
                                    f"{errno.errorcode.get(error, error)}", check.address)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        check.connecting = False
    if check.out and mask & selectors.EVENT_WRITE:
        if check.sent_at is None:
            check.sent_at = clock.monotonic()
        check.out = check.out[sock.send(check.out):]
        return None
    if mask & selectors.EVENT_READ:
        data = sock.recv(1 << 16)
        if not data:
            raise ConnectionFailure(f"connection closed by the server "
                                    f"({format_address(check.address)})", check.address)
        check.inbox.extend(data)
        if len(check.inbox) >= wire.HEADER.size:
            header = wire.check_header(bytes(check.inbox[:wire.HEADER.size]),
                                       expect_response_to=check.request_id)
            if len(check.inbox) >= header.length:
                return wire.decode_reply(header, bytes(check.inbox[wire.HEADER.size:header.length]))
    return None


def _finish(topology, check, reply, rtt):
    sock = check.sock
    sock.setblocking(True)
    conn = check.conn
    if conn is None:
        conn = topology.handshaken(topology.new_connection(check.address, sock,
                                                           check.conversation), reply)
        topology.connections[check.address] = conn
    conn.last_used = topology.clock.monotonic()
    return reply, rtt


def _fail(topology, check, exc):
    if check.conn is not None:
        topology.connections.pop(check.address, None)
        check.conn.close()
    else:
        check.sock.close()
    if isinstance(exc, ConnectionFailure):
        return exc
    return ConnectionFailure(f"check of {format_address(check.address)} failed: {exc}",
                             check.address)


def run_wave(topology, addresses):
    """{address: (reply, rtt) or ConnectionFailure} for the addresses checked concurrently. A
    name whose first address failed to connect is left out: the sequential check then tries
    every address of the name, as a connection always does."""
    results, pending = {}, {}
    sel = selectors.DefaultSelector()
    for address in addresses:
        try:
            check = _start(topology, address)
        except (OSError, ConnectionFailure) as exc:
            results[address] = exc if isinstance(exc, ConnectionFailure) else ConnectionFailure(
                f"could not connect to {format_address(address)}: {exc}", address)
            continue
        pending[check.sock] = check
        sel.register(check.sock, selectors.EVENT_WRITE, check)
    timeout = topology.options.connect_timeout_ms / 1000.0 or None
    clock = topology.clock
    for _ in range(64 * max(1, len(pending))):  # bounded: a few events per check
        if not pending:
            break
        ready = sel.select(timeout)
        if not ready:
            for check in pending.values():
                results[check.address] = _fail(topology, check, NetworkTimeout(
                    f"check of {format_address(check.address)} timed out after "
                    f"{topology.options.connect_timeout_ms} ms (connectTimeoutMS)", check.address))
            break
        for key, mask in ready:
            check = key.data
            try:
                reply = _on_event(check, mask, clock)
            except (OSError, ConnectionFailure, ProtocolError) as exc:
                sel.unregister(check.sock)
                del pending[check.sock]
                failure = _fail(topology, check, exc)
                if not (check.connecting and check.other_addresses):
                    results[check.address] = failure
                continue
            if not check.out and not check.connecting:
                sel.modify(check.sock, selectors.EVENT_READ, check)
            if reply is not None:
                sel.unregister(check.sock)
                del pending[check.sock]
                results[check.address] = _finish(topology, check, reply,
                                                 clock.monotonic() - check.sent_at)
    for check in pending.values():
        results[check.address] = _fail(topology, check, NetworkTimeout(
            f"check of {format_address(check.address)} did not complete", check.address))
    sel.close()
    return results
