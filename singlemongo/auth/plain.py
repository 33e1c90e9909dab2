"""PLAIN (auth spec, "PLAIN"; RFC 4616): the username and password in one saslStart against
``$external``, which the server checks with an LDAP directory (or another proxy). One round
trip after the handshake; the password travels as it is, so use it over TLS only."""
from singlemongo.options.uri import SecretBytes

MECHANISM = "PLAIN"


def authenticate(conn, credentials, clock, timeout_s, check, cache=None):
    """One saslStart (the conversation is done in it); ``check`` raises AuthenticationFailed."""
    username = credentials.username.encode("utf-8")
    payload = SecretBytes(b"\x00" + username + b"\x00" + credentials.password.utf8())
    check(conn.command(credentials.source, {
        "saslStart": 1, "mechanism": MECHANISM, "payload": payload, "autoAuthorize": 1},
        timeout_s), credentials, MECHANISM)
