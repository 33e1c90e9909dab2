"""The simulated server's SASL mechanisms besides SCRAM (``scram_server.py``) and X.509
(``x509.py``), each an object with ``mechanism``, ``start(state, mechanism, payload, db)`` and
``proceed(state, payload)``, given to a deployment as ``mechanisms=[...]``:

- ``Plain({"ldapuser": "pw"})``: PLAIN users of ``$external`` (as an LDAP proxy checks them);
- ``aws.Aws``, ``oidc.Oidc`` and ``gssapi.KerberosStandIn.mechanism()``, in their modules.
"""
from singlemongo.testing.auth.scram_server import FAILED


def failed():
    """The server's AuthenticationFailed (it names neither the user nor the reason)."""
    return dict(FAILED)


def done(state, user, payload=b""):
    state["authenticated"] = user
    return {"ok": 1, "conversationId": 1, "done": True, "payload": payload}


class Plain:
    """PLAIN (RFC 4616): ``authzid NUL authcid NUL password`` in one saslStart."""
    mechanism = "PLAIN"

    def __init__(self, users):
        self.users = dict(users)
        self.completed = 0

    def start(self, state, mechanism, payload, db):
        parts = bytes(payload).split(b"\x00")
        if db != "$external" or len(parts) != 3:
            return failed()
        _, user, password = (part.decode("utf-8", "replace") for part in parts)
        if user not in self.users or self.users[user] != password:
            return failed()
        self.completed += 1
        return done(state, user)

    def proceed(self, state, payload):
        return {"ok": 0, "code": 17, "codeName": "ProtocolError",
                "errmsg": "PLAIN has no second step"}
