"""GSSAPI where no KDC can run: a stand-in at the SASL boundary. ``KerberosStandIn`` plays
both the client library (the ``kerberos`` module the driver imports, installed in
``sys.modules`` while it is used as a context manager) and the server's mechanism
(``mechanism()``, given to a deployment): the tokens are base64 JSON that say which
principal asks for which service, checked against the principals and services the test
declares. What it verifies is the driver's side of the exchange: the service principal name
(SERVICE_NAME, host canonicalization, SERVICE_HOST, SERVICE_REALM), the principal and
password, the step loop, and the final wrap of the username. Real Kerberos is not spoken.

    kdc = KerberosStandIn({"alice@EXAMPLE.TEST": "pw"}, {"mongodb@localhost"})
    with kdc, ReplicaSet(mechanisms=[kdc.mechanism()]) as rs: ...
"""
import base64
import json
import sys

AUTH_GSS_COMPLETE, AUTH_GSS_CONTINUE, GSS_C_MUTUAL_FLAG = 1, 0, 2


def _encode(document):
    return base64.b64encode(json.dumps(document).encode()).decode()


def _decode(text):
    try:
        return json.loads(base64.b64decode(text))
    except ValueError:
        return {}


class _Context:
    def __init__(self, spn, principal, password):
        self.spn, self.principal, self.password = spn, principal, password
        self.response = None


class KerberosStandIn:
    """The ``kerberos`` module's client functions, and the server's ``mechanism()``."""
    AUTH_GSS_COMPLETE, AUTH_GSS_CONTINUE, GSS_C_MUTUAL_FLAG = (AUTH_GSS_COMPLETE,
                                                                AUTH_GSS_CONTINUE,
                                                                GSS_C_MUTUAL_FLAG)

    def __init__(self, principals, services, default_principal=None):
        self.principals = dict(principals)  # principal -> password
        self.services = set(services)
        self.default_principal = default_principal  # the ticket cache's, without a password
        self.spns = []  # every service principal name a client asked for
        self.cleaned = 0
        self._saved = None

    def __enter__(self):
        self._saved = sys.modules.get("kerberos")
        sys.modules["kerberos"] = self
        return self

    def __exit__(self, *exc):
        if self._saved is None:
            sys.modules.pop("kerberos", None)
        else:
            sys.modules["kerberos"] = self._saved

    # ----- the client library (pykerberos' names) -------------------------------------------

    def authGSSClientInit(self, service, principal=None, gssflags=0, password=None):
        self.spns.append(service)
        return 1, _Context(service, principal or self.default_principal,
                           None if password is None else str.__str__(password))

    def authGSSClientStep(self, context, challenge):
        if challenge == "":
            context.response = _encode({"step": "init", "principal": context.principal,
                                        "password": context.password, "spn": context.spn})
            return AUTH_GSS_CONTINUE
        nonce = _decode(challenge).get("nonce")
        context.response = _encode({"step": "response", "nonce": nonce})
        return AUTH_GSS_COMPLETE

    def authGSSClientResponse(self, context):
        return context.response

    def authGSSClientUnwrap(self, context, challenge):
        context.response = _encode({"step": "unwrapped", **_decode(challenge)})
        return 1

    def authGSSClientWrap(self, context, data, user=None):
        context.response = _encode({"step": "authz", "user": user})
        return 1

    def authGSSClientClean(self, context):
        self.cleaned += 1
        return 1

    # ----- the server ---------------------------------------------------------------------

    def mechanism(self):
        return _Mechanism(self)


class _Mechanism:
    mechanism = "GSSAPI"

    def __init__(self, kdc):
        self.kdc = kdc
        self.completed = 0

    def start(self, state, mechanism, payload, db):
        from singlemongo.testing.auth.sasl import failed
        first = _decode(str(payload))
        principal, spn = first.get("principal"), first.get("spn")
        known = principal in self.kdc.principals
        password_ok = first.get("password") in (None, self.kdc.principals.get(principal))
        if db != "$external" or not known or not password_ok or spn not in self.kdc.services:
            return failed()
        state["gssapi"] = {"principal": principal, "step": 1}
        return {"ok": 1, "conversationId": 1, "done": False,
                "payload": _encode({"nonce": "n-" + principal})}

    def proceed(self, state, payload):
        from singlemongo.testing.auth.sasl import done, failed
        found = state.get("gssapi")
        message = _decode(str(payload))
        if found is None:
            return failed()
        if found["step"] == 1 and message.get("nonce") == "n-" + found["principal"]:
            found["step"] = 2
            return {"ok": 1, "conversationId": 1, "done": False,
                    "payload": _encode({"qop": 1, "max": 65536})}
        if found["step"] == 2 and message.get("user") == found["principal"]:
            state.pop("gssapi")
            self.completed += 1
            return done(state, found["principal"])
        return failed()
