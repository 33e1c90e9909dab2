"""AWS Signature Version 4 for MONGODB-AWS (auth spec, "MONGODB-AWS", "Conversation" and
"Region Calculation"): the signed GetCallerIdentity request the server forwards to STS.
Pure functions: the caller gives the time, the nonce and the keys. The simulated server
verifies with the same ``signature`` (``singlemongo.testing.aws``)."""
import hashlib
import hmac

from singlemongo.options.uri import SecretBytes, SecretText

ALGORITHM = "AWS4-HMAC-SHA256"
BODY = "Action=GetCallerIdentity&Version=2011-06-15"
CONTENT_TYPE = "application/x-www-form-urlencoded"


def host_problem(host):
    """Why ``host`` (the server's STS host) is refused, or None (RFC 1035 limits)."""
    if not isinstance(host, str) or not host or len(host.encode()) > 255:
        return "an STS host must be 1 to 255 bytes"
    if host.startswith(".") or host.endswith(".") or ".." in host:
        return "an STS host must not start or end with a period or have an empty label"
    return None


def region(host):
    """The region of an STS host: the second label, us-east-1 for sts.amazonaws.com and a
    host without a period."""
    if host == "aws.amazonaws.com" or host == "sts.amazonaws.com" or "." not in host:
        return "us-east-1"
    return host.split(".")[1]


def headers(host, date, server_nonce_b64, token=None):
    """The request's headers to sign, lower-case, sorted (canonical order)."""
    out = {"content-length": str(len(BODY)), "content-type": CONTENT_TYPE, "host": host,
           "x-amz-date": date, "x-mongodb-gs2-cb-flag": "n",
           "x-mongodb-server-nonce": server_nonce_b64}
    if token is not None:
        out["x-amz-security-token"] = token
    return dict(sorted(out.items()))


def _hmac(key, text):
    return hmac.digest(key, text.encode(), "sha256")


def signing_key(secret_key, day, region_name, service="sts"):
    """SigV4's derived key: HMAC chain over the day, region, service and "aws4_request"."""
    key = SecretBytes(_hmac(("AWS4" + secret_key).encode(), day))
    for part in (region_name, service, "aws4_request"):
        key = SecretBytes(_hmac(key, part))
    return key


def sign(secret_key, date, region_name, service, method, path, query, signed, body):
    """The hex SigV4 signature of one request (``signed``: lower-case header -> value, in
    order)."""
    # SecretText: a session token is among the signed headers (joined by concatenation,
    # which keeps a SecretText's value, where formatting would redact it).
    canonical = SecretText("\n".join([method, path, query,
                                      *(k + ":" + v for k, v in signed.items()), "",
                                      ";".join(signed),
                                      hashlib.sha256(body.encode()).hexdigest()]))
    scope = f"{date[:8]}/{region_name}/{service}/aws4_request"
    to_sign = "\n".join([ALGORITHM, date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    key = signing_key(secret_key, date[:8], region_name, service)
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def signature(secret_key, host, date, signed):
    """The signature of MONGODB-AWS's GetCallerIdentity POST."""
    return sign(secret_key, date, region(host), "sts", "POST", "/", "", signed, BODY)


def authorization(access_key, secret_key, host, date, signed):
    """The Authorization header's value."""
    scope = f"{date[:8]}/{region(host)}/sts/aws4_request"
    return (f"{ALGORITHM} Credential={access_key}/{scope}, SignedHeaders={';'.join(signed)}, "
            f"Signature={signature(secret_key, host, date, signed)}")
