"""MONGODB-AWS for the simulated deployments: the server side of the conversation, which
checks the SigV4 signature as STS would (test keys only), and loopback stand-ins for the
places a driver fetches credentials from (STS's AssumeRoleWithWebIdentity, the ECS
endpoint, EC2's IMDSv2), which issue expiring temporary credentials the server accepts.

    keys = AwsKeys({"AKIDTEST": "test-secret"})
    with ReplicaSet(mechanisms=[Aws(keys)]) as rs, AwsEndpoints(keys) as endpoints:
        ...  # endpoints.env(...) gives the environment of each source

``AwsEndpoints`` points the driver's endpoint addresses at itself while it runs (tests
only) and clears the driver's credential cache on the way in and out.
"""
import base64
import datetime
import json
import os
import re
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from bson import decode, encode

from ..auth import aws_fetch, aws_sigv4
from .sasl import done, failed

ACCOUNT = "123456789012"
_AUTHORIZATION = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/sts/"
                            r"aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$")


class AwsKeys:
    """Access key id -> (secret, session token or None): what STS knows."""

    def __init__(self, keys=None):
        self.keys = {k: (v, None) if isinstance(v, str) else tuple(v)
                     for k, v in (keys or {}).items()}
        self.lock = threading.Lock()

    def issue(self, prefix):
        """New temporary credentials: (key, secret, token)."""
        suffix = os.urandom(6).hex().upper()
        key, secret, token = f"ASIA{prefix}{suffix}", os.urandom(20).hex(), os.urandom(24).hex()
        with self.lock:
            self.keys[key] = (secret, token)
        return key, secret, token


class Aws:
    """The server's MONGODB-AWS: nonce and STS host out, the signed request checked."""
    mechanism = "MONGODB-AWS"

    def __init__(self, keys, sts_host="sts.amazonaws.com"):
        self.keys, self.sts_host = keys, sts_host
        self.completed = self.failed = 0

    def start(self, state, mechanism, payload, db):
        first = decode(bytes(payload))
        nonce = first.get("r")
        if db != "$external" or first.get("p") != ord("n") or not isinstance(nonce, bytes) \
                or len(nonce) != 32:
            return self._fail()
        server_nonce = nonce + os.urandom(32)
        state["aws"] = server_nonce
        return {"ok": 1, "conversationId": 1, "done": False,
                "payload": encode({"s": server_nonce, "h": self.sts_host})}

    def proceed(self, state, payload):
        server_nonce = state.pop("aws", None)
        second = decode(bytes(payload))
        match = _AUTHORIZATION.match(str(second.get("a", "")))
        if server_nonce is None or match is None:
            return self._fail()
        key, day, region, signed_names, signature = match.groups()
        secret, token = self.keys.keys.get(key, (None, None))
        date = str(second.get("d", ""))
        signed = aws_sigv4.headers(self.sts_host, date, base64.b64encode(server_nonce).decode(),
                                   second.get("t"))
        if secret is None or token != second.get("t") or day != date[:8] or \
                region != aws_sigv4.region(self.sts_host) or signed_names != ";".join(signed) \
                or signature != aws_sigv4.signature(secret, self.sts_host, date, signed):
            return self._fail()
        self.completed += 1
        return done(state, f"arn:aws:iam::{ACCOUNT}:user/{key}")

    def _fail(self):
        self.failed += 1
        return failed(self.mechanism)


def _expires(now, seconds):
    when = datetime.datetime.fromtimestamp(now + seconds, datetime.timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


class AwsEndpoints:
    """STS, ECS and EC2 (IMDSv2) on one loopback HTTP server; ``requests`` counts each
    request by endpoint, ``lifetime_s`` is how long issued credentials live, ``web_token``
    the identity token STS accepts, ``role`` EC2's role name; ``clock`` (a FakeClock) dates
    the expirations, so a test can move past them."""

    def __init__(self, keys, lifetime_s=3600, web_token="test-web-identity-token",
                 role="test-role", ecs_path="/v2/credentials/test", clock=None):
        self.keys, self.lifetime_s, self.web_token = keys, lifetime_s, web_token
        self.clock = clock
        self.role, self.ecs_path = role, ecs_path
        self.requests = {"sts": 0, "ecs": 0, "ec2": 0}
        self.imds_tokens = set()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._saved = None

    @property
    def base(self):
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def env(self, source, tmp_path=None):
        """The environment variables that select ``source`` ("web identity", "ecs", "ec2")."""
        if source == "web identity":
            token_file = tmp_path / "web-identity-token"
            token_file.write_text(self.web_token)
            return {"AWS_WEB_IDENTITY_TOKEN_FILE": str(token_file),
                    "AWS_ROLE_ARN": f"arn:aws:iam::{ACCOUNT}:role/test"}
        if source == "ecs":
            return {"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": self.ecs_path}
        return {}

    def credentials_json(self, prefix, token_field):
        key, secret, token = self.keys.issue(prefix)
        return {"AccessKeyId": key, "SecretAccessKey": secret, token_field: token,
                "Expiration": _expires(self.clock.wall() if self.clock else time.time(),
                                       self.lifetime_s)}

    def __enter__(self):
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        self._saved = dict(aws_fetch.ENDPOINTS)
        aws_fetch.ENDPOINTS.update(sts=self.base, ecs=self.base, ec2=self.base)
        aws_fetch.clear()
        return self

    def __exit__(self, *exc):
        aws_fetch.ENDPOINTS.update(self._saved)
        aws_fetch.clear()
        self._server.shutdown()
        self._server.server_close()


def _handler(endpoints):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def _answer(self, status, body):
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_PUT(self):
            endpoints.requests["ec2"] += 1
            if self.path != "/latest/api/token" or \
                    not self.headers.get("X-aws-ec2-metadata-token-ttl-seconds"):
                return self._answer(400, "")
            token = os.urandom(16).hex()
            endpoints.imds_tokens.add(token)
            return self._answer(200, token)

        def do_GET(self):
            if self.path == endpoints.ecs_path:
                endpoints.requests["ecs"] += 1
                return self._answer(200, endpoints.credentials_json("ECS", "Token"))
            endpoints.requests["ec2"] += 1
            if self.headers.get("X-aws-ec2-metadata-token") not in endpoints.imds_tokens:
                return self._answer(401, "")
            base = "/latest/meta-data/iam/security-credentials/"
            if self.path == base:
                return self._answer(200, endpoints.role)
            if self.path == base + endpoints.role:
                return self._answer(200, dict(endpoints.credentials_json("EC2", "Token"),
                                              Code="Success", Type="AWS-HMAC"))
            return self._answer(404, "")

        def do_POST(self):
            endpoints.requests["sts"] += 1
            length = int(self.headers.get("Content-Length") or 0)
            form = urllib.parse.parse_qs(self.rfile.read(length).decode())
            if form.get("Action") != ["AssumeRoleWithWebIdentity"] or \
                    form.get("WebIdentityToken") != [endpoints.web_token]:
                return self._answer(403, {"Error": {"Code": "AccessDenied"}})
            found = endpoints.credentials_json("STS", "SessionToken")
            return self._answer(200, {"AssumeRoleWithWebIdentityResponse": {
                "AssumeRoleWithWebIdentityResult": {"Credentials": found}}})
    return Handler
