"""Authentication on a connection: SCRAM-SHA-256 and SCRAM-SHA-1, with mechanism negotiation
and speculative authentication inside the handshake's hello, and MONGODB-X509.

A handshake carries ``speculativeAuthenticate`` (the SCRAM client-first message) on every
connection, which costs nothing; the conversation is completed, with one saslContinue, only
on a connection actually used for an operation. Checks alone never authenticate.

MONGODB-X509 (auth spec) is one ``authenticate`` command, whose speculative form rides in
the handshake: the TLS client certificate (tlsCertificateKeyFile) is the credential, and the
server takes the user name from its subject when the URI gives none. A one-off query
authenticated this way costs no round trip more than an unauthenticated one.
"""
import base64

from bson.errors import InvalidBSON

from singlemongo.errors import ConfigurationError, OperationFailure, PyMongoError
from singlemongo.replies import is_ok

__all__ = ["AuthenticationFailed", "handshake_fields", "authenticate"]
X509 = "MONGODB-X509"
# The SCRAM mechanisms and their hash; ``scram`` (with hashlib and hmac) is loaded only by a
# SCRAM conversation: an X.509, AWS or OIDC one-off never loads them (issue 47).
HASHES = {"SCRAM-SHA-1": "sha1", "SCRAM-SHA-256": "sha256"}


class AuthenticationFailed(OperationFailure):
    """Authentication failed; the message never contains the password or the proof."""
# Auth spec: mechanism -> the module of this package that speaks it.
OTHER_MECHANISMS = {"PLAIN": "plain", "MONGODB-AWS": "aws", "MONGODB-OIDC": "oidc",
                    "GSSAPI": "gssapi"}
HINTS = {X509: "Check tlsCertificateKeyFile: the server must trust its CA, and its subject "
               "must be a user of $external (and equal the username, if one is given).",
         "PLAIN": "Check the username and password: the server asks its LDAP directory "
                  "(authSource is $external).",
         "GSSAPI": "Check the Kerberos principal (the username) and its ticket or password, "
                   "and the service principal (SERVICE_NAME@host, CANONICALIZE_HOST_NAME, "
                   "SERVICE_REALM).",
         "MONGODB-OIDC": "Check the access token the callback or environment gives: the "
                         "server must trust its issuer and accept its audience and user.",
         "MONGODB-AWS": "Check the AWS credentials (the access key id is the user) and that "
                        "the server knows their IAM user or role as a user of $external.",
         None: "Check the username, password and authSource."}


class X509Conversation:
    """The speculative X.509 authenticate a handshake sent (nothing more to say after it)."""
    mechanism = X509


def _x509_command(credentials):
    cmd = {"authenticate": 1, "mechanism": X509}
    if credentials.username is not None:  # else the server reads it from the certificate
        cmd["user"] = credentials.username
    return cmd


def _default_mechanism(credentials):
    return credentials.mechanism or "SCRAM-SHA-256"


def handshake_fields(credentials, clock, cache=None):
    """Fields to add to the handshake hello, and the started conversation (or None);
    ``cache``: the client's authentication cache (MONGODB-OIDC's token)."""
    if credentials is None:
        return {}, None
    if credentials.mechanism == "MONGODB-OIDC":
        from singlemongo.auth.oidc import speculative_fields
        return speculative_fields(credentials, cache if cache is not None else {})
    fields = {}
    if credentials.mechanism is None:
        fields["saslSupportedMechs"] = f"{credentials.source}.{credentials.username}"
    mechanism = _default_mechanism(credentials)
    if mechanism == X509:  # auth spec, "Speculative Authentication": the whole exchange
        fields["speculativeAuthenticate"] = dict(_x509_command(credentials), db="$external")
        return fields, X509Conversation()
    if mechanism not in HASHES:
        return fields, None
    from singlemongo.auth.scram import Conversation
    conversation = Conversation(mechanism, credentials.username,
                                base64.b64encode(clock.random_bytes(24)).decode())
    fields["speculativeAuthenticate"] = {
        "saslStart": 1, "mechanism": mechanism, "payload": conversation.first_message(),
        "db": credentials.source, "options": {"skipEmptyExchange": True}}
    return fields, conversation


def negotiate(credentials, hello):
    if credentials.mechanism is not None:
        return credentials.mechanism
    mechs = hello.get("saslSupportedMechs")
    if mechs is None or "SCRAM-SHA-256" in mechs:
        return "SCRAM-SHA-256"
    return "SCRAM-SHA-1"


# What reading a server's SASL reply raises when the reply is not what the mechanism says:
# not BSON, a field of the wrong type, a field missing.
MALFORMED_REPLY = (InvalidBSON, TypeError, ValueError, KeyError, AttributeError, IndexError)


def _readable(run, mechanism, *args):
    """``run(*args)``, a SASL conversation, with a reply it cannot read raised as an
    AuthenticationFailed (issue 46: a hostile reply escaped as bson's InvalidBSON)."""
    try:
        run(*args)
    except PyMongoError:
        raise  # ConfigurationError is a ValueError too: the driver's own errors stay
    except MALFORMED_REPLY as exc:
        raise malformed(mechanism, exc) from None


def malformed(mechanism, exc):
    """The AuthenticationFailed for a SASL reply that cannot be read (the connection that got
    it is closed by the caller, as for every failed authentication)."""
    what = "is not BSON" if isinstance(exc, InvalidBSON) else \
        f"has a field of the wrong type or is missing one ({type(exc).__name__}: {exc})"
    return AuthenticationFailed(f"{mechanism} authentication failed: the server's reply "
                                f"{what}", None, {})


def _check(reply, credentials, mechanism):
    if not is_ok(reply):
        who = (f"user {credentials.username!r}" if credentials.username is not None else
               "the identity its token names")  # MONGODB-OIDC needs no username
        raise AuthenticationFailed(
            f"authentication failed for {who} on database "
            f"{credentials.source!r} with {mechanism}: {reply.get('errmsg', 'unknown error')} "
            f"(code {reply.get('code')}). {HINTS.get(mechanism, HINTS[None])}",
            reply.get("code"), {k: v for k, v in reply.items() if k != "payload"})
    return reply


def authenticate(conn, credentials, clock, cache, timeout_s=None):
    """Complete (or run) the SCRAM conversation on ``conn``; idempotent per connection.
    ``timeout_s`` bounds each step (authentication is part of opening a connection)."""
    if conn.authenticated or credentials is None:
        return
    mechanism = negotiate(credentials, conn.hello or {})
    if mechanism == X509:
        _authenticate_x509(conn, credentials, timeout_s)
        return
    if mechanism in OTHER_MECHANISMS:  # each in its module, loaded when it is used
        from singlemongo import _import_paused  # not importlib: a one-off need not load it
        module = _import_paused(f"auth.{OTHER_MECHANISMS[mechanism]}")
        _readable(module.authenticate, mechanism, conn, credentials, clock, timeout_s, _check,
                  cache)
        conn.authenticated = True
        conn.conversation = None
        return
    if mechanism not in HASHES:
        raise ConfigurationError(f"authMechanism {mechanism} is not supported by singlemongo; "
                                 f"use SCRAM-SHA-256, SCRAM-SHA-1, MONGODB-X509 or "
                                 f"{', '.join(OTHER_MECHANISMS)}")
    source = credentials.source
    speculative = (conn.hello or {}).get("speculativeAuthenticate")
    conversation = conn.conversation
    if speculative and conversation is not None and conversation.mechanism == mechanism:
        first = speculative
    else:
        from singlemongo.auth.scram import Conversation
        conversation = Conversation(mechanism, credentials.username,
                                    base64.b64encode(clock.random_bytes(24)).decode())
        first = _check(conn.command(source, {
            "saslStart": 1, "mechanism": mechanism, "payload": conversation.first_message(),
            "autoAuthorize": 1, "options": {"skipEmptyExchange": True}}, timeout_s),
            credentials, mechanism)
    conversation.cache = cache
    final = conversation.final_message(first.get("payload"), credentials.password or "")
    reply = _check(conn.command(source, {"saslContinue": 1, "conversationId":
                                         first.get("conversationId", 1), "payload": final},
                                timeout_s), credentials, mechanism)
    conversation.verify_server_final(reply.get("payload"))
    for _ in range(2):  # servers without skipEmptyExchange want one more, empty, step
        if reply.get("done"):
            break
        reply = _check(conn.command(source, {"saslContinue": 1, "payload": b"",
                                             "conversationId": reply.get("conversationId", 1)},
                                    timeout_s), credentials, mechanism)
    conn.authenticated = True
    conn.conversation = None


def _authenticate_x509(conn, credentials, timeout_s):
    """Done if the handshake's speculative authenticate succeeded, else one command."""
    speculative = (conn.hello or {}).get("speculativeAuthenticate")
    if not (speculative and isinstance(conn.conversation, X509Conversation)):
        _check(conn.command("$external", _x509_command(credentials), timeout_s),
               credentials, X509)
    conn.authenticated = True
    conn.conversation = None


def reauthenticate(conn, credentials, clock, cache, timeout_s=None):
    """Auth spec, "Reauthentication" (error 391): the SASL conversation again on ``conn``
    (no hello); only MONGODB-OIDC supports it."""
    from singlemongo.auth.oidc import reauthenticate as oidc_reauthenticate
    conn.authenticated = False
    _readable(oidc_reauthenticate, "MONGODB-OIDC", conn, credentials, clock, timeout_s, _check,
              cache)
    conn.authenticated = True
