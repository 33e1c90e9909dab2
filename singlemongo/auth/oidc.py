"""MONGODB-OIDC (auth spec, "MONGODB-OIDC"): an access token from a callback or a built-in
environment, sent in a one-step conversation (or in the handshake, speculatively, when the
client already holds one); the human flow's two-step conversation (the server names its
identity provider, the human callback gets a token, a refresh token is kept); the client's
token cache; and reauthentication when the server says a token expired (error 391), done
by the engine: one reauthentication and one re-attempt of the operation.

The *Client Cache* lives in the client's authentication cache (``OidcCache``), the
*Connection Cache* on the connection (``oidc_token``). The driver is single-threaded, so
"only one callback at a time" holds without a lock.
"""
from bson import decode, encode

from singlemongo.errors import ConfigurationError
from singlemongo.options.uri import SecretBytes, SecretText
from singlemongo.auth import oidc_environments

MECHANISM = "MONGODB-OIDC"
MACHINE_TIMEOUT_S = 60.0  # "OIDC Callback": without CSOT, one minute
HUMAN_TIMEOUT_S = 300.0  # "OIDC Human Callback": five minutes, not subject to CSOT
BETWEEN_CALLS_S = 0.1  # at least 100 ms between two callback invocations
CALLBACK_VERSION = 1
AUTHENTICATION_FAILED = 18
DEFAULT_ALLOWED_HOSTS = ("*.mongodb.net", "*.mongodb-qa.net", "*.mongodb-dev.net",
                         "*.mongodbgov.net", "localhost", "127.0.0.1", "::1", "*.mongo.com")


class OidcCache:
    """The Client Cache: the latest access token, and for the human flow the IdP
    information and refresh token; when the callback was last called."""

    def __init__(self):
        self.access_token = None
        self.refresh_token = None
        self.idp_info = None
        self.last_call = None

    def invalidate(self, token):
        if token is not None and self.access_token == token:
            self.access_token = None


def cache_of(cache):
    """The client's OidcCache, kept in its authentication cache (a dict)."""
    found = cache.get(MECHANISM)
    if found is None:
        found = cache[MECHANISM] = OidcCache()
    return found


def _payload(document):
    """A SASL payload; SecretBytes, as it may carry a token (frames that can raise hold it)."""
    return SecretBytes(encode(document))


class Speculation:
    """The token a handshake carried speculatively."""
    mechanism = MECHANISM

    def __init__(self, token):
        self.oidc_token = token


def speculative_fields(credentials, cache):
    """The handshake's speculativeAuthenticate with the cached token ("Speculative
    Authentication": none without one), and the Speculation it starts."""
    token = cache_of(cache).access_token
    if token is None:
        return {}, None
    return {"speculativeAuthenticate": {
        "saslStart": 1, "mechanism": MECHANISM, "db": "$external",
        "payload": _payload({"jwt": str.__str__(token)})}}, Speculation(token)


def _one_step(conn, credentials, token, timeout_s, check):
    conn.oidc_token = token
    check(conn.command(credentials.source, {
        "saslStart": 1, "mechanism": MECHANISM, "payload": _payload({"jwt": str.__str__(token)})},
        timeout_s), credentials, MECHANISM)


def _callback_timeout(timeout_s):
    """"OIDC Callback": min(remaining connectTimeoutMS, remaining timeoutMS), else 1 min."""
    remaining = getattr(timeout_s, "remaining", None)
    left = remaining() if remaining is not None else timeout_s
    return max(0.0, left) if left is not None else MACHINE_TIMEOUT_S


def _call(callback, credentials, clock, oidc, timeout, **context):
    """Run a callback (at least 100 ms after the last one) and keep what it returns."""
    from singlemongo.auth_oidc import OIDCCallbackContext
    if oidc.last_call is not None:
        clock.sleep(BETWEEN_CALLS_S - (clock.monotonic() - oidc.last_call))
    oidc.last_call = clock.monotonic()
    result = callback.fetch(OIDCCallbackContext(timeout_seconds=timeout,
                                                username=credentials.username,
                                                version=CALLBACK_VERSION, **context))
    # Kept as SecretText at once: these frames can still raise (an error tracker shows them).
    token, refresh = _secret(result, "access_token"), _secret(result, "refresh_token")
    expires = getattr(result, "expires_in_seconds", None)
    del result
    if token is None:
        raise ConfigurationError("MONGODB-OIDC: the callback returned no access_token")
    if expires is not None and expires < 0:
        raise ConfigurationError("MONGODB-OIDC: the callback returned a negative "
                                 "expires_in_seconds")
    oidc.access_token, oidc.refresh_token = token, refresh
    return oidc.access_token


def _secret(result, name):
    value = getattr(result, name, None)
    return SecretText(value) if isinstance(value, str) and value else None


def _accepted(conn, credentials, token, timeout_s, check, oidc):
    """A one-step conversation with ``token``: True if the server took it; False if it
    refused it (error 18), which invalidates it; any other error is raised."""
    from singlemongo.auth import AuthenticationFailed
    try:
        _one_step(conn, credentials, token, timeout_s, check)
        return True
    except AuthenticationFailed as exc:
        if getattr(exc, "code", None) != AUTHENTICATION_FAILED:
            raise
        oidc.invalidate(token)
        return False


def _machine(conn, credentials, clock, timeout_s, check, oidc):
    """"Authentication": the cached token first (an error 18 invalidates it), then a
    fresh one from the callback or the environment."""
    token = oidc.access_token
    if token is not None and _accepted(conn, credentials, token, timeout_s, check, oidc):
        return
    callback = oidc_environments.machine_callback(credentials)
    token = _call(callback, credentials, clock, oidc, _callback_timeout(timeout_s))
    _one_step(conn, credentials, token, timeout_s, check)


def _human(conn, credentials, clock, timeout_s, check, oidc):
    """The human flow: the cached token, then the refresh token, then a two-step
    conversation (each rejected token invalidated before the next try)."""
    oidc_environments.check_allowed_host(conn.address[0], credentials)
    callback = credentials.mechanism_properties["OIDC_HUMAN_CALLBACK"]
    token = oidc.access_token
    if token is not None and _accepted(conn, credentials, token, timeout_s, check, oidc):
        return
    if oidc.refresh_token is not None and oidc.idp_info is not None:
        token = _call(callback, credentials, clock, oidc, HUMAN_TIMEOUT_S,
                      refresh_token=str.__str__(oidc.refresh_token), idp_info=oidc.idp_info)
        if _accepted(conn, credentials, token, timeout_s, check, oidc):
            return
        oidc.refresh_token = None
    _two_step(conn, credentials, clock, timeout_s, check, oidc, callback)


def _two_step(conn, credentials, clock, timeout_s, check, oidc, callback):
    from singlemongo.auth_oidc import OIDCIdPInfo
    principal = {"n": credentials.username} if credentials.username else {}
    first = check(conn.command(credentials.source, {
        "saslStart": 1, "mechanism": MECHANISM, "payload": _payload(principal)}, timeout_s),
        credentials, MECHANISM)
    payload = first.get("payload", b"")
    if not isinstance(payload, bytes):
        raise TypeError(f"payload is {type(payload).__name__}, not binary")
    info = decode(payload)
    if not isinstance(info.get("issuer"), str):
        from singlemongo.auth import AuthenticationFailed
        raise AuthenticationFailed("MONGODB-OIDC authentication failed: the server named no "
                                   "identity provider (no issuer string in its reply)", None, {})
    oidc.idp_info = OIDCIdPInfo(info["issuer"], info.get("clientId"), info.get("requestScopes"))
    token = _call(callback, credentials, clock, oidc, HUMAN_TIMEOUT_S, idp_info=oidc.idp_info)
    conn.oidc_token = token
    check(conn.command(credentials.source, {
        "saslContinue": 1, "conversationId": first.get("conversationId", 1),
        "payload": _payload({"jwt": str.__str__(token)})}, timeout_s), credentials, MECHANISM)


def authenticate(conn, credentials, clock, timeout_s, check, cache):
    """Authenticate a new connection (done already if the handshake's speculative
    authentication with the cached token succeeded)."""
    speculative = (conn.hello or {}).get("speculativeAuthenticate")
    token = getattr(conn.conversation, "oidc_token", None)
    if token is not None and isinstance(speculative, dict) and speculative.get("done"):
        conn.oidc_token = token
        return
    conn.oidc_token = None
    oidc = cache_of(cache)
    if "OIDC_HUMAN_CALLBACK" in credentials.mechanism_properties:
        return _human(conn, credentials, clock, timeout_s, check, oidc)
    return _machine(conn, credentials, clock, timeout_s, check, oidc)


def reauthenticate(conn, credentials, clock, timeout_s, check, cache):
    """"Reauthentication" (error 391): the connection's token is invalidated in the
    client's cache, and the SASL conversation runs again (no hello, no speculation)."""
    cache_of(cache).invalidate(getattr(conn, "oidc_token", None))
    conn.oidc_token = None
    conn.conversation = None  # no speculation: the handshake is long past
    authenticate(conn, credentials, clock, timeout_s, check, cache)
