"""GSSAPI (Kerberos, RFC 4752; auth spec, "GSSAPI") through the module PyMongo uses:
``pykerberos`` (``kerberos``, extra ``gssapi``) or ``winkerberos`` on Windows, imported only
when the mechanism is used. The service principal is ``SERVICE_NAME@host`` (``mongodb`` by
default; the host canonicalized as ``CANONICALIZE_HOST_NAME`` says, or ``SERVICE_HOST``),
with ``@SERVICE_REALM`` for cross-realm authentication.

The conversation: the context's first token in saslStart, tokens back and forth until the
context is complete (a bounded number of steps), then the server's wrapped message
unwrapped and the username wrapped back.
"""
import socket

from singlemongo.errors import ConfigurationError

MECHANISM = "GSSAPI"
MAX_STEPS = 10  # a Kerberos exchange completes in one or two; a server that goes on is refused


def _kerberos():
    try:
        import kerberos  # type: ignore[import-not-found]  # pykerberos, extra "gssapi"
        return kerberos
    except ImportError:
        pass
    try:
        import winkerberos  # type: ignore[import-not-found]  # Windows
        return winkerberos
    except ImportError:
        raise ConfigurationError("authMechanism GSSAPI needs the pykerberos package "
                                 "(pip install 'singlemongo[gssapi]'), or winkerberos on "
                                 "Windows") from None


def canonicalize(host, mode):
    """Auth spec, "Hostname Canonicalization": none/False keeps ``host``; forward takes
    the canonical name getaddrinfo gives; forwardAndReverse/True the reverse lookup of the
    first address. Any lookup error falls back to ``host``."""
    if mode in (None, False, "none"):
        return host
    try:
        _, _, _, canonname, sockaddr = socket.getaddrinfo(
            host, None, 0, 0, socket.IPPROTO_TCP, socket.AI_CANONNAME)[0]
    except OSError:
        return host
    if mode in (True, "forwardAndReverse"):
        try:
            return socket.getnameinfo(sockaddr, socket.NI_NAMEREQD)[0].lower()
        except OSError:
            return (canonname or host).lower()
    return (canonname or host).lower()


def service_principal(credentials, host):
    """The service principal name to ask a ticket for."""
    props = credentials.mechanism_properties
    host = props.get("SERVICE_HOST") or canonicalize(host, props.get("CANONICALIZE_HOST_NAME"))
    name = f"{props.get('SERVICE_NAME', 'mongodb')}@{host}"
    realm = props.get("SERVICE_REALM")
    return f"{name}@{realm}" if realm else name


def _continue(conn, credentials, reply, payload, timeout_s, check):
    return check(conn.command(credentials.source, {
        "saslContinue": 1, "conversationId": reply.get("conversationId", 1),
        "payload": payload}, timeout_s), credentials, MECHANISM)


def authenticate(conn, credentials, clock, timeout_s, check, cache=None):
    """The Kerberos exchange over saslStart/saslContinue."""
    kerberos = _kerberos()
    spn = service_principal(credentials, conn.address[0])
    options = {"gssflags": kerberos.GSS_C_MUTUAL_FLAG}
    if credentials.password is not None:  # else the ticket cache's default credentials
        options.update(principal=credentials.username, password=credentials.password)
    _, context = kerberos.authGSSClientInit(spn, **options)
    try:
        kerberos.authGSSClientStep(context, "")
        reply = check(conn.command(credentials.source, {
            "saslStart": 1, "mechanism": MECHANISM, "autoAuthorize": 1,
            "payload": kerberos.authGSSClientResponse(context) or ""}, timeout_s),
            credentials, MECHANISM)
        for _ in range(MAX_STEPS):
            result = kerberos.authGSSClientStep(context, str(reply.get("payload", "")))
            reply = _continue(conn, credentials, reply,
                              kerberos.authGSSClientResponse(context) or "", timeout_s, check)
            if result == kerberos.AUTH_GSS_COMPLETE:
                break
        else:
            raise ConfigurationError(f"GSSAPI: the security context was not complete after "
                                     f"{MAX_STEPS} steps (server {conn.address[0]})")
        kerberos.authGSSClientUnwrap(context, str(reply.get("payload", "")))
        kerberos.authGSSClientWrap(context, kerberos.authGSSClientResponse(context),
                                   credentials.username)
        _continue(conn, credentials, reply, kerberos.authGSSClientResponse(context),
                  timeout_s, check)
    finally:
        kerberos.authGSSClientClean(context)
