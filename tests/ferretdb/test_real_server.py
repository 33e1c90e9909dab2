"""singlemongo against FerretDB's own implementation of the handshake, SCRAM and TLS, with
PyMongo on the same instance as the control: the same outcome, and what crosses the wire
(seen through a relay, tests/ferretdb/relay.py) as the specifications say."""
import pymongo
import pytest

import singlemongo

from .relay import OP_MSG, OP_QUERY, Relay

DRIVERS = {"pymongo": pymongo, "singlemongo": singlemongo}


def _client(driver, uri, **options):
    if driver == "pymongo":
        options.setdefault("serverMonitoringMode", "poll")
    return DRIVERS[driver].MongoClient(uri, serverSelectionTimeoutMS=3000, **options)


def _outcome(driver, uri, call=lambda c: c.admin.command("ping")["ok"], **options):
    """What ``call`` gives with ``driver``'s client: its value, or its error's class names
    and code."""
    client = _client(driver, uri, **options)
    try:
        return call(client)
    except Exception as exc:  # noqa: BLE001 -- the outcome is the error
        return {"error": [k.__name__ for k in type(exc).__mro__], "code": getattr(exc, "code", None),
                "text": str(exc)}
    finally:
        client.close()


def _relay_uri(relay, server, **options):
    host, port = relay.address
    return server.uri(host=host, **options).replace(
        f"{server.address[0]}:{server.address[1]}", f"{host}:{port}")


# ----- the handshake --------------------------------------------------------------------

def test_the_handshake_is_one_hello_with_client_metadata(ferretdb):
    """Handshake spec: the first message on a connection is the hello (legacy OP_QUERY
    ``hello``/``isMaster`` with ``helloOk``, or OP_MSG ``hello``) with the client metadata;
    FerretDB answers it as a standalone of wire version 21 (7.0)."""
    with Relay(ferretdb.address) as relay:
        with singlemongo.MongoClient(_relay_uri(relay, ferretdb, auth=False)) as client:
            description = client.admin.command("hello")
    first = relay.sent[0]
    assert first[0] in (OP_QUERY, OP_MSG) and first[1] in ("hello", "isMaster", "ismaster")
    assert "client" in first[2] and "helloOk" in first[2]
    assert description["maxWireVersion"] == 21 and description["isWritablePrimary"] is True


@pytest.mark.parametrize("driver", DRIVERS)
def test_without_credentials_a_command_is_refused_as_unauthorized(ferretdb, driver):
    """FerretDB's new authentication answers a hello before authentication and refuses any
    other command (Unauthorized, 13); both drivers raise OperationFailure with that code."""
    outcome = _outcome(driver, ferretdb.uri(auth=False), lambda c: c.db.c.find_one())
    assert "OperationFailure" in outcome["error"] and outcome["code"] == 13


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-1", "SCRAM-SHA-256", None])
def test_speculative_authentication_is_offered_and_its_refusal_handled_as_pymongo(
        ferretdb, mechanism):
    """Authentication spec, speculative authentication: the hello of a client with
    credentials carries the first SCRAM message. FerretDB v1.24 answers it only in a legacy
    OP_QUERY hello (its handler's cmd_query.go); both drivers send OP_MSG, so its reply has no
    speculativeAuthenticate and the driver must run the whole conversation: saslStart, then
    saslContinue until done. singlemongo's conversation is PyMongo's, message for message."""
    options = {"authMechanism": mechanism} if mechanism else {}
    conversations = {}
    for driver in DRIVERS:
        with Relay(ferretdb.address) as relay:
            assert _outcome(driver, _relay_uri(relay, ferretdb, **options)) == 1.0
        # PyMongo's monitor has a connection of its own: the authenticated one's hello is the
        # one with speculativeAuthenticate; the conversation goes from there.
        at = next(i for i, (_, name, fields) in enumerate(relay.sent)
                  if "speculativeAuthenticate" in fields)
        conversations[driver] = [(op, name) for op, name, _ in relay.sent[at:]
                                 if name in ("hello", "isMaster", "ismaster", "saslStart",
                                             "saslContinue")]
        assert [n for _, n in conversations[driver]][1:] == [
            "saslStart", "saslContinue", "saslContinue"], driver
    assert conversations["singlemongo"] == conversations["pymongo"]


def test_a_client_without_credentials_offers_no_authentication(ferretdb):
    """Without credentials the hello carries neither speculativeAuthenticate nor
    saslSupportedMechs, and nothing of SASL follows."""
    with Relay(ferretdb.address) as relay:
        assert _outcome("singlemongo", _relay_uri(relay, ferretdb, auth=False),
                        lambda c: c.admin.command("hello")["ok"]) == 1.0
    assert not any("speculativeAuthenticate" in f or "saslSupportedMechs" in f
                   for _, _, f in relay.sent)
    assert not {"saslStart", "saslContinue"} & set(relay.names())


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-1", "SCRAM-SHA-256"])
@pytest.mark.parametrize("driver", DRIVERS)
def test_scram_mechanisms_authenticate(ferretdb, driver, mechanism):
    """FerretDB's SCRAM-SHA-1 and SCRAM-SHA-256 (its experimental authentication) accept the
    setup user with either mechanism."""
    uri = ferretdb.uri(authMechanism=mechanism)
    assert _outcome(driver, uri, lambda c: c.admin.command("connectionStatus")["authInfo"][
        "authenticatedUsers"]) == [{"user": ferretdb.user, "db": "admin"}]


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-1", "SCRAM-SHA-256", None])
def test_a_wrong_password_fails_as_pymongo_and_is_never_shown(ferretdb, mechanism):
    """A wrong password: both drivers raise OperationFailure AuthenticationFailed (18), and
    the password is in no error text."""
    options = {"authMechanism": mechanism} if mechanism else {}
    wrong = "not-" + ferretdb.password
    uri = ferretdb.uri(**options).replace(ferretdb.password, wrong)
    outcomes = {d: _outcome(d, uri) for d in DRIVERS}
    for driver, outcome in outcomes.items():
        assert "OperationFailure" in outcome["error"] and outcome["code"] == 18, driver
    assert wrong not in outcomes["singlemongo"]["text"]
    assert "OperationFailure" in outcomes["singlemongo"]["error"]


# ----- TLS --------------------------------------------------------------------------------

def _tls_case(ferretdb, host, **options):
    """Both drivers' outcomes of a ping over the TLS listener at ``host``."""
    uri = ferretdb.uri(tls=True, host=host, **options)
    return {d: _outcome(d, uri) for d in DRIVERS}


def _connects(outcome):
    return outcome == 1.0


@pytest.mark.parametrize("host, options, connects", [
    ("localhost", {}, True),  # the throwaway CA, the name on the certificate
    ("localhost", {"tlsCAFile": "OTHER"}, False),  # only the named CA is trusted
    ("localhost", {"tlsCAFile": None}, False),  # the system store does not have the CA
    ("127.0.0.1", {}, False),  # the certificate names localhost only
    ("127.0.0.1", {"tlsAllowInvalidHostnames": "true"}, True),
    ("localhost", {"tlsCAFile": "OTHER", "tlsAllowInvalidCertificates": "true"}, True),
    ("127.0.0.1", {"tlsCAFile": "OTHER", "tlsInsecure": "true"}, True),
], ids=["trusted", "another CA", "system store", "wrong name", "names not checked",
        "certificates not checked", "insecure"])
@pytest.mark.filterwarnings("ignore:TLS is weakened")  # the rows that turn checks off
def test_tls_trusts_only_the_named_ca_and_checks_the_name_as_pymongo(ferretdb, host, options,
                                                                      connects):
    """TLS trust is what the user names (DESIGN.md): with tlsCAFile only that CA; the host
    name is checked against the certificate unless checks are turned off; PyMongo agrees on
    every row, against FerretDB's own TLS listener."""
    options = {k: ferretdb.other_ca_file if v == "OTHER" else v for k, v in options.items()}
    if options.get("tlsCAFile", "") is None:
        options.pop("tlsCAFile")
        uri = ferretdb.uri(tls=True, host=host).replace(f"&tlsCAFile={ferretdb.ca_file}", "")
        outcomes = {d: _outcome(d, uri) for d in DRIVERS}
    else:
        outcomes = _tls_case(ferretdb, host, **options)
    assert {d: _connects(o) for d, o in outcomes.items()} == {d: connects for d in DRIVERS}
    if not connects:
        text = outcomes["singlemongo"]["text"]
        assert "ServerSelectionTimeoutError" in outcomes["singlemongo"]["error"]
        assert "certificate" in text.lower() or "hostname" in text.lower(), text


def test_tls_and_scram_together_authenticate_over_one_connection(ferretdb):
    """The production path: TLS with SCRAM-SHA-256, one connection, the user authenticated."""
    with singlemongo.MongoClient(ferretdb.uri(tls=True, authMechanism="SCRAM-SHA-256")) as c:
        status = c.admin.command("connectionStatus")
        assert status["authInfo"]["authenticatedUsers"][0]["user"] == ferretdb.user
