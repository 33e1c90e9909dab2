"""Concurrent checks in one thread: a wave of hellos on non-blocking sockets.

The scanner asks for a wave when the planner's next server has not been checked yet: every
server the planner would check next is checked at once (new connections connect, do their TLS
handshake and send their hello concurrently; open ones get their hello concurrently), and the
scanner then applies the outcomes one by one in the planner's order, exactly as a sequential
scan would. A cold scan of a replica set thus costs about one round of connect (+ TLS) + hello,
not three. UNIX-socket servers and names with several addresses are checked sequentially.
"""
import errno
import math
import socket

from singlemongo.errors import AutoReconnect, ConnectionFailure, NetworkTimeout, ProtocolError
from singlemongo.sdam.address import format_address
from singlemongo.wire import messages as wire
from singlemongo.engine.connection import next_request_id, signals_held
from singlemongo.engine.dial import addresses_of
from singlemongo.engine.scanner import Outcome
from singlemongo.engine.handshake import handshake_command

# A wave watches its sockets with select.poll itself: selectors' bookkeeping is Python (a key
# record per register, a copy per modify), a quarter of the wave's cost a server. Where poll
# is missing (Windows), a stand-in made on selectors answers as poll does.
try:
    from select import poll as _POLL, POLLIN as READ, POLLOUT as WRITE
except ImportError:
    from singlemongo.engine.poll_fallback import (  # type: ignore[assignment]
        Poll as _POLL, READ, WRITE)

_IN_PROGRESS = (0, errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EALREADY)


class _Check:
    """One server's check: connect -> (TLS) -> send -> receive."""

    def __init__(self, address, sock, conn, message, request_id, conversation=None):
        self.address, self.sock, self.conn = address, sock, conn
        self.fd = sock.fileno()  # kept: TLS wraps the socket, on the same descriptor
        self.out = message
        self.request_id = request_id
        self.conversation = conversation
        self.inbox = bytearray()
        self.sent_at = None
        self.phase = "connect" if conn is None else "send"
        self.other_addresses = False  # the name has more addresses than the one tried
        self.pending = None  # a TLS socket's pending(): what it holds decrypted, unread


def waveable(topology, address):
    """Checked in a wave: a TCP server, not behind a load balancer or a SOCKS5 proxy (a
    proxied connection is opened in turn, with its handshake, by the sequential check)."""
    return address[1] is not None and not topology.options.load_balanced and \
        not topology.options.proxy_host


def _start(topology, address, encoded):
    """A check's socket and first message. ``encoded`` keeps the wave's hello messages by
    kind, encoded once: only the request id differs from one server to the next (a
    speculative authentication's conversation is each connection's own, never kept)."""
    conn = topology._connections.get(address)
    request_id = next_request_id()
    if conn is not None and not conn.closed:
        key = ("check", conn.hello_ok)
        if key not in encoded:
            cmd = handshake_command(topology.options, initial=False, hello_ok=conn.hello_ok)
            encoded[key] = wire.encode_op_msg(request_id, dict(cmd, **{"$db": "admin"}))
        conn.sock.setblocking(False)
        return _Check(address, conn.sock, conn, wire.with_request_id(encoded[key], request_id),
                      request_id)
    message, conversation = encoded.get("new"), None
    if message is None:
        cmd, conversation = topology.handshake_document()
        # Handshake spec (2026-06): OP_MSG for all handshakes, legacy hello included.
        message = wire.encode_op_msg(request_id, dict(cmd, **{"$db": "admin"}))
        if conversation is None and topology.options.credentials is None:
            encoded["new"] = message
    host, port = address
    infos = addresses_of(host, port)
    family, kind, proto, _, sockaddr = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setblocking(False)
        error = sock.connect_ex(sockaddr)
        if error not in _IN_PROGRESS:
            raise AutoReconnect(f"could not connect to {format_address(address)}: "
                                    f"{errno.errorcode.get(error, error)}", address)
    except BaseException:
        sock.close()
        raise
    check = _Check(address, sock, None, wire.with_request_id(message, request_id), request_id,
                   conversation)
    check.other_addresses = len(infos) > 1
    return check


def _connected(topology, check, poller):
    """TCP is up: start TLS if configured, else send."""
    sock = check.sock
    error = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
    if error:
        raise AutoReconnect(f"could not connect to {format_address(check.address)}: "
                                f"{errno.errorcode.get(error, error)}", check.address)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if not topology.options.tls:
        check.phase = "send"
        return
    check.sock = topology.tls_context().wrap_socket(
        sock, server_hostname=check.address[0], do_handshake_on_connect=False)
    check.pending = check.sock.pending
    poller.modify(check.fd, WRITE)
    check.phase = "tls"


def _tls_step(check, poller):
    import ssl
    try:
        check.sock.do_handshake()
    except ssl.SSLWantReadError:
        poller.modify(check.fd, READ)
        return
    except ssl.SSLWantWriteError:
        poller.modify(check.fd, WRITE)
        return
    except (ssl.SSLError, OSError) as exc:
        raise AutoReconnect(f"TLS handshake with {format_address(check.address)} failed: "
                                f"{exc}", check.address) from None
    check.phase = "send"
    poller.modify(check.fd, WRITE)


def _io(check, clock):
    """Send what is left, or read what came; the reply's (header, body) once complete."""
    sock = check.sock
    if check.phase == "send":
        if check.sent_at is None:
            check.sent_at = clock.monotonic()
        check.out = check.out[sock.send(check.out):]
        if not check.out:
            check.phase = "receive"
        return None
    data = sock.recv(1 << 16)
    if not data:
        raise AutoReconnect(f"connection closed by the server "
                                f"({format_address(check.address)})", check.address)
    check.inbox.extend(data)
    pending = check.pending
    while pending is not None and pending():
        check.inbox.extend(sock.recv(pending()))
    if len(check.inbox) >= wire.HEADER.size:
        header = wire.check_header(bytes(check.inbox[:wire.HEADER.size]),
                                   expect_response_to=check.request_id)
        if len(check.inbox) >= header.length:
            return header, bytes(check.inbox[wire.HEADER.size:header.length])
    return None


def _decode_all(complete):
    """[(check, reply or ProtocolError)] for the [(check, (header, body))] of one round."""
    decoded = []
    for check, (header, body) in complete:
        try:
            reply = wire.decode_reply(header, body, codec=wire.DEFAULT_CODEC_OPTIONS)
        except ProtocolError as exc:
            reply = exc
        decoded.append((check, reply))
    return decoded


_TLS_WANTS = ("SSLWantReadError", "SSLWantWriteError")  # by name: ssl loads only for TLS


def _advance(topology, check, mask, poller, clock):
    """Move one check on; the reply's (header, body) once complete, else None. While it
    connects, any event but readable (writable, an error, a hang-up) ends the connect: its
    next step meets the socket's error, if any."""
    if check.phase == "connect" and mask & ~READ:
        _connected(topology, check, poller)
        if check.phase == "tls":
            return None
    if check.phase == "tls":
        _tls_step(check, poller)
        return None
    try:
        reply = _io(check, clock)
    except OSError as exc:
        if type(exc).__name__ in _TLS_WANTS:
            return None
        raise
    if reply is None:
        poller.modify(check.fd, WRITE if check.phase == "send" else READ)
    return reply


def _finish(topology, check, reply, now):
    sock = check.sock
    sock.setblocking(True)
    conn = check.conn
    if conn is None:
        conn = topology.handshaken(topology.new_connection(check.address, sock,
                                                           check.conversation), reply,
                                   gossip=False)  # the scanner gossips each outcome's reply
        topology.hold(check.address, conn)
    conn.last_used = now
    return Outcome(reply, duration=now - check.sent_at)


def _fail(topology, check, exc, now):
    _discard(topology, check)
    if not isinstance(exc, ConnectionFailure):
        exc = AutoReconnect(f"check of {format_address(check.address)} failed: {exc}",
                                check.address)
    return Outcome(error=exc, duration=now - (check.sent_at or now))


def run_wave(topology, addresses):
    """{address: Outcome} for the addresses checked concurrently. A name whose first address
    failed to connect is left out: the sequential check then tries every address of the name,
    as a connection always does. Whatever interrupts the wave (a signal, KeyboardInterrupt)
    closes every socket it has open, half-read connections included."""
    results, pending, encoded = {}, {}, {}  # pending: the checks under way, by descriptor
    poller = _POLL()
    try:
        for address in addresses:
            try:
                check = _start(topology, address, encoded)
            except (OSError, ConnectionFailure) as exc:
                results[address] = Outcome(error=exc if isinstance(exc, ConnectionFailure) else
                                           AutoReconnect(f"could not connect to "
                                                             f"{format_address(address)}: {exc}",
                                                             address))
                continue
            pending[check.fd] = check
            poller.register(check.fd, WRITE)
        deadline = topology.handshake_deadline()  # one for the whole wave
        _drive(topology, poller, pending, results, deadline)
        for fd, check in list(pending.items()):
            del pending[fd]
            results[check.address] = _fail(topology, check, NetworkTimeout(
                f"check of {format_address(check.address)} timed out after {deadline.what}",
                check.address), topology.clock.monotonic())
    finally:
        for check in pending.values():  # only when interrupted: nothing half-read survives
            _discard(topology, check)
    return results


def _discard(topology, check):
    if check.conn is not None:
        topology.forget(check.conn)
        check.conn.close()
    else:
        check.sock.close()


def _drive(topology, poller, pending, results, deadline):
    clock = topology.clock
    for _ in range(64 * max(1, len(pending))):  # bounded: a few events per check
        remaining = deadline.remaining()
        if not pending or (remaining is not None and remaining <= 0):
            return
        ready = poller.poll(None if remaining is None else math.ceil(remaining * 1000))
        if not ready:
            return
        complete = []
        for fd, mask in ready:
            check = pending[fd]
            try:
                raw = _advance(topology, check, mask, poller, clock)
            except (OSError, ConnectionFailure, ProtocolError) as exc:
                poller.unregister(fd)
                _failed(topology, check, exc, pending, results)
                continue
            if raw is not None:
                poller.unregister(fd)
                complete.append((check, raw))
        if not complete:
            continue
        # Signals held once for the replies a round completed, as a connection holds them
        # for one (signals_held), and only around the decoding: listeners run after.
        for check, reply in signals_held(_decode_all, complete):
            if isinstance(reply, ProtocolError):
                _failed(topology, check, reply, pending, results)
            else:
                results[check.address] = _finish(topology, check, reply, clock.monotonic())
                del pending[check.fd]


def _failed(topology, check, exc, pending, results):
    """A check that failed (its socket no longer polled): its outcome, unless the name has
    other addresses to try (the sequential check then tries them all)."""
    del pending[check.fd]
    failure = _fail(topology, check, exc, topology.clock.monotonic())
    if not (check.phase == "connect" and check.other_addresses):
        results[check.address] = failure
