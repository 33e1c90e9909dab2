"""One socket to one server (opened by ``dial``): send a command, read exactly one reply.

Every network or protocol failure closes the connection and raises AutoReconnect (what PyMongo
raises for a network error), NetworkTimeout or ProtocolError naming the server; a reply is
never read without bound.
"""
import _thread
import itertools
import os
import socket
from typing import Any

from singlemongo.engine import moved_names
from singlemongo.wire import messages as wire
from singlemongo.clock import DEFAULT_CLOCK, Deadline
from singlemongo.errors import (AutoReconnect, InvalidOperation, NetworkTimeout,
                      ProtocolError)
from singlemongo.options.uri import SecretBytes
from singlemongo.sdam.address import format_address

_connection_ids = itertools.count(1)


class _RequestIds:
    def __init__(self):
        self.last = 0

    def next(self):
        self.last = (self.last + 1) & 0x7FFFFFFF
        return self.last


_request_ids = _RequestIds()


def next_request_id():
    return _request_ids.next()


# Asynchronous signals held while a reply is decoded (``signals_held``): ``pthread_sigmask``
# in this thread, and with other threads running the main thread's Python handlers deferred
# (``signal_deferral``). The connection holds them around the
# reply's decoding: the codec itself is pure.
_ASYNC_SIGNALS: Any = False  # not looked up yet


def _signals_held():
    """The asynchronous signals (all but those a fault raises), for ``pthread_sigmask``; None
    where signals cannot be held (no ``pthread_sigmask``: Windows)."""
    global _ASYNC_SIGNALS
    if _ASYNC_SIGNALS is False:
        _signal = __import__("_signal")  # the C one: `signal` builds enums, a one-off's cost
        faults = {getattr(_signal, name, None) for name in (
            "SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGTRAP", "SIGSYS", "SIGABRT")}
        _ASYNC_SIGNALS = (_signal, set(_signal.valid_signals()) - faults) \
            if hasattr(_signal, "pthread_sigmask") else None
    return _ASYNC_SIGNALS


def signals_held(fn, *args):
    """``fn(*args)`` with asynchronous signals held. bson runs Python code while it decodes
    (Timestamp, ObjectId) and turns whatever is raised there into InvalidBSON: a signal
    handler's exception (a CGI's SIGALRM) would lose its type and read as malformed bytes.
    A held signal's handler runs as soon as ``fn`` is done, here, and what it raises
    propagates as raised."""
    held = _signals_held()
    if held is None:
        return fn(*args)
    sig, signals = held
    if _thread._count():  # other threads run: held here is not enough (signal_deferral.py)
        from singlemongo.engine.signal_deferral import call_in_main_thread
        done, result = call_in_main_thread(sig, signals, fn, args)
        if done:
            return result
    previous = sig.pthread_sigmask(sig.SIG_BLOCK, signals)
    try:
        return fn(*args)
    finally:
        sig.pthread_sigmask(sig.SIG_SETMASK, previous)


# (maxBsonObjectSize, maxMessageSizeBytes, maxWriteBatchSize) until a handshake says.
_DEFAULT_LIMITS = (wire.DEFAULT_MAX_BSON_SIZE, wire.DEFAULT_MAX_MESSAGE_SIZE,
                   wire.DEFAULT_MAX_WRITE_BATCH)


def _positive_int(hello, name, default):
    value = hello.get(name)
    return value if (type(value) is int or isinstance(value, int) and not isinstance(
        value, bool)) and value > 0 else default


class Connection:
    """A connected socket, its handshake reply, generation and last-used time.

    Every read and write has a deadline for the whole of it (a ``Deadline``, or seconds from
    now): a server that drips a byte at a time cannot stretch it. Any exception that escapes
    a send or receive, a signal handler's or KeyboardInterrupt included, closes the socket:
    a half-read connection is never used again.
    """

    def __init__(self, address, sock, generation, now, clock=DEFAULT_CLOCK):
        self.address = address
        self.sock = sock
        self.generation = generation
        self.clock = clock
        self.id = next(_connection_ids)
        self.hello = None
        self.last_used = now
        self.closed = False
        self.pid = os.getpid()
        self.max_message_size = self.max_reply_size = wire.DEFAULT_MAX_MESSAGE_SIZE
        self.write_limits = _DEFAULT_LIMITS  # until the handshake says (_limits)
        self.authenticated = False
        self.conversation = None  # a SCRAM conversation started speculatively in the handshake
        self.compressor = None
        self.zlib_level = -1
        # Exhaust: the server streams replies (moreToCome) until this is False again; only
        # receive_more() may read them, and no command may be sent meanwhile.
        self.more_to_come = False
        self.received_bytes = 0  # what replies brought (a drain of a stream is bounded by it)
        self.last_reply_id = 0
        self.stream_owner = None  # a weak reference to what drains the stream (its cursor)
        # Pool events (engine/cmap_events.py): called once when closed, after the pool took it.
        self.on_close = None
        self.close_reason = "error"  # CMAP's ConnectionClosedReason, unless a closer says
        self.close_error = None  # the failure that closed it, for the connection log

    def __repr__(self):
        return f"<Connection {self.id} to {format_address(self.address)}>"

    def _limits(self, hello):
        """The sizes the handshake announced, read once (every operation reads them)."""
        get = hello.get
        if self.write_limits is _DEFAULT_LIMITS and _DEFAULT_LIMITS == (
                get("maxBsonObjectSize"), get("maxMessageSizeBytes"), get("maxWriteBatchSize")):
            return  # what every MongoDB server announces: __init__'s defaults stand
        self.max_message_size = _positive_int(hello, "maxMessageSizeBytes",
                                              wire.DEFAULT_MAX_MESSAGE_SIZE)
        # What a reply may be, read or inflated: the announced maxMessageSizeBytes, but
        # never more than a real server announces (48,000,000 since MongoDB 2.6), so a server
        # saying 2**31-1 cannot make a small compressed reply inflate into gigabytes.
        self.max_reply_size = min(self.max_message_size, wire.DEFAULT_MAX_MESSAGE_SIZE)
        # (maxBsonObjectSize, maxMessageSizeBytes, maxWriteBatchSize)
        self.write_limits = (
            _positive_int(hello, "maxBsonObjectSize", wire.DEFAULT_MAX_BSON_SIZE),
            self.max_message_size,
            _positive_int(hello, "maxWriteBatchSize", wire.DEFAULT_MAX_WRITE_BATCH))

    def set_hello(self, hello, compressors=()):
        self.hello = hello
        self._limits(hello)
        if not compressors:  # the usual client: nothing to negotiate (a scan makes n of these)
            self.compressor = None
            return
        offered = hello.get("compression")
        offered = offered if isinstance(offered, list) else ()
        # Compression spec, "Compression negotiation": the client's first that the server
        # offered (the client's list holds only those whose package is installed).
        self.compressor = next((c for c in compressors if c in offered), None)

    @property
    def hello_ok(self):
        return bool(self.hello and self.hello.get("helloOk") is True)

    @property
    def service_id(self):
        return self.hello.get("serviceId") if self.hello else None

    def close(self):
        if not self.closed:
            self.closed = True
            try:
                self.sock.close()
            except OSError:
                pass
            if self.on_close is not None:
                self.on_close(self)

    def detach(self):
        """Close this process's file descriptor without shutting the connection down: in a
        forked child the parent still uses the same TCP connection."""
        self.closed = True
        try:
            os.close(self.sock.detach())
        except OSError:
            pass

    def _fail(self, exc_type, message):
        if not self.closed:
            self.close_error = message
        self.close()
        return exc_type(f"{message} ({format_address(self.address)})", self.address)

    def deadline(self, timeout):
        """A Deadline from a Deadline, seconds, or None (no timeout)."""
        if isinstance(timeout, Deadline):
            return timeout
        return Deadline(self.clock, timeout, f"{timeout * 1000:.0f} ms" if timeout else "none")

    def _wait_for(self, deadline, doing):
        """The socket's timeout becomes what is left of ``deadline`` (NetworkTimeout if none)."""
        remaining = deadline.remaining()
        if remaining is not None and remaining <= 0:
            raise self._fail(NetworkTimeout, f"timed out {doing} after {deadline.what}")
        self.sock.settimeout(remaining)

    def _send(self, message, deadline):
        self._wait_for(deadline, "sending a command")
        try:
            self.sock.sendall(message)  # the timeout bounds the whole sendall (Python 3.5+)
        except socket.timeout:
            raise self._fail(NetworkTimeout, f"timed out sending a command after "
                                             f"{deadline.what}") from None
        except OSError as exc:
            raise self._fail(AutoReconnect, f"connection lost sending a command: {exc}") from None

    def _recv_exactly(self, n, deadline):
        chunks, remaining = [], n
        while remaining:  # bounded: each pass reads at least a byte, or raises
            self._wait_for(deadline, "reading a reply")
            try:
                chunk = self.sock.recv(min(remaining, 1 << 20))
            except socket.timeout:
                raise self._fail(NetworkTimeout, f"timed out reading a reply after "
                                                 f"{deadline.what}") from None
            except OSError as exc:
                raise self._fail(AutoReconnect, f"connection lost reading a reply: {exc}") from None
            if not chunk:
                raise self._fail(AutoReconnect, "connection closed by the server")
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)

    def _usable(self):
        if self.pid != os.getpid():  # the last line of defence: the engine checks first
            raise InvalidOperation(f"connection to {format_address(self.address)} belongs to "
                                   f"process {self.pid}; a forked process never uses it")
        if self.closed:
            raise AutoReconnect(f"connection to {format_address(self.address)} is closed",
                                self.address)
        if self.more_to_come and not self.settle_stream():
            raise AutoReconnect(f"connection to {format_address(self.address)} was closed: an "
                                f"exhaust cursor left it mid-stream", self.address)

    def settle_stream(self):
        """An exhaust stream that has not ended when the connection is wanted for something
        else: its cursor gives it up (the connection is closed, nothing more is read), or,
        with the cursor gone, the connection is closed. False: the connection cannot be used."""
        abandon = self.stream_owner() if self.stream_owner is not None else None
        if abandon is not None:
            abandon()
        if not self.closed:
            self.close_reason = "error"
            self.close()
        return False

    def round_trip(self, request_id, message, timeout, codec=None, user_fields=None):
        """Send one message and read its reply document, all within ``timeout``; ``codec``
        (the user's CodecOptions) decodes it, else the driver's own."""
        self._usable()
        deadline = self.deadline(timeout)
        try:
            self._send(message, deadline)
        except BaseException:  # a signal, KeyboardInterrupt, a bug: never reuse this socket
            self.close()
            raise
        return self._receive(request_id, deadline, codec, user_fields)

    def receive_more(self, timeout, codec=None, user_fields=None):
        """The next reply of an exhaust stream (the server sends it unasked)."""
        if not self.more_to_come:
            raise ProtocolError(f"no reply is streaming on {self!r}")
        if self.closed:
            raise AutoReconnect(f"connection to {format_address(self.address)} is closed",
                                self.address)
        # Not checked against responseTo: servers answer the previous reply or the getMore
        # (PyMongo checks neither).
        return self._receive(None, self.deadline(timeout), codec, user_fields)

    def _receive(self, response_to, deadline, codec, user_fields):
        try:
            header = wire.check_header(self._recv_exactly(wire.HEADER.size, deadline),
                                       self.max_reply_size, response_to)
            body = self._recv_exactly(header.length - wire.HEADER.size, deadline)
            self.received_bytes += header.length
            # Signals held around the decoding, once for the whole reply (signals_held).
            flags, reply = signals_held(wire.decode_reply_flags, header, body,
                                        self.max_reply_size, self.compressor is not None,
                                        codec or wire.CODEC, user_fields)
        except ProtocolError as exc:
            raise self._fail(ProtocolError, str(exc)) from None
        except wire.UndecodableDocument as exc:
            # Read whole, so the socket is in step: the codec's error is the user's, as in
            # PyMongo (bson's InvalidBSON for a date out of range), and the server is fine.
            # A stream it interrupts cannot go on.
            self.more_to_come = False
            if exc.flags & wire.MORE_TO_COME:
                self.close()
            raise exc.error from None
        except BaseException:  # a signal, KeyboardInterrupt, a bug: never reuse this socket
            self.close()
            raise
        self.more_to_come = bool(flags & wire.MORE_TO_COME)
        self.last_reply_id = header.request_id
        return reply

    @staticmethod
    def peek_request_id():
        """The request id the next command will use (for command monitoring)."""
        return (_request_ids.last + 1) & 0x7FFFFFFF

    def command(self, db, cmd, timeout=None, sequences=(), codec=None, user_fields=None,
                exhaust_allowed=False):
        """Run ``cmd`` (OP_MSG); ``timeout`` is a Deadline or seconds for the whole round trip.
        ``codec`` (the user's CodecOptions) encodes the command and decodes the reply.
        ``exhaust_allowed``: the server may stream further replies (``receive_more``)."""
        request_id = next_request_id()
        body = dict(cmd)
        body["$db"] = db
        message = wire.encode_op_msg(request_id, body, sequences, codec=codec or wire.CODEC,
                                     flags=wire.EXHAUST_ALLOWED if exhaust_allowed else 0)
        if SecretBytes in map(type, body.values()):  # (it has no subclass)
            message = SecretBytes(message)  # a SCRAM proof: the frames below can raise
        if self.compressor:
            from singlemongo.wire import compression
            if next(iter(cmd), "").lower() not in compression.UNCOMPRESSIBLE:
                message = compression.compress_message(message, self.compressor,
                                                       self.zlib_level)
        return self.round_trip(request_id, message, timeout, codec, user_fields)

    def dispatch(self, db, cmd, timeout=None, sequences=(), codec=None, user_fields=None,
                 unacknowledged=False, exhaust=None):
        """An application command as its mode says. ``unacknowledged`` (w: 0): sent with
        moreToCome, nothing comes back, and the answer is ``{"ok": 1}``. ``exhaust``:
        "allow" lets the server stream further replies; "receive" reads the stream's next
        reply without sending anything."""
        if unacknowledged:
            self.send_only(db, cmd, sequences, timeout, codec)
            return {"ok": 1}
        if exhaust == "receive":
            return self.receive_more(timeout, codec, user_fields)
        return self.command(db, cmd, timeout, sequences, codec, user_fields,
                            exhaust_allowed=exhaust == "allow")

    def send_only(self, db, cmd, sequences=(), timeout=None, codec=None):
        """Send with moreToCome: the server does not answer, so nothing is waited for."""
        self._usable()
        body = dict(cmd)
        body["$db"] = db
        message = wire.encode_op_msg(next_request_id(), body, sequences, flags=wire.MORE_TO_COME,
                                     codec=codec or wire.CODEC)
        try:
            self._send(message, self.deadline(timeout))
        except BaseException:
            self.close()
            raise


__getattr__ = moved_names(__name__, {"open_socket": "dial", "addresses_of": "dial",
                                     "PROXY_PORT": "dial"})
