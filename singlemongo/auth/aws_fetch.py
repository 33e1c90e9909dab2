"""Where MONGODB-AWS finds credentials it has to ask for (auth spec, "Obtaining
Credentials"): AssumeRoleWithWebIdentity, the ECS endpoint, EC2's instance metadata
(IMDSv2), in that order; and the process-wide cache of what they returned ("Caching
Credentials": valid until five minutes before "Expiration", cleared when authentication
fails, never written anywhere).

``ENDPOINTS`` are the real addresses; ``singlemongo.testing.aws`` points them at its
loopback stand-ins, for tests only. Each request is bounded by the deadline it is given.
"""
import json
import os

from singlemongo.options.uri import SecretBytes, SecretText
from singlemongo.auth.http import request

ENDPOINTS = {"sts": "https://sts.amazonaws.com", "ecs": "http://169.254.170.2",
             "ec2": "http://169.254.169.254"}
EXPIRY_MARGIN_S = 300.0  # "Caching Credentials": valid if more than five minutes from expiry
IMDS_TOKEN_TTL_S = 30
_CACHE: dict = {}  # "credential": (access key, SecretText secret, SecretText token, expiration)


def cached(clock):
    """The cached credential if it is still valid, as an AwsCredential."""
    from singlemongo.auth.aws import AwsCredential
    found = _CACHE.get("credential")
    if found is None or found[3] is None or found[3] - clock.wall() <= EXPIRY_MARGIN_S:
        return None
    return AwsCredential(*found)


def clear():
    _CACHE.clear()


def _expiration(text):
    import datetime
    try:
        when = datetime.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return when.timestamp()


def _parsed(text, token_field, *path):
    """(access key, SecretText secret, token, expiration) from a JSON answer."""
    found = json.loads(text)
    for key in path:
        found = found.get(key, found)
    token = found.get(token_field)
    return (found.get("AccessKeyId"), SecretText(found.get("SecretAccessKey") or ""),
            SecretText(token) if isinstance(token, str) else token, found.get("Expiration"))


def _web_identity(deadline):
    token_file, role = os.environ.get("AWS_WEB_IDENTITY_TOKEN_FILE"), os.environ.get(
        "AWS_ROLE_ARN")
    if not token_file or not role:
        return None, "web identity: AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN are not set"
    import urllib.parse
    with open(token_file, encoding="utf-8") as stream:
        token = SecretText(stream.read().strip())
    # The token goes in the POST body, a SecretBytes: never in a URL or a plain local.
    body = SecretBytes(urllib.parse.urlencode({
        "Action": "AssumeRoleWithWebIdentity", "RoleArn": role, "Version": "2011-06-15",
        "RoleSessionName": os.environ.get("AWS_ROLE_SESSION_NAME") or "singlemongo",
        "WebIdentityToken": token.reveal()}).encode())
    status, text = request("POST", f"{ENDPOINTS['sts']}/", deadline, {
        "Accept": "application/json", "Content-Type": "application/x-www-form-urlencoded"},
        body)
    if status != 200:
        return None, f"web identity: STS answered HTTP {status}"
    return _parsed(text, "SessionToken", "AssumeRoleWithWebIdentityResponse",
                   "AssumeRoleWithWebIdentityResult", "Credentials"), None


def _ecs(deadline):
    relative = os.environ.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
    status, text = request("GET", f"{ENDPOINTS['ecs']}{relative}", deadline)
    if status != 200:
        return None, f"ECS endpoint: HTTP {status}"
    return _parsed(text, "Token"), None


def _ec2(deadline):
    base = ENDPOINTS["ec2"]
    status, token = request("PUT", f"{base}/latest/api/token", deadline,
                             {"X-aws-ec2-metadata-token-ttl-seconds": str(IMDS_TOKEN_TTL_S)})
    if status != 200:
        return None, f"EC2 instance metadata: the IMDSv2 token request answered HTTP {status}"
    headers = {"X-aws-ec2-metadata-token": token.reveal()}
    path = f"{base}/latest/meta-data/iam/security-credentials/"
    status, role = request("GET", path, deadline, headers)
    if status != 200 or not role.strip():
        return None, f"EC2 instance metadata: no role (HTTP {status})"
    status, text = request("GET", path + role.reveal().strip().splitlines()[0], deadline,
                            headers)
    if status != 200:
        return None, f"EC2 instance metadata: HTTP {status} for the role's credentials"
    return _parsed(text, "Token"), None


def fetch(clock, deadline, problems):
    """(access key, secret, token, expiration) from the first endpoint source that answers,
    cached; None with a reason per source added to ``problems``."""
    sources = [("web identity", _web_identity)]
    if os.environ.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"):
        sources.append(("ECS endpoint", _ecs))
    else:
        sources.append(("EC2 instance metadata", _ec2))
    for name, source in sources:
        try:
            found, problem = source(deadline)
        except (OSError, ValueError) as exc:  # refused, timed out, not JSON
            found, problem = None, f"{name}: {type(exc).__name__}: {exc}"
        if found is not None and (not found[0] or not found[1]):
            found, problem = None, f"{name}: the answer has no AccessKeyId/SecretAccessKey"
        if found is not None:
            entry = (*found[:3], _expiration(found[3]))
            _CACHE["credential"] = entry
            return entry
        problems.append(problem)
    return None
