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

from singlemongo.auth import aws_fetch, aws_sigv4
from singlemongo.testing.auth.sasl import done, failed

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


def verify(keys, host, authorization, date, nonce_b64, token):
    """STS's check of a signed GetCallerIdentity: the access key id whose secret signed
    it (with the headers MONGODB-AWS signs), or None."""
    match = _AUTHORIZATION.match(str(authorization or ""))
    if match is None:
        return None
    key, day, region, signed_names, signature = match.groups()
    secret, expected_token = keys.keys.get(key, (None, None))
    signed = aws_sigv4.headers(host, date, nonce_b64, token)
    if secret is None or token != expected_token or day != str(date)[:8] or \
            region != aws_sigv4.region(host) or signed_names != ";".join(signed) or \
            signature != aws_sigv4.signature(secret, host, date, signed):
        return None
    return key


class Aws:
    """The server's MONGODB-AWS: nonce and STS host out, the signed request checked, in
    process or, with ``sts`` (an AwsEndpoints), forwarded to its STS on loopback as a
    server forwards it to STS."""
    mechanism = "MONGODB-AWS"

    def __init__(self, keys, sts_host="sts.amazonaws.com", sts=None):
        self.keys, self.sts_host, self.sts = keys, sts_host, sts
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
        if server_nonce is None:
            return self._fail()
        args = (self.sts_host, second.get("a"), str(second.get("d", "")),
                base64.b64encode(server_nonce).decode(), second.get("t"))
        key = self.sts.get_caller_identity(*args) if self.sts is not None else verify(
            self.keys, *args)
        if key is None:
            return self._fail()
        self.completed += 1
        return done(state, f"arn:aws:iam::{ACCOUNT}:user/{key}")

    def _fail(self):
        self.failed += 1
        return failed()


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
        self.caller_identity_checks = 0  # signed requests a server forwarded here
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

    def get_caller_identity(self, host, authorization, date, nonce_b64, token):
        """What a server does with the signed request: POST it to STS (here, over
        loopback HTTP); the access key id STS vouches for, or None."""
        import http.client
        headers = {"Authorization": authorization or "", "X-Amz-Date": date, "Host": host,
                   "Content-Type": aws_sigv4.CONTENT_TYPE, "X-MongoDB-Server-Nonce": nonce_b64,
                   "X-MongoDB-GS2-CB-Flag": "n"}
        if token is not None:
            headers["X-Amz-Security-Token"] = token
        conn = http.client.HTTPConnection("127.0.0.1", self._server.server_address[1],
                                          timeout=10)
        try:
            conn.request("POST", "/", body=aws_sigv4.BODY, headers=headers)
            response = conn.getresponse()
            found = json.loads(response.read() or b"{}")
        finally:
            conn.close()
        if response.status != 200:
            return None
        arn = found["GetCallerIdentityResponse"]["GetCallerIdentityResult"]["Arn"]
        return arn.rpartition("/")[2]

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
            if form.get("Action") == ["GetCallerIdentity"]:
                return self._caller_identity()
            if form.get("Action") != ["AssumeRoleWithWebIdentity"] or \
                    form.get("WebIdentityToken") != [endpoints.web_token]:
                return self._answer(403, {"Error": {"Code": "AccessDenied"}})
            found = endpoints.credentials_json("STS", "SessionToken")
            return self._answer(200, {"AssumeRoleWithWebIdentityResponse": {
                "AssumeRoleWithWebIdentityResult": {"Credentials": found}}})

        def _caller_identity(self):
            endpoints.caller_identity_checks += 1
            key = verify(endpoints.keys, self.headers.get("Host"),
                         self.headers.get("Authorization"), self.headers.get("X-Amz-Date"),
                         self.headers.get("X-MongoDB-Server-Nonce"),
                         self.headers.get("X-Amz-Security-Token"))
            if key is None:
                return self._answer(403, {"Error": {"Code": "SignatureDoesNotMatch"}})
            return self._answer(200, {"GetCallerIdentityResponse": {"GetCallerIdentityResult": {
                "Arn": f"arn:aws:iam::{ACCOUNT}:user/{key}", "Account": ACCOUNT}}})
    return Handler
