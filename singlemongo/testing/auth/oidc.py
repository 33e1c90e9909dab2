"""MONGODB-OIDC for the simulated deployments: an identity provider that issues expiring
access tokens signed with a test key (HS256 JWTs), the server side of the one-step and
two-step conversations and of speculative authentication, and error 391
(ReauthenticationRequired) for a command on a connection whose token has expired.

    issuer = OidcIssuer(clock=fake_clock)        # its clock dates and checks the tokens
    with ReplicaSet(mechanisms=[Oidc(issuer)]) as rs:
        token = issuer.token("app-user", lifetime_s=300)

``OidcMetadata`` serves the Azure and GCP metadata endpoints on loopback (the driver's
addresses point at it while it runs, for tests only).
"""
import base64
import hashlib
import hmac
import json
import os
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from bson import decode, encode

from singlemongo.auth import oidc_environments
from singlemongo.testing.auth.sasl import done, failed

REAUTHENTICATION_REQUIRED = {"ok": 0, "code": 391, "codeName": "ReauthenticationRequired",
                             "errmsg": "Access token is expired"}


def _b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class OidcIssuer:
    """Issues and checks HS256 JWTs (``iss``, ``aud``, ``sub``, ``exp``) with a test key."""

    def __init__(self, issuer="https://issuer.simulated.test", client_id="simulated-client",
                 audience="simulated-audience", clock=None, key=None):
        self.issuer, self.client_id, self.audience = issuer, client_id, audience
        self.clock = clock
        self.key = key or os.urandom(32)
        self.issued = 0

    def now(self):
        return self.clock.wall() if self.clock is not None else time.time()

    def token(self, subject, lifetime_s=3600, audience=None):
        header = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        claims = {"iss": self.issuer, "aud": audience or self.audience, "sub": subject,
                  "exp": int(self.now() + lifetime_s)}
        body = _b64(json.dumps(claims).encode())
        signature = _b64(hmac.digest(self.key, f"{header}.{body}".encode(), hashlib.sha256))
        self.issued += 1
        return f"{header}.{body}.{signature}"

    def verify(self, token):
        """The claims of a valid, unexpired token of this issuer, else None."""
        try:
            header, body, signature = str(token).split(".")
            expected = hmac.digest(self.key, f"{header}.{body}".encode(), hashlib.sha256)
            claims = json.loads(_unb64(body))
        except (ValueError, TypeError):
            return None
        if not hmac.compare_digest(_unb64(signature), expected) or \
                claims.get("iss") != self.issuer or claims.get("aud") != self.audience or \
                claims.get("exp", 0) <= self.now():
            return None
        return claims


class Oidc:
    """The server's MONGODB-OIDC: a ``jwt`` checked (one step), or a principal answered with
    the IdP's information and then a ``jwt`` (two steps); the token's expiry remembered."""
    mechanism = "MONGODB-OIDC"

    def __init__(self, issuer, request_scopes=("openid",)):
        self.issuer, self.request_scopes = issuer, list(request_scopes)
        self.completed = self.failed_count = self.principal_steps = 0

    def start(self, state, mechanism, payload, db):
        state.pop("authenticated", None)
        if db != "$external":
            return self._fail()
        request = decode(bytes(payload)) if payload else {}
        if "jwt" in request:
            return self._check(state, request["jwt"])
        self.principal_steps += 1
        state["oidc_principal"] = request.get("n")
        return {"ok": 1, "conversationId": 1, "done": False, "payload": encode({
            "issuer": self.issuer.issuer, "clientId": self.issuer.client_id,
            "requestScopes": self.request_scopes})}

    def proceed(self, state, payload):
        if "oidc_principal" not in state:
            return self._fail()
        state.pop("oidc_principal")
        return self._check(state, decode(bytes(payload)).get("jwt"))

    def _check(self, state, token):
        claims = self.issuer.verify(token)
        if claims is None:
            return self._fail()
        self.completed += 1
        state["auth_expires"] = (claims["exp"], self.issuer.now)
        return done(state, claims["sub"])

    def _fail(self):
        self.failed_count += 1
        return failed()


def expired(state):
    """Whether the token a connection authenticated with has expired (error 391 then)."""
    found = state.get("auth_expires")
    return found is not None and found[0] <= found[1]()


class OidcMetadata:
    """Azure's IMDS and GCP's metadata server on loopback, issuing ``issuer``'s tokens for
    the resource (audience) they are asked for; ``requests`` counts them."""

    def __init__(self, issuer, subject="metadata-identity"):
        self.issuer, self.subject, self.requests = issuer, subject, {"azure": 0, "gcp": 0}
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._saved = None

    @property
    def base(self):
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self):
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self._saved = dict(oidc_environments.ENDPOINTS)
        oidc_environments.ENDPOINTS.update(azure=self.base, gcp=self.base)
        return self

    def __exit__(self, *exc):
        oidc_environments.ENDPOINTS.update(self._saved)
        self._server.shutdown()
        self._server.server_close()


def _handler(metadata):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _answer(self, status, text):
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(url.query))
            if url.path == "/metadata/identity/oauth2/token":
                metadata.requests["azure"] += 1
                if self.headers.get("Metadata") != "true":
                    return self._answer(400, "Metadata header missing")
                token = metadata.issuer.token(metadata.subject, audience=query.get("resource"))
                return self._answer(200, json.dumps({"access_token": token,
                                                     "expires_in": "3599"}))
            if url.path.endswith("/service-accounts/default/identity"):
                metadata.requests["gcp"] += 1
                if self.headers.get("Metadata-Flavor") != "Google":
                    return self._answer(403, "Metadata-Flavor header missing")
                return self._answer(200, metadata.issuer.token(
                    metadata.subject, audience=query.get("audience")))
            return self._answer(404, "not found")
    return Handler
