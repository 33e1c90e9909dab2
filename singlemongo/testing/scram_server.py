"""The server side of SCRAM for the simulated deployment (users, saslStart, saslContinue and
speculative authentication inside hello)."""
import base64
import hashlib
import hmac
import os

from ..auth.scram import HASHES, keys, parse_fields, salted_password, xor

ITERATIONS = {"SCRAM-SHA-1": 4096, "SCRAM-SHA-256": 15000}


class Users:
    """``{"alice": "pw"}`` or ``{"alice": ("pw", ["SCRAM-SHA-1"])}``; counts completed logins."""

    def __init__(self, users):
        self.users = {}
        for name, spec in users.items():
            password, mechanisms = (spec, list(HASHES)) if isinstance(spec, str) else spec
            salt = os.urandom(16)
            self.users[name] = {m: (salt, keys(m, salted_password(m, name, password, salt,
                                                                   ITERATIONS[m])))
                                for m in mechanisms}
        self.completed = 0
        self.failed = 0

    def mechanisms(self, user):
        return list(self.users.get(user, {}))

    def start(self, state, mechanism, payload):
        fields = parse_fields(bytes(payload)[3:])
        user = fields.get("n", "").replace("=2C", ",").replace("=3D", "=")
        creds = self.users.get(user, {}).get(mechanism)
        if creds is None:
            self.failed += 1
            return {"ok": 0, "code": 18, "codeName": "AuthenticationFailed",
                    "errmsg": "Authentication failed."}
        salt, _ = creds
        nonce = fields["r"] + base64.b64encode(os.urandom(18)).decode()
        server_first = f"r={nonce},s={base64.b64encode(salt).decode()},i={ITERATIONS[mechanism]}"
        state["scram"] = (user, mechanism, bytes(payload)[3:].decode(), server_first)
        return {"ok": 1, "conversationId": 1, "done": False, "payload": server_first.encode()}

    def proceed(self, state, payload):
        user, mechanism, first_bare, server_first = state.pop("scram", (None,) * 4)
        if user is None:
            return {"ok": 0, "code": 17, "codeName": "ProtocolError", "errmsg": "no conversation"}
        _, (_, stored_key, server_key) = self.users[user][mechanism]
        text = bytes(payload).decode()
        without_proof, _, proof = text.rpartition(",p=")
        auth_message = f"{first_bare},{server_first},{without_proof}".encode()
        digest = HASHES[mechanism]
        client_key = xor(base64.b64decode(proof), hmac.digest(stored_key, auth_message, digest))
        if hashlib.new(digest, client_key).digest() != stored_key:
            self.failed += 1
            return {"ok": 0, "code": 18, "codeName": "AuthenticationFailed",
                    "errmsg": "Authentication failed."}
        self.completed += 1
        state["authenticated"] = user
        signature = base64.b64encode(hmac.digest(server_key, auth_message, digest)).decode()
        return {"ok": 1, "conversationId": 1, "done": True, "payload": f"v={signature}".encode()}
