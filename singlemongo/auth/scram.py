"""SCRAM-SHA-1 and SCRAM-SHA-256 (auth spec, RFC 5802 / 7677) as pure functions.

The conversation: ``first_message`` -> server first -> ``final_message`` -> server final,
checked by ``verify_server_final``. Salted passwords are cached per client by the caller,
so a process that authenticates several connections runs PBKDF2 once.

The password, the salted password, the keys and the proof only ever live in SecretText and
SecretBytes (their repr is redacted), so no frame that can raise shows them among its locals.
Everything read from the server is checked: a reply a server made up is AuthenticationFailed.
"""
import base64
import binascii
import hashlib
import hmac
from singlemongo.records import dataclass, field

from singlemongo.auth import HASHES, AuthenticationFailed  # re-exported: scram.AuthenticationFailed
from singlemongo.options.uri import SecretBytes, SecretText
from singlemongo.auth.saslprep import saslprep

MIN_ITERATIONS = 4096
MAX_ITERATIONS = 10_000_000  # a server cannot make a one-off query spend minutes in PBKDF2


def _escape(name):
    return name.replace("=", "=3D").replace(",", "=2C")


def password_input(mechanism, username, password):
    """What PBKDF2 salts: MD5 of user:mongo:password for SHA-1, SASLprep for SHA-256."""
    password = SecretText(password)
    if mechanism == "SCRAM-SHA-1":
        return SecretBytes(hashlib.md5((username + ":mongo:").encode("utf-8") + password.utf8())
                           .hexdigest().encode())
    return SecretText(saslprep(password)).utf8()


def salted_password(mechanism, username, password, salt, iterations):
    return SecretBytes(hashlib.pbkdf2_hmac(
        HASHES[mechanism], password_input(mechanism, username, password), salt, iterations))


def keys(mechanism, salted):
    """(client_key, stored_key, server_key)."""
    digest = HASHES[mechanism]
    client_key = SecretBytes(hmac.digest(salted, b"Client Key", digest))
    return client_key, SecretBytes(hashlib.new(digest, client_key).digest()), SecretBytes(
        hmac.digest(salted, b"Server Key", digest))


def parse_fields(payload):
    """The attribute=value pairs of a SCRAM message; AuthenticationFailed for anything else."""
    if not isinstance(payload, (bytes, bytearray, memoryview)):
        raise AuthenticationFailed(f"the server's SCRAM reply has no payload (got "
                                   f"{type(payload).__name__})")
    try:
        text = bytes(payload).decode("utf-8")
    except UnicodeDecodeError:
        raise AuthenticationFailed("the server's SCRAM payload is not UTF-8") from None
    return dict(item.split("=", 1) for item in text.split(",") if "=" in item)


def _b64decode(value, what):
    try:
        return base64.b64decode(value or "", validate=True)
    except (binascii.Error, ValueError):
        raise AuthenticationFailed(f"the server's SCRAM {what} is not base64") from None


def _iterations(value):
    if not (value or "").isdigit() or not MIN_ITERATIONS <= int(value) <= MAX_ITERATIONS:
        raise AuthenticationFailed(f"the server asked for {value!r:.20} SCRAM iterations; "
                                   f"{MIN_ITERATIONS} to {MAX_ITERATIONS} are accepted")
    return int(value)


def _salted_or_fail(mechanism, username, password, salt, iterations):
    problem = None
    try:
        return salted_password(mechanism, username, password, salt, iterations)
    except ValueError as exc:  # SASLprep: raised outside the handler, so no chained frames
        problem = str(exc)
    raise AuthenticationFailed(f"cannot authenticate user {username!r} with {mechanism}: "
                               f"{problem}")


def xor(a, b):
    return SecretBytes((int.from_bytes(a, "big") ^ int.from_bytes(b, "big")).to_bytes(
        len(a), "big"))


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
        """The client-final message (a SecretBytes: it carries the proof)."""
        fields = parse_fields(server_first)
        server_nonce = fields.get("r", "")
        if not server_nonce.startswith(self.nonce) or len(server_nonce) == len(self.nonce):
            raise AuthenticationFailed("the server's SCRAM reply does not continue our nonce")
        salt, iterations = _b64decode(fields.get("s"), "salt"), _iterations(fields.get("i"))
        key = (self.mechanism, self.username, SecretText(password), salt, iterations)
        if key not in self.cache:
            self.cache[key] = _salted_or_fail(self.mechanism, self.username, password, salt,
                                              iterations)
        client_key, stored_key, server_key = keys(self.mechanism, self.cache[key])
        without_proof = f"c=biws,r={server_nonce}"
        auth_message = f"{self.first_bare},{bytes(server_first).decode()},{without_proof}".encode()
        digest = HASHES[self.mechanism]
        proof = xor(client_key, hmac.digest(stored_key, auth_message, digest))
        self._expected_server_signature = SecretBytes(hmac.digest(server_key, auth_message,
                                                                  digest))
        return SecretBytes(f"{without_proof},p=".encode()
                           + binascii.b2a_base64(proof, newline=False))

    def verify_server_final(self, server_final):
        fields = parse_fields(server_final)
        if "e" in fields:
            raise AuthenticationFailed(f"authentication failed: {fields['e']!r:.200}")
        signature = _b64decode(fields.get("v"), "server signature")
        if not hmac.compare_digest(signature, self._expected_server_signature):
            raise AuthenticationFailed("the server's SCRAM signature is wrong: it does not "
                                       "know this user's credentials")
