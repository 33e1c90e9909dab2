"""Secrets (issue 12): no configuration error contains the password, whatever the mistake, and
no frame that can raise holds the password, the salted password, the client key or the proof
in a local variable that a traceback with locals (pytest -l), an error tracker or a debugger
would show."""
import base64
import hashlib
import hmac
import os

import pytest

import singlemongo
from singlemongo import errors
from singlemongo.auth import AuthenticationFailed
from singlemongo.auth import scram
from singlemongo.client import MongoClient
from singlemongo.clock import FakeClock
from singlemongo.options.client_options import client_options
from singlemongo.testing import ReplicaSet
from singlemongo.testing.auth.scram_server import ITERATIONS

PASSWORD = "Zq9xK7wPv4"


def _chain(exc):
    """The exceptions a traceback display walks: the cause, else the unsuppressed context."""
    seen = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
    return seen


# The installed package's own directory: a checkout cloned as "singlemongo" has the tests'
# files under a "/singlemongo/" path too (issue 49), so the path alone decides nothing.
_PACKAGE_DIR = os.path.dirname(singlemongo.__file__) + os.sep


def _driver_frames(exc):
    for e in _chain(exc):
        tb = e.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename.startswith(_PACKAGE_DIR):
                yield tb.tb_frame
            tb = tb.tb_next


def _shown(value, depth=2):
    """What an error tracker shows of a local: its repr, and for the driver's own objects
    their attributes, two levels down."""
    yield repr(value)
    if depth and type(value).__module__.startswith("singlemongo"):
        attrs = getattr(value, "__dict__", None) or {
            name: getattr(value, name) for name in getattr(value, "__slots__", ())
            if hasattr(value, name)}
        for attr in attrs.values():
            yield from _shown(attr, depth - 1)


def _leaks(exc, secrets):
    """(frame, local, secret name) for every secret a driver frame shows in a local."""
    found = []
    for frame in _driver_frames(exc):
        for name, value in frame.f_locals.items():
            for text in _shown(value):
                found += [(frame.f_code.co_name, name, what) for what, secret in secrets.items()
                          if secret in text]
    return found


def _forms(what, raw):
    """A binary secret as a traceback could show it: repr, hex and base64."""
    return {f"{what} (repr)": repr(raw)[2:-1], f"{what} (hex)": raw.hex(),
            f"{what} (base64)": base64.b64encode(raw).decode()}


BROKEN_URIS = {
    "a mistyped scheme": f"mongdb://alice:{PASSWORD}@h1:27017",
    "leading whitespace": f"  mongodb://alice:{PASSWORD}@h1:27017",
    "a leading newline": f"\nmongodb://alice:{PASSWORD}@h1:27017",
    "an unencoded @ in the password": "mongodb://alice:Zq9x@K7wPv4@h1:27017",
    "an unencoded / in the password": "mongodb://alice:Zq9x/K7wPv4@h1:27017",
    "an unencoded ? in the password": "mongodb://alice:Zq9x?K7wPv4@h1:27017",
    "an unencoded : in the password": "mongodb://alice:Zq9x:K7wPv4@h1:27017",
    "a bad percent escape": "mongodb://alice:Zq9x%zzK7wPv4@h1:27017",
    "no host": f"mongodb://alice:{PASSWORD}@",
    "a bad port": f"mongodb://alice:{PASSWORD}@h1:99999",
    "srv with a port": f"mongodb+srv://alice:{PASSWORD}@h1.example.com:27017",
    "a bad database name": f"mongodb://alice:{PASSWORD}@h1/a b",
    "an unknown mechanism": f"mongodb://alice:{PASSWORD}@h1/?authMechanism=NOPE",
    "X.509 with a password": f"mongodb://alice:{PASSWORD}@h1/?authMechanism=MONGODB-X509",
    "conflicting tls options": f"mongodb://alice:{PASSWORD}@h1/?tls=true&ssl=false",
    "no scheme at all": f"alice:{PASSWORD}@h1:27017",
}


@pytest.mark.parametrize("uri", BROKEN_URIS.values(), ids=BROKEN_URIS.keys())
def test_a_configuration_error_never_shows_the_password(uri):
    """Whatever the mistake, the error's message, its repr and the locals of every driver frame
    it passed through hold no piece of the password. Before: the mistyped scheme, the unencoded
    '@', '/' and '?' and the bad port each quoted part of it."""
    with pytest.raises(errors.ConfigurationError) as info:
        MongoClient(uri, clock=FakeClock())
    pieces = {p: p for p in ("Zq9x", "K7wPv4", PASSWORD)}
    assert not [p for p in pieces if p in str(info.value) or p in repr(info.value)], \
        str(info.value)
    assert _leaks(info.value, pieces) == []


def test_configuration_errors_still_name_the_problem():
    """Redaction keeps the message actionable: the part that is wrong and a hint."""
    with pytest.raises(errors.InvalidURI, match="percent-encode"):
        client_options("mongodb://alice:Zq9x/K7wPv4@h1:27017")
    with pytest.raises(errors.InvalidURI, match="starts with whitespace"):
        client_options(" mongodb://h1")
    # A mistyped scheme gets PyMongo's words exactly (programs compare them), which hold no
    # piece of the string.
    with pytest.raises(errors.InvalidURI, match=r"^Invalid URI scheme: URI must begin with"):
        client_options(f"mongdb://alice:{PASSWORD}@h1")


@pytest.fixture(scope="module")
def deployment():
    with ReplicaSet(1, users={"alice": PASSWORD}) as rs:
        yield rs


@pytest.fixture
def secrets(deployment, monkeypatch):
    """Every secret of alice's SCRAM-SHA-256 login, the proof included (recorded as sent)."""
    salt = deployment.users.users["alice"]["SCRAM-SHA-256"][0]
    salted = hashlib.pbkdf2_hmac("sha256", PASSWORD.encode(), salt, ITERATIONS["SCRAM-SHA-256"])
    client_key = hmac.digest(salted, b"Client Key", "sha256")
    found = {"password": PASSWORD, **_forms("salted password", salted),
             **_forms("client key", client_key)}
    real = scram.Conversation.final_message

    def recording(self, server_first, password):
        final = real(self, server_first, password)
        proof = bytes(final).decode().rpartition(",p=")[2]
        found["proof"] = proof
        found.update(_forms("proof", base64.b64decode(proof)))
        return final
    monkeypatch.setattr(scram.Conversation, "final_message", recording)
    return found


def _uri(deployment, user="alice", password=PASSWORD, extra=""):
    from urllib.parse import quote_plus
    return (f"mongodb://{user}:{quote_plus(password)}@{deployment.servers[0].address_text}/"
            f"?replicaSet=rs{extra}")


def _raise_through_auth(client):
    with pytest.raises(BaseException) as info:
        client.test.c.find_one()
    client.close()
    return info.value


def test_a_wrong_password_leaves_no_secret_in_any_frame(deployment, secrets):
    """The server refuses the proof: AuthenticationFailed, and no driver frame on its way out
    shows the password, salted password, client key or proof."""
    exc = _raise_through_auth(MongoClient(_uri(deployment, password=PASSWORD + "x"),
                                          clock=FakeClock()))
    assert isinstance(exc, AuthenticationFailed)
    assert _leaks(exc, {k: v for k, v in secrets.items() if k == "password"}) == []


def test_an_interrupt_inside_the_key_derivation_leaves_no_secret(deployment, secrets,
                                                                 monkeypatch):
    """A KeyboardInterrupt while the keys are derived (the frames that hold them are live).
    Before: the salted password and the client key were plain bytes in those frames."""
    real = scram.hmac.digest

    def interrupted(key, msg, digest):
        if msg == b"Server Key":
            raise KeyboardInterrupt
        return real(key, msg, digest)
    monkeypatch.setattr(scram.hmac, "digest", interrupted)
    exc = _raise_through_auth(MongoClient(_uri(deployment), clock=FakeClock()))
    assert isinstance(exc, KeyboardInterrupt)
    assert _leaks(exc, secrets) == []


@pytest.mark.parametrize("fault", [
    {"action": "close"},
    {"action": "hang"},
    {"action": "error", "extra": {"ok": 1, "done": True, "payload": b"v=AAAA"}},
    {"action": "error", "extra": {"ok": 1, "done": True, "payload": b"e=other-error"}},
], ids=["connection closed", "timeout", "wrong server signature", "server error field"])
def test_a_failed_sasl_continue_leaves_no_secret(deployment, secrets, fault):
    """The reply to the proof fails in each way it can: the message that carried the proof, and
    every frame it passed through, show no secret. Before: the encoded message was plain bytes
    in the send and receive frames."""
    deployment.servers[0].fail("saslContinue", **fault)
    client = MongoClient(_uri(deployment, extra="&connectTimeoutMS=300&retryReads=false"))
    exc = _raise_through_auth(client)
    deployment.servers[0].clear_faults()
    assert isinstance(exc, (AuthenticationFailed, errors.ConnectionFailure))
    assert "proof" in secrets
    assert _leaks(exc, secrets) == []


def test_a_password_saslprep_refuses_is_an_authentication_failure_without_it(deployment):
    """A password with a character SASLprep prohibits: AuthenticationFailed naming the rule,
    and the frames that prepared it show no password."""
    password = "\u0007" + PASSWORD
    exc = _raise_through_auth(MongoClient(_uri(deployment, "alice", password),
                                          clock=FakeClock()))
    assert isinstance(exc, AuthenticationFailed) and "SASLprep" in str(exc)
    assert _leaks(exc, {"password": PASSWORD}) == []


def test_a_successful_login_still_works_with_secrets_kept_redacted(deployment):
    """The redacted types are the values they hold: authentication with them succeeds."""
    client = MongoClient(_uri(deployment), clock=FakeClock())
    assert client.test.c.find_one() is None
    assert PASSWORD not in repr(client) and PASSWORD not in repr(client.options)
    client.close()


def test_get_client_tells_clients_apart_by_secret_options():
    """Redacted reprs must not merge cache keys: two different proxy passwords are two
    clients (the key compares the values, whose repr is redacted)."""
    from singlemongo import client_cache, get_client
    a = get_client("mongodb://h1", proxyHost="p", proxyUsername="u", proxyPassword="pw-1-Qx7")
    b = get_client("mongodb://h1", proxyHost="p", proxyUsername="u", proxyPassword="pw-2-Qx7")
    assert a is not b
    assert a is get_client("mongodb://h1", proxyHost="p", proxyUsername="u", proxyPassword="pw-1-Qx7")
    assert "Qx7" not in repr(client_cache._key("mongodb://h1", {"proxyPassword": "pw-1-Qx7",
                                                               "proxyHost": "p",
                                                               "proxyUsername": "u"}))
    a.close()
    b.close()


def test_a_client_repr_names_no_credential_and_redacts_sensitive_options():
    """Connection string spec, "Credential disclosure" (prose test): the representation of a
    client made from a connection string includes neither the username, the password, nor
    a sensitive option's argument, which shows as a fixed marker."""
    import warnings

    import singlemongo
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        client = singlemongo.MongoClient(
            "mongodb://SENTINELuser5678:SENTINELpassword1234@localhost:27017/db"
            "?tlsCertificateKeyFilePassword=SENTINELpassword1234")
    for text in (repr(client), str(client), repr(client.options)):
        assert "sentinel" not in text.lower(), text
    assert "tlscertificatekeyfilepassword='<redacted>'" in repr(client)  # PyMongo's form
    assert client.options.credentials.username == "SENTINELuser5678"
