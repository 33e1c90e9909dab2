"""Opening a socket to a server: every address of its name over TCP, or a UNIX socket, or a
SOCKS5 proxy (``proxyHost``); then TLS if configured. One deadline (connectTimeoutMS) for all
of it; whatever interrupts it closes the socket it opened, and every failure is AutoReconnect
or NetworkTimeout naming the server (and the proxy)."""
import socket

from singlemongo.clock import DEFAULT_CLOCK, Deadline
from singlemongo.errors import AutoReconnect, NetworkTimeout
from singlemongo.sdam.address import format_address

PROXY_PORT = 1080  # proxyPort's default (SOCKS5 support spec)


def _seconds(ms):
    return ms / 1000.0 if ms else None


def _connect(family, kind, proto, sockaddr, timeout):
    """One socket to one address, closed again if anything at all interrupts the connect."""
    sock = socket.socket(family, kind, proto)
    try:
        sock.settimeout(timeout)
        if family != socket.AF_UNIX:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.connect(sockaddr)
        return sock
    except BaseException:
        sock.close()
        raise


def addresses_of(host, port):
    """``socket.getaddrinfo``'s answers for a stream socket to ``host``. An IP literal is its
    own answer: no resolver call (whose IDNA encoding of the name loads three modules)."""
    for family, sockaddr in ((socket.AF_INET, (host, port)),
                             (socket.AF_INET6, (host, port, 0, 0))):
        try:
            socket.inet_pton(family, host)
        except (OSError, TypeError, ValueError):
            continue
        return [(family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", sockaddr)]
    return socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)


def connect_tcp(host, port, deadline):
    """Every address of the name in turn (as socket.create_connection), within one deadline."""
    error = None
    for family, kind, proto, _, sockaddr in addresses_of(host, port):
        remaining = deadline.remaining()
        if remaining is not None and remaining <= 0:
            raise socket.timeout("timed out")
        try:
            return _connect(family, kind, proto, sockaddr, remaining)
        except OSError as exc:
            error = exc
    raise error or OSError(f"getaddrinfo returned no address for {host}")


def open_socket(address, options, timeout=None, context=None, clock=DEFAULT_CLOCK):
    """TCP (every address of the name is tried; through the SOCKS5 proxy of ``proxyHost``, if
    given) or a UNIX socket, then TLS if configured (with ``context``, else one made for
    ``options``); ``timeout`` (seconds) replaces connectTimeoutMS. Whatever interrupts it (a
    signal, KeyboardInterrupt) closes the socket it opened."""
    host, port = address
    timeout = timeout if timeout is not None else _seconds(options.connect_timeout_ms)
    where = format_address(address)
    proxy = getattr(options, "proxy_host", None)
    if port is not None and not 0 <= port <= 65535:  # MongoClient(port=...) takes any int
        raise AutoReconnect(f"could not connect to {where}: a port is from 0 to 65535", address)
    try:
        if port is None:
            sock = _connect(socket.AF_UNIX, socket.SOCK_STREAM, 0, host, timeout)
        elif proxy:
            sock = through_proxy(host, port, options, Deadline(clock, timeout,
                                                               "connectTimeoutMS"))
        else:
            sock = connect_tcp(host, port, Deadline(clock, timeout, "connectTimeoutMS"))
    except socket.timeout:
        raise NetworkTimeout(f"connecting to {where}{_via(proxy, options)} timed out after "
                             f"{(timeout or 0) * 1000:.0f} ms (connectTimeoutMS)", address) from None
    except (OSError, EOFError) as exc:  # the spec: a proxy's refusal is a network error too
        raise AutoReconnect(f"could not connect to {where}{_via(proxy, options)}: "
                            f"{getattr(exc, 'strerror', None) or exc}", address) from None
    if options.tls:
        if context is None:
            from singlemongo.engine.tls import tls_context
            context = tls_context(options)
        try:
            sock = context.wrap_socket(sock, server_hostname=host)
        except BaseException as exc:
            sock.close()
            if not isinstance(exc, OSError):
                raise
            raise AutoReconnect(f"TLS handshake with {where} failed: {exc}", address) from None
    return sock


def _via(proxy, options):
    if not proxy:
        return ""
    return f" through the SOCKS5 proxy {format_address((proxy, options.proxy_port or PROXY_PORT))}"


def _exchange(sock, message, answer_length, deadline):
    """Send ``message`` and read exactly ``answer_length`` bytes, within ``deadline``."""
    if message:
        sock.settimeout(_remaining(deadline))
        sock.sendall(message)
    data = b""
    while len(data) < answer_length:
        sock.settimeout(_remaining(deadline))
        chunk = sock.recv(answer_length - len(data))
        if not chunk:
            raise EOFError("the proxy closed the connection")
        data += chunk
    return data


def _remaining(deadline):
    remaining = deadline.remaining()
    if remaining is not None and remaining <= 0:
        raise socket.timeout("timed out")
    return remaining


def through_proxy(host, port, options, deadline):
    """A socket to ``host``:``port`` through the SOCKS5 proxy of ``proxyHost`` (SOCKS5 support
    spec, "Connection Establishment"): the proxy connected to, the handshake done, the
    destination's name passed as it is. One deadline for all of it. The handshake's
    messages load with the first proxy: a one-off without one never imports them."""
    from singlemongo.engine import socks5
    sock = connect_tcp(options.proxy_host, options.proxy_port or PROXY_PORT, deadline)
    try:
        with_credentials = bool(options.proxy_username)
        method = socks5.chosen_method(_exchange(sock, socks5.greeting(with_credentials), 2,
                                                deadline), with_credentials)
        if method == socks5.USERNAME_PASSWORD:
            socks5.authenticated(_exchange(sock, socks5.credentials(
                options.proxy_username, options.proxy_password), 2, deadline))
        head = _exchange(sock, socks5.connect_request(host, port), 5, deadline)
        _exchange(sock, b"", socks5.reply_length(head) - 5, deadline)
    except BaseException:
        sock.close()
        raise
    return sock
