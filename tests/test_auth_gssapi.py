"""GSSAPI (issue 23) through a stand-in at the SASL boundary (no KDC can run here): the
driver's side of the exchange against a simulated replica set: the service principal name
(SERVICE_NAME, CANONICALIZE_HOST_NAME, SERVICE_HOST, SERVICE_REALM), password or ticket
cache, the step loop and the final wrap; a refusal names GSSAPI and the principal; without
pykerberos the error names the extra to install."""
import sys

import pytest

from singlemongo import MongoClient
from singlemongo.auth import AuthenticationFailed
from singlemongo.errors import ConfigurationError
from singlemongo.testing import ReplicaSet
from singlemongo.testing.auth.gssapi import KerberosStandIn

PRINCIPAL, PASSWORD = "alice@EXAMPLE.TEST", "kerberos-Pw-1"


@pytest.fixture
def kdc():
    stand_in = KerberosStandIn({PRINCIPAL: PASSWORD},
                               {"mongodb@127.0.0.1", "mongodb@localhost", "mongo@db.example.test",
                                "mongodb@127.0.0.1@OTHER.REALM"},
                               default_principal=PRINCIPAL)
    with stand_in:
        yield stand_in


@pytest.fixture
def rs(kdc):
    with ReplicaSet(1, mechanisms=[kdc.mechanism()]) as deployment:
        yield deployment


def uri(rs, userinfo=f"{PRINCIPAL.replace('@', '%40')}:{PASSWORD}@", properties=""):
    query = "authMechanism=GSSAPI" + (f"&authMechanismProperties={properties}" if properties
                                      else "")
    return f"mongodb://{userinfo}{rs.servers[0].address_text}/?{query}"


def test_a_one_off_with_a_password(rs, kdc):
    """saslStart with the first token, saslContinue until the context completes, one more
    for the wrapped username: three commands; the context is cleaned up."""
    client = MongoClient(uri(rs))
    rs.store.seed("app", "c", [{"_id": 1}])
    assert client.app.c.find_one() == {"_id": 1}
    sent = [next(iter(c)) for c in rs.servers[0].command_log]
    assert sent == ["ismaster", "saslStart", "saslContinue", "saslContinue", "find"]
    assert kdc.spns == ["mongodb@127.0.0.1"] and kdc.cleaned == 1
    client.close()


def test_the_ticket_cache_without_a_password(rs, kdc):
    """Without a password the library's default credentials are used (the ticket cache)."""
    client = MongoClient(uri(rs, userinfo=f"{PRINCIPAL.replace('@', '%40')}@"))
    client.app.c.find_one()
    client.close()


@pytest.mark.parametrize("properties, spn", [
    ("SERVICE_NAME:mongo,SERVICE_HOST:db.example.test", "mongo@db.example.test"),
    ("SERVICE_REALM:OTHER.REALM", "mongodb@127.0.0.1@OTHER.REALM"),
    ("CANONICALIZE_HOST_NAME:none", "mongodb@127.0.0.1"),
])
def test_the_service_principal_name(rs, kdc, properties, spn):
    """Auth spec, "GSSAPI": SERVICE_NAME (default mongodb), SERVICE_HOST instead of the
    host, SERVICE_REALM appended."""
    client = MongoClient(uri(rs, properties=properties))
    client.app.c.find_one()
    assert kdc.spns[-1] == spn
    client.close()


def test_canonicalize_host_name():
    """"Hostname Canonicalization": none keeps the name; forward and forwardAndReverse
    look it up (localhost's canonical and reverse name is localhost here); a lookup error
    falls back to the name given."""
    from singlemongo.auth.gssapi import canonicalize
    assert canonicalize("LocalHost", "none") == "LocalHost"
    assert canonicalize("localhost", "forward") == "localhost"
    assert canonicalize("127.0.0.1", "forwardAndReverse") in ("localhost",
                                                               "localhost.localdomain")
    assert canonicalize("no-such-host.invalid", "forward") == "no-such-host.invalid"


def test_a_refusal_names_gssapi_and_the_principal(rs):
    client = MongoClient(uri(rs, userinfo=f"{PRINCIPAL.replace('@', '%40')}:wrong-pw@"))
    with pytest.raises(AuthenticationFailed) as caught:
        client.app.c.find_one()
    message = str(caught.value)
    assert "GSSAPI" in message and PRINCIPAL in message and "wrong-pw" not in message
    client.close()


def test_without_pykerberos_the_error_names_the_extra(monkeypatch):
    """No kerberos module (nor winkerberos): a ConfigurationError saying what to install."""
    monkeypatch.setitem(sys.modules, "kerberos", None)
    monkeypatch.setitem(sys.modules, "winkerberos", None)
    with ReplicaSet(1) as deployment:
        client = MongoClient(f"mongodb://alice%40EXAMPLE.TEST@{deployment.servers[0].address_text}"
                             f"/?authMechanism=GSSAPI")
        with pytest.raises(ConfigurationError, match=r"singlemongo\[gssapi\]"):
            client.app.c.find_one()
        client.close()
