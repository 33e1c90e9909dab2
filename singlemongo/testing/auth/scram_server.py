"""The server side of SCRAM for the simulated deployment (users, saslStart, saslContinue and
speculative authentication inside hello).

Users come from two places: the deployment's ``users=`` (valid in every database, for tests
that only need a login) and the ``admin.system.users`` collection that ``createUser`` fills
(``query/users.py``), as on a MongoDB server, where ``user@db`` authenticates against ``db``."""
import base64
import hashlib
import hmac
import os

from singlemongo.auth.scram import HASHES, keys, parse_fields, salted_password, xor

ITERATIONS = {"SCRAM-SHA-1": 4096, "SCRAM-SHA-256": 15000}
FAILED = {"ok": 0, "code": 18, "codeName": "AuthenticationFailed",
          "errmsg": "Authentication failed."}


def credentials(mechanism, name, password, salt=None):
    """(salt, stored_key, server_key) for one mechanism, as a server keeps them."""
    salt = os.urandom(16) if salt is None else salt
    _, stored_key, server_key = keys(mechanism, salted_password(
        mechanism, name, password, salt, ITERATIONS[mechanism]))
    return salt, stored_key, server_key


class Users:
    """``{"alice": "pw"}`` or ``{"alice": ("pw", ["SCRAM-SHA-1"])}``, plus the users a
    ``catalog`` (``lookup(db, user) -> {mechanism: (salt, stored, server)}``) knows; counts
    completed logins."""

    def __init__(self, users, catalog=None):
        self.users = {}
        for name, spec in users.items():
            password, mechanisms = (spec, list(HASHES)) if isinstance(spec, str) else spec
            self.users[name] = {m: credentials(m, name, password) for m in mechanisms}
        self.catalog = catalog
        self.completed = 0
        self.failed = 0

    def _find(self, db, user):
        if user in self.users:
            return self.users[user]
        return self.catalog(db, user) if self.catalog is not None and db else {}

    def mechanisms(self, db, user):
        return list(self._find(db, user))

    def start(self, state, mechanism, payload, db=None):
        fields = parse_fields(bytes(payload)[3:])
        user = fields.get("n", "").replace("=2C", ",").replace("=3D", "=")
        creds = self._find(db, user).get(mechanism)
        if creds is None:
            self.failed += 1
            return dict(FAILED)
        nonce = fields["r"] + base64.b64encode(os.urandom(18)).decode()
        server_first = f"r={nonce},s={base64.b64encode(creds[0]).decode()}," \
                       f"i={ITERATIONS[mechanism]}"
        state["scram"] = (user, mechanism, creds, bytes(payload)[3:].decode(), server_first)
        return {"ok": 1, "conversationId": 1, "done": False, "payload": server_first.encode()}

    def proceed(self, state, payload):
        user, mechanism, creds, first_bare, server_first = state.pop("scram", (None,) * 5)
        if user is None:
            return {"ok": 0, "code": 17, "codeName": "ProtocolError", "errmsg": "no conversation"}
        _, stored_key, server_key = creds
        text = bytes(payload).decode()
        without_proof, _, proof = text.rpartition(",p=")
        auth_message = f"{first_bare},{server_first},{without_proof}".encode()
        digest = HASHES[mechanism]
        client_key = xor(base64.b64decode(proof), hmac.digest(stored_key, auth_message, digest))
        if hashlib.new(digest, client_key).digest() != stored_key:
            self.failed += 1
            return dict(FAILED)
        self.completed += 1
        state["authenticated"] = user
        signature = base64.b64encode(hmac.digest(server_key, auth_message, digest)).decode()
        return {"ok": 1, "conversationId": 1, "done": True, "payload": f"v={signature}".encode()}
