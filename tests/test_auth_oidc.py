"""MONGODB-OIDC (issue 23) against a simulated replica set whose server checks tokens of a
test identity provider (HS256, expiring): the machine flow (callback and the built-in
environments), the human flow (two steps, refresh token, ALLOWED_HOSTS), the client's token
cache and speculative authentication, and reauthentication on error 391 under a frozen
clock (one reauthentication, one re-attempt). No token in any message, log or event."""
import logging

import pytest
from freezegun import freeze_time

from singlemongo import MongoClient
from singlemongo.auth import AuthenticationFailed
from singlemongo.auth_oidc import OIDCCallback, OIDCCallbackResult
from singlemongo.errors import ConfigurationError, OperationFailure
from singlemongo.testing import ReplicaSet
from singlemongo.testing.auth.oidc import Oidc, OidcIssuer, OidcMetadata

from .util import EventTexts

AUDIENCE = "api://simulated-audience"


@pytest.fixture(scope="module")
def issuer():
    return OidcIssuer(audience=AUDIENCE)


@pytest.fixture(scope="module")
def server_side(issuer):
    return Oidc(issuer)


@pytest.fixture(scope="module")
def oidc_rs(server_side):
    with ReplicaSet(3, mechanisms=[server_side]) as rs:
        yield rs


@pytest.fixture
def rs(oidc_rs):
    return oidc_rs.reset()


class Callback(OIDCCallback):
    """A machine callback that records its contexts and gives the issuer's tokens."""

    def __init__(self, issuer, lifetime_s=3600, refresh=None):
        self.issuer, self.lifetime_s, self.refresh = issuer, lifetime_s, refresh
        self.contexts = []

    def fetch(self, context):
        self.contexts.append(context)
        return OIDCCallbackResult(access_token=self.issuer.token("app-user", self.lifetime_s),
                                  refresh_token=self.refresh)


def hosts(rs):
    return ",".join(s.address_text for s in rs.servers)


def client_for(rs, clock=None, username="", **properties):
    uri = f"mongodb://{username}{hosts(rs)}/?replicaSet=rs&authMechanism=MONGODB-OIDC"
    options = {"authMechanismProperties": properties} if properties else {}
    if clock is not None:
        options["clock"] = clock
    return MongoClient(uri, **options)


def names(server):
    return [next(iter(c)) for c in server.command_log]


def test_a_machine_callback_one_off_costs_one_command_after_the_handshake(rs, issuer):
    """One-step conversation: hello, saslStart with the callback's token, find. The
    callback gets API version 1, the username and a timeout of at most a minute."""
    callback = Callback(issuer)
    client = client_for(rs, username="app-user@", OIDC_CALLBACK=callback)
    rs.store.seed("app", "c", [{"_id": 1}])
    assert client.app.c.find_one() == {"_id": 1}
    assert names(rs.primary) == ["ismaster", "saslStart", "find"]
    (context,) = callback.contexts
    assert context.version == 1 and context.username == "app-user"
    assert 0 < context.timeout_seconds <= 60
    client.close()


def test_the_client_cache_and_speculative_authentication(rs, issuer):
    """A new connection of the same client carries the cached token in its handshake and
    needs no saslStart; the callback is not called again."""
    callback = Callback(issuer)
    client = client_for(rs, OIDC_CALLBACK=callback)
    client.app.c.find_one()
    rs.primary.fail("find", action="close")  # the connection goes; a retry opens another
    client.app.c.find_one()
    handshakes = [c for c in rs.primary.command_log if "ismaster" in c]
    assert len(handshakes) == 2 and "speculativeAuthenticate" in handshakes[1]
    assert names(rs.primary).count("saslStart") == 1
    assert len(callback.contexts) == 1
    client.close()


def test_a_rejected_cached_token_is_invalidated_and_fetched_again(rs, issuer):
    """"Authentication": a cached token the server refuses (error 18, here after the IdP
    rotated its key) is invalidated, and the callback gives a new one."""
    callback = Callback(issuer)
    client = client_for(rs, OIDC_CALLBACK=callback)
    client.app.c.find_one()
    key = issuer.key
    issuer.key = b"rotated-key" * 3
    try:
        rs.primary.fail("find", action="close")
        client.app.c.find_one()
    finally:
        issuer.key = key
    assert len(callback.contexts) == 2
    client.close()


def test_an_expired_token_is_reauthenticated_once_under_a_frozen_clock(oidc_rs):
    """Auth spec, "Reauthentication": the token expires while time is frozen (freezegun,
    moved by hand); the server answers 391; the driver runs the SASL conversation again
    on the same connection (no hello), with a new token, and re-attempts the find once."""
    with freeze_time("2026-11-24 12:00:00") as frozen:
        issuer = OidcIssuer(audience=AUDIENCE)
        with ReplicaSet(1, mechanisms=[Oidc(issuer)]) as rs:
            callback = Callback(issuer, lifetime_s=300)
            client = client_for(rs, OIDC_CALLBACK=callback)
            client.app.c.insert_one({"_id": 1})
            frozen.tick(301)
            assert client.app.c.find_one() == {"_id": 1}
            sent = [n for n in names(rs.primary) if n != "hello"]  # the inline checks aside
            assert sent == ["ismaster", "saslStart", "insert", "find", "saslStart", "find"]
            assert len(callback.contexts) == 2
            assert rs.servers[0].connections == 1
            client.close()


def test_a_second_391_is_raised_not_retried_again(rs, issuer):
    """One reauthentication and one re-attempt per operation: a second 391 is the user's."""
    callback = Callback(issuer)
    client = client_for(rs, OIDC_CALLBACK=callback)
    client.admin.command("ping")
    client.admin.command("configureFailPoint", "failCommand", mode={"times": 2},
                         data={"failCommands": ["find"], "errorCode": 391})
    with pytest.raises(OperationFailure) as caught:
        client.app.c.find_one()
    assert caught.value.code == 391
    assert names(rs.primary).count("find") == 2
    client.close()


@pytest.mark.parametrize("environment", ["test", "k8s"])
def test_the_token_file_environments(rs, issuer, tmp_path, monkeypatch, environment):
    """ENVIRONMENT test (OIDC_TOKEN_FILE) and k8s (AZURE_FEDERATED_TOKEN_FILE, then
    AWS_WEB_IDENTITY_TOKEN_FILE, then the service account's path)."""
    token_file = tmp_path / "token"
    token_file.write_text(issuer.token("file-identity") + "\n")
    variable = "OIDC_TOKEN_FILE" if environment == "test" else "AWS_WEB_IDENTITY_TOKEN_FILE"
    for name in ("OIDC_TOKEN_FILE", "AZURE_FEDERATED_TOKEN_FILE",
                 "AWS_WEB_IDENTITY_TOKEN_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, str(token_file))
    client = client_for(rs, ENVIRONMENT=environment)
    client.app.c.find_one()
    assert names(rs.primary).count("saslStart") == 1
    client.close()


@pytest.mark.parametrize("environment", ["azure", "gcp"])
def test_the_metadata_environments(rs, issuer, environment):
    """ENVIRONMENT azure and gcp ask their metadata endpoint for a token for
    TOKEN_RESOURCE (stand-ins on loopback), once per client (the client caches it)."""
    with OidcMetadata(issuer) as metadata:
        client = client_for(rs, ENVIRONMENT=environment, TOKEN_RESOURCE=AUDIENCE)
        client.app.c.find_one()
        rs.primary.fail("find", action="close")
        client.app.c.find_one()
        assert metadata.requests[environment] == 1
        client.close()


class Human(OIDCCallback):
    def __init__(self, issuer):
        self.issuer, self.contexts = issuer, []

    def fetch(self, context):
        self.contexts.append(context)
        return OIDCCallbackResult(access_token=self.issuer.token("human", 3600),
                                  refresh_token=f"refresh-{len(self.contexts)}")


def test_the_human_flow_two_steps_then_the_refresh_token(rs, issuer, server_side):
    """Two-step conversation: the principal, the IdP's information back, the human
    callback (given it, and no refresh token), the token in saslContinue. When the cached
    token is refused later, the refresh token goes to the callback first."""
    human = Human(issuer)
    client = client_for(rs, username="human@", OIDC_HUMAN_CALLBACK=human)
    client.app.c.find_one()
    assert names(rs.primary)[:3] == ["ismaster", "saslStart", "saslContinue"]
    first = human.contexts[0]
    assert first.idp_info.issuer == issuer.issuer and first.refresh_token is None
    assert first.idp_info.clientId == issuer.client_id and first.timeout_seconds == 300
    client._topology.auth_cache["MONGODB-OIDC"].access_token = "not-a-valid-token"
    rs.primary.fail("find", action="close")
    client.app.c.find_one()
    assert human.contexts[1].refresh_token == "refresh-1"
    assert human.contexts[1].idp_info.issuer == issuer.issuer
    client.close()


def test_allowed_hosts_refuses_before_calling_the_human_callback(rs, issuer):
    """ALLOWED_HOSTS: a host outside the list is a client error; the callback never runs."""
    human = Human(issuer)
    client = client_for(rs, OIDC_HUMAN_CALLBACK=human, ALLOWED_HOSTS=["*.example.com"])
    with pytest.raises(ConfigurationError, match="ALLOWED_HOSTS"):
        client.app.c.find_one()
    assert human.contexts == []
    client.close()


def test_both_callbacks_are_a_configuration_error(issuer):
    with pytest.raises(ConfigurationError, match="OIDC_CALLBACK"):
        MongoClient("mongodb://h/?authMechanism=MONGODB-OIDC", authMechanismProperties={
            "OIDC_CALLBACK": Callback(issuer), "OIDC_HUMAN_CALLBACK": Human(issuer)})


def test_a_refused_token_names_the_mechanism_and_shows_no_token(rs, caplog):
    """A token of another issuer: AuthenticationFailed naming MONGODB-OIDC and the user;
    the token is in no message, log line or command event."""
    stranger = OidcIssuer(audience=AUDIENCE)
    callback = Callback(stranger)
    listener = EventTexts()
    client = MongoClient(f"mongodb://app-user@{hosts(rs)}/?replicaSet=rs"
                         f"&authMechanism=MONGODB-OIDC",
                         authMechanismProperties={"OIDC_CALLBACK": callback},
                         event_listeners=[listener])
    with caplog.at_level(logging.DEBUG), pytest.raises(AuthenticationFailed) as caught:
        client.app.c.find_one()
    assert "MONGODB-OIDC" in str(caught.value) and "'app-user'" in str(caught.value)
    token = client._topology.auth_cache["MONGODB-OIDC"].access_token.reveal()
    for text in [str(caught.value), repr(caught.value.details), caplog.text, repr(client),
                 *listener.seen]:
        assert token not in text and token.split(".")[2] not in text
    client.close()


def test_a_failed_conversation_leaves_no_token_in_any_frame(rs, issuer):
    """The saslStart carrying the token fails (connection closed): no driver frame on the
    way out shows the token (SecretText from the callback's result on)."""
    from .test_secrets import _leaks
    tokens = []

    class Recording(Callback):
        def fetch(self, context):
            result = super().fetch(context)
            tokens.append(result.access_token)
            return result
    rs.primary.fail("saslStart", action="close")
    client = client_for(rs, OIDC_CALLBACK=Recording(issuer))
    with pytest.raises(BaseException) as caught:
        client.app.command("ping")  # not retried (a find_one's retry would authenticate)
    client.close()
    rs.primary.clear_faults()
    assert tokens and _leaks(caught.value, {"token": tokens[0]}) == []


def test_pymongo_authenticates_the_same_way_on_the_same_deployment(rs, issuer):
    """The control: PyMongo 4.20, given the same callback class through its own
    ``pymongo.auth_oidc``, logs in to the simulated server and reads the same document, so
    the server side speaks MONGODB-OIDC as PyMongo expects it."""
    import pymongo
    from pymongo.auth_oidc import OIDCCallback as PyMongoCallback
    from pymongo.auth_oidc import OIDCCallbackResult as PyMongoResult

    class Control(PyMongoCallback):
        def fetch(self, context):
            return PyMongoResult(access_token=issuer.token("app-user"))
    rs.store.seed("app", "c", [{"_id": 1}])
    control = pymongo.MongoClient(f"mongodb://{hosts(rs)}/?replicaSet=rs"
                                  f"&authMechanism=MONGODB-OIDC",
                                  authMechanismProperties={"OIDC_CALLBACK": Control()})
    ours = client_for(rs, OIDC_CALLBACK=Callback(issuer))
    assert control.app.c.find_one() == ours.app.c.find_one() == {"_id": 1}
    control.close()
    ours.close()


@pytest.mark.parametrize("payload", [b"\x05\x00\x00\x00junk", "text", {"issuer": 1}],
                         ids=["not BSON", "a string", "an issuer of the wrong type"])
def test_a_hostile_idp_info_reply_is_an_authentication_failure(rs, issuer, payload):
    """Issue 46: the human flow's first reply (the IdP information) as garbage or with wrong
    field types escaped as a raw InvalidBSON/TypeError and kept the half-authenticated
    socket. It is an AuthenticationFailed naming MONGODB-OIDC, the connection closed, and
    the human callback is never called."""
    from bson import encode

    from singlemongo.auth import AuthenticationFailed
    human = Human(issuer)
    if isinstance(payload, dict):
        payload = encode(payload)
    rs.primary.fail("saslStart", action="error",
                    extra={"ok": 1, "conversationId": 1, "done": False, "payload": payload})
    client = client_for(rs, username="human@", OIDC_HUMAN_CALLBACK=human)
    with pytest.raises(AuthenticationFailed, match="MONGODB-OIDC"):
        client.app.c.find_one()
    conn = client._topology._connections.get(rs.primary.address)
    assert conn is None or conn.closed
    assert human.contexts == []
    rs.primary.clear_faults()
    client.close()
