"""SCRAM-SHA-1 and SCRAM-SHA-256 (auth spec, RFC 5802 / 7677) as pure functions.

The conversation: ``first_message`` -> server first -> ``final_message`` -> server final,
checked by ``verify_server_final``. Salted passwords are cached per client by the caller,
so a process that authenticates several connections runs PBKDF2 once.
"""
import base64
import hashlib
import hmac
from ..records import dataclass, field

from ..errors import OperationFailure
from .saslprep import saslprep

HASHES = {"SCRAM-SHA-1": "sha1", "SCRAM-SHA-256": "sha256"}
MIN_ITERATIONS = 4096


class AuthenticationFailed(OperationFailure):
    """Authentication failed; the message never contains the password or the proof."""


def _escape(name):
    return name.replace("=", "=3D").replace(",", "=2C")


def password_input(mechanism, username, password):
    if mechanism == "SCRAM-SHA-1":
        return hashlib.md5(f"{username}:mongo:{password}".encode("utf-8")).hexdigest().encode()
    return saslprep(password).encode("utf-8")


def salted_password(mechanism, username, password, salt, iterations):
    return hashlib.pbkdf2_hmac(HASHES[mechanism], password_input(mechanism, username, password),
                               salt, iterations)


def keys(mechanism, salted):
    """(client_key, stored_key, server_key)."""
    digest = HASHES[mechanism]
    client_key = hmac.digest(salted, b"Client Key", digest)
    return client_key, hashlib.new(digest, client_key).digest(), hmac.digest(
        salted, b"Server Key", digest)


def parse_fields(payload):
    return dict(item.split("=", 1) for item in bytes(payload).decode("utf-8").split(",") if "=" in item)


def xor(a, b):
    return bytes(x ^ y for x, y in zip(a, b))


@dataclass
class Conversation:
    mechanism: str
    username: str
    nonce: str
    cache: dict = field(default_factory=dict, repr=False)
    _expected_server_signature: bytes = field(default=b"", repr=False)

    @property
    def first_bare(self):
        return f"n={_escape(self.username)},r={self.nonce}"

    def first_message(self):
        return ("n,," + self.first_bare).encode("utf-8")

    def final_message(self, server_first, password):
        fields = parse_fields(server_first)
        server_nonce, salt, iterations = fields.get("r", ""), fields.get("s"), int(fields.get("i", 0))
        if not server_nonce.startswith(self.nonce) or salt is None:
            raise AuthenticationFailed("the server's SCRAM reply does not continue our nonce")
        if iterations < MIN_ITERATIONS:
            raise AuthenticationFailed(f"the server asked for {iterations} SCRAM iterations; "
                                       f"at least {MIN_ITERATIONS} are required")
        salt = base64.b64decode(salt)
        key = (self.mechanism, self.username, password, salt, iterations)
        salted = self.cache.get(key)
        if salted is None:
            salted = self.cache[key] = salted_password(self.mechanism, self.username, password,
                                                       salt, iterations)
        client_key, stored_key, server_key = keys(self.mechanism, salted)
        without_proof = f"c=biws,r={server_nonce}"
        auth_message = f"{self.first_bare},{bytes(server_first).decode()},{without_proof}".encode()
        digest = HASHES[self.mechanism]
        proof = xor(client_key, hmac.digest(stored_key, auth_message, digest))
        self._expected_server_signature = hmac.digest(server_key, auth_message, digest)
        return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()

    def verify_server_final(self, server_final):
        fields = parse_fields(server_final)
        if "e" in fields:
            raise AuthenticationFailed(f"authentication failed: {fields['e']}")
        signature = base64.b64decode(fields.get("v", ""))
        if not hmac.compare_digest(signature, self._expected_server_signature):
            raise AuthenticationFailed("the server's SCRAM signature is wrong: it does not "
                                       "know this user's credentials")
