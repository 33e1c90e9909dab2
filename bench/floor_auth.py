"""Raw floors of the production paths (issue 47), with the standard library and bson only:
what any driver must do to run one find on that path, in the fewest round trips the
specifications allow.

    floor_auth.py PATH HOST:PORT[,OTHER:PORT...] [CA CLIENT_PEM USER PASSWORD]

With other members after the primary, the floor first checks each of them as the
single-threaded scan must (server discovery and monitoring: every server of the first scan),
a connection with TLS when the path has it and a hello, then runs the path on the primary.

PATH is one of:
- ``tls``: a default context with the CA file (the same verification as a driver), hello,
  find;
- ``tls-scram``: TLS, a hello carrying SCRAM-SHA-256's first step (speculative
  authentication), one saslContinue (skipEmptyExchange), find;
- ``tls-x509``: TLS with the client certificate, a hello carrying MONGODB-X509's
  authenticate (speculative: nothing more), find;
- ``aws``: hello, saslStart, saslContinue with a SigV4-signed GetCallerIdentity (static
  credentials; MONGODB-AWS has no speculative step), find.
"""
import socket
import sys

import bson
from bson import Binary

from floor import command

# Each path imports what its protocol uses, where it uses it: a TLS floor loads ssl and no
# hashing, SCRAM adds hashlib, hmac and base64, AWS datetime too. A module a path does not
# need would count against the floor, not the driver.


def _connect(host, port, ca=None, client_pem=None):
    sock = socket.create_connection((host, int(port)))
    if ca is None:
        return sock
    import ssl
    context = ssl.create_default_context(cafile=ca)
    if client_pem:
        context.load_cert_chain(client_pem)
    return context.wrap_socket(sock, server_hostname=host)


def _hello(sock, **fields):
    return command(sock, 1, {"hello": 1, "$db": "admin", **fields})


def _find(sock):
    reply = command(sock, 9, {"find": "c", "filter": {}, "limit": 1, "singleBatch": True,
                              "$db": "bench"})
    print(reply["cursor"]["firstBatch"][:1])


def tls(host, port, ca, *_):
    sock = _connect(host, port, ca)
    _hello(sock)
    _find(sock)


def tls_x509(host, port, ca, client_pem, *_):
    sock = _connect(host, port, ca, client_pem)
    reply = _hello(sock, speculativeAuthenticate={"authenticate": 1,
                                                  "mechanism": "MONGODB-X509",
                                                  "db": "$external"})
    assert "speculativeAuthenticate" in reply, reply
    _find(sock)


def _scram_final(user, password, client_nonce, server_first):
    import base64
    import hashlib
    import hmac
    fields = dict(item.split("=", 1) for item in server_first.split(","))
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(fields["s"]),
                                 int(fields["i"]))
    client_key = hmac.digest(salted, b"Client Key", "sha256")
    without_proof = f"c=biws,r={fields['r']}"
    auth_message = f"n={user},r={client_nonce},{server_first},{without_proof}".encode()
    signature = hmac.digest(hashlib.sha256(client_key).digest(), auth_message, "sha256")
    proof = bytes(a ^ b for a, b in zip(client_key, signature))
    return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()


def tls_scram(host, port, ca, _pem, user, password):
    import base64
    import os
    sock = _connect(host, port, ca)
    nonce = base64.b64encode(os.urandom(24)).decode()
    first = f"n,,n={user},r={nonce}".encode()
    reply = _hello(sock, speculativeAuthenticate={
        "saslStart": 1, "mechanism": "SCRAM-SHA-256", "payload": Binary(first), "db": "admin",
        "options": {"skipEmptyExchange": True}})["speculativeAuthenticate"]
    final = _scram_final(user, password, nonce, bytes(reply["payload"]).decode())
    done = command(sock, 3, {"saslContinue": 1, "conversationId": reply["conversationId"],
                             "payload": Binary(final), "$db": "admin"})
    assert done.get("done"), done
    _find(sock)


def _sigv4(key_id, secret, host, date, nonce_b64):
    import hashlib
    import hmac
    body = "Action=GetCallerIdentity&Version=2011-06-15"
    headers = {"content-length": str(len(body)),
               "content-type": "application/x-www-form-urlencoded", "host": host,
               "x-amz-date": date, "x-mongodb-gs2-cb-flag": "n",
               "x-mongodb-server-nonce": nonce_b64}
    signed = ";".join(headers)
    canonical = "\n".join(["POST", "/", "", *(f"{k}:{v}" for k, v in headers.items()), "",
                           signed, hashlib.sha256(body.encode()).hexdigest()])
    region = "us-east-1" if host in ("sts.amazonaws.com", "aws.amazonaws.com") or \
        "." not in host else host.split(".")[1]
    scope = f"{date[:8]}/{region}/sts/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + secret).encode()
    for part in (date[:8], region, "sts", "aws4_request"):
        key = hmac.digest(key, part.encode(), "sha256")
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    return (f"AWS4-HMAC-SHA256 Credential={key_id}/{scope}, SignedHeaders={signed}, "
            f"Signature={signature}")


def aws(host, port, _ca, _pem, key_id, secret):
    import base64
    import datetime
    import os
    sock = _connect(host, port)
    _hello(sock)
    nonce = os.urandom(32)
    first = command(sock, 2, {"saslStart": 1, "mechanism": "MONGODB-AWS", "$db": "$external",
                              "payload": Binary(bson.encode({"r": Binary(nonce),
                                                             "p": ord("n")}))})
    server = bson.decode(bytes(first["payload"]))
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    authorization = _sigv4(key_id, secret, server["h"], date,
                           base64.b64encode(server["s"]).decode())
    done = command(sock, 3, {"saslContinue": 1, "conversationId": first["conversationId"],
                             "payload": Binary(bson.encode({"a": authorization, "d": date})),
                             "$db": "$external"})
    assert done.get("done"), done
    _find(sock)


PATHS = {"tls": tls, "tls-scram": tls_scram, "tls-x509": tls_x509, "aws": aws}


def scan(others, path, ca, client_pem):
    """A hello to each other member (the scan's), on connections the path would open."""
    for address in others:
        host, port = address.rsplit(":", 1)
        sock = _connect(host, port, ca if path != "aws" else None,
                        client_pem if path == "tls-x509" else None)
        _hello(sock)
        sock.close()


if __name__ == "__main__":
    path, addresses, *rest = sys.argv[1:]
    rest += [None] * (4 - len(rest))
    primary, *others = addresses.split(",")
    scan(others, path, rest[0], rest[1])
    host, port = primary.rsplit(":", 1)
    PATHS[path](host, port, *rest)
