"""MONGODB-AWS (auth spec, "MONGODB-AWS"): a saslStart with the client nonce, the server's
nonce and STS host back, then a saslContinue with a SigV4-signed GetCallerIdentity request
(``aws_sigv4``), which the server has STS check. Two commands after the handshake.

Credentials, in the spec's "Credential Fetching Order": the connection string or keywords
(``AWS_SESSION_TOKEN`` in authMechanismProperties), the environment (``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``: what Lambda sets; read anew each time,
never cached), AssumeRoleWithWebIdentity (``AWS_WEB_IDENTITY_TOKEN_FILE`` and
``AWS_ROLE_ARN``), the ECS endpoint (``AWS_CONTAINER_CREDENTIALS_RELATIVE_URI``), else EC2's
instance metadata (IMDSv2). Fetched credentials are cached in the process until five
minutes before they expire and dropped when an authentication fails; they are never written
anywhere. Each fetch is bounded by the operation's deadline (at most 10 s, as the spec
says), and a failure names every source tried and why it gave nothing.
"""
import base64
import os
import sys

from bson import Binary, decode, encode

from singlemongo.options.uri import SecretBytes, SecretText
from singlemongo.auth import aws_sigv4

MECHANISM = "MONGODB-AWS"
GS2_CB_FLAG = ord("n")  # no channel binding: the server does not support it


class AwsCredential:
    """An access key id, its secret (``SecretText``) and an optional session token."""
    __slots__ = ("access_key", "secret_key", "token", "expiration")

    def __init__(self, access_key, secret_key, token=None, expiration=None):
        self.access_key, self.expiration = access_key, expiration
        self.secret_key = SecretText(secret_key)
        # The session token is a credential too (issue 46): never shown by a frame's locals.
        self.token = SecretText(token) if token is not None else None

    def __repr__(self):
        return f"AwsCredential(access_key={self.access_key!r}, secret_key='<redacted>')"


def _from_options(credentials, problems):
    if credentials.username is None:
        problems.append("connection string: no username (access key id) given")
        return None
    token = credentials.mechanism_properties.get("AWS_SESSION_TOKEN")
    return AwsCredential(credentials.username, credentials.password, token)


def _from_environment(credentials, problems):
    key, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
    if not key or not secret:
        problems.append("environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not "
                        "both set")
        return None
    return AwsCredential(key, secret, os.environ.get("AWS_SESSION_TOKEN") or None)


def credential(credentials, clock, deadline):
    """The credential to sign with, from the first source that has one; AuthenticationFailed
    naming each source's reason if none has."""
    problems = []
    for source in (_from_options, _from_environment):
        found = source(credentials, problems)
        if found is not None:
            return found
    # Loaded only here: static credentials need no endpoint, its HTTP client nor json.
    from singlemongo.auth import aws_fetch
    found = aws_fetch.cached(clock)
    if found is not None:
        return found
    fetched = aws_fetch.fetch(clock, deadline, problems)
    if fetched is not None:
        return AwsCredential(*fetched)
    from singlemongo.auth import AuthenticationFailed
    raise AuthenticationFailed("MONGODB-AWS authentication failed: no credentials found. "
                               "Tried, in the auth spec's order: " + "; ".join(problems), None,
                               {})


def _validate_server_first(reply_payload, nonce):
    from singlemongo.auth import AuthenticationFailed
    if not isinstance(reply_payload, bytes):
        raise TypeError(f"payload is {type(reply_payload).__name__}, not binary")
    first = decode(reply_payload)
    server_nonce, host = first.get("s"), first.get("h")
    if not isinstance(server_nonce, bytes) or len(server_nonce) != 64 or \
            server_nonce[:32] != nonce:
        raise AuthenticationFailed("MONGODB-AWS authentication failed: the server's nonce is "
                                   "not 64 bytes starting with the client's (refused)", None, {})
    problem = aws_sigv4.host_problem(host)
    if problem:
        raise AuthenticationFailed(f"MONGODB-AWS authentication failed: the server's STS host "
                                   f"is refused: {problem}", None, {})
    return server_nonce, host


def authenticate(conn, credentials, clock, timeout_s, check, cache=None):
    """The two-step conversation; a failure clears the cached credentials."""
    aws = credential(credentials, clock, _fetch_deadline(clock, timeout_s))
    try:
        nonce = clock.random_bytes(32)
        first = check(conn.command(credentials.source, {
            "saslStart": 1, "mechanism": MECHANISM, "autoAuthorize": 1,
            "payload": Binary(encode({"r": Binary(nonce), "p": GS2_CB_FLAG}))}, timeout_s),
            _named(credentials, aws), MECHANISM)
        server_nonce, host = _validate_server_first(first.get("payload", b""), nonce)
        date = _utc(clock.wall()).strftime("%Y%m%dT%H%M%SZ")
        signed = aws_sigv4.headers(host, date, base64.b64encode(server_nonce).decode(),
                                   aws.token)
        second = {"a": aws_sigv4.authorization(aws.access_key, aws.secret_key, host, date,
                                               signed), "d": date}
        if aws.token is not None:
            second["t"] = aws.token
        check(conn.command(credentials.source, {
            "saslContinue": 1, "conversationId": first.get("conversationId", 1),
            # SecretBytes: it carries the session token (frames below can raise).
            "payload": SecretBytes(encode(second))}, timeout_s), _named(credentials, aws),
            MECHANISM)
    except Exception:
        # "Caching Credentials": any failure clears the cache (none unless it was loaded)
        fetched_module = sys.modules.get(f"{__package__}.aws_fetch")
        if fetched_module is not None:
            fetched_module.clear()
        raise


def _fetch_deadline(clock, timeout):
    """The operation's deadline (``timeout``: a Deadline, seconds or None), and at most the
    10 s the spec gives an endpoint's answer."""
    from singlemongo.clock import Deadline
    what = "fetching AWS credentials (at most 10 s)"
    if isinstance(timeout, Deadline):
        return timeout.sooner(10.0, what)
    return Deadline(clock, min(timeout, 10.0) if timeout else 10.0, what)


def _utc(seconds):
    import datetime
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)


def _named(credentials, aws):
    """The credentials as an error names them: the access key id is the user."""
    if credentials.username is not None:
        return credentials
    from singlemongo.records import replace
    return replace(credentials, username=aws.access_key)
