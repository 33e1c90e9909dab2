"""Authentication mechanisms beyond SCRAM and X.509 (issue 23), each against a simulated
replica set that verifies it: a one-off find_one counted in connections and commands next to
SCRAM's, wrong credentials refused with AuthenticationFailed naming the mechanism and the
user, and no secret in any message, log line or command event (searched for)."""
import logging

import pytest

from singlemongo import MongoClient
from singlemongo.auth import AuthenticationFailed
from singlemongo.testing import ReplicaSet
from singlemongo.testing.auth.sasl import Plain

from .util import EventTexts, one_off_cost

SECRET = "s3cret-Plain-pw"


@pytest.fixture(scope="module")
def auth_rs():
    with ReplicaSet(3, users={"alice": SECRET}, mechanisms=[Plain({"ldapuser": SECRET})]) as rs:
        yield rs


def hosts(rs):
    return ",".join(s.address_text for s in rs.servers)


def test_a_plain_one_off_costs_one_command_more_than_scram(auth_rs):
    """PLAIN has no speculative form (auth spec): the handshake, then one saslStart that
    completes it; SCRAM's speculative handshake needs one saslContinue. Same connections,
    same number of commands."""
    scram_doc, scram = one_off_cost(auth_rs, f"mongodb://alice:{SECRET}@{hosts(auth_rs)}/"
                                        f"?replicaSet=rs")
    plain_doc, plain = one_off_cost(auth_rs, f"mongodb://ldapuser:{SECRET}@{hosts(auth_rs)}/"
                                        f"?replicaSet=rs&authMechanism=PLAIN")
    assert scram_doc == plain_doc == {"_id": 1}
    assert plain == scram
    primary = auth_rs.primary
    assert [c for c in primary.command_log if "saslStart" in c][0]["$db"] == "$external"


@pytest.mark.parametrize("user, password", [("ldapuser", "wrong-pw"), ("nobody", SECRET)])
def test_wrong_plain_credentials_name_the_mechanism_and_user_and_no_secret(auth_rs, caplog,
                                                                             user, password):
    """AuthenticationFailed names PLAIN and the user; the password is nowhere: not in the
    error, not in a log line, not in a command event (auth commands are redacted)."""
    auth_rs.reset()
    listener = EventTexts()
    client = MongoClient(f"mongodb://{user}:{password}@{hosts(auth_rs)}/?replicaSet=rs"
                         f"&authMechanism=PLAIN", event_listeners=[listener])
    with caplog.at_level(logging.DEBUG), pytest.raises(AuthenticationFailed) as caught:
        client.app.c.find_one()
    message = str(caught.value)
    assert "PLAIN" in message and repr(user) in message
    for text in [message, repr(caught.value.details), caplog.text, *listener.seen]:
        assert password not in text and SECRET not in text
    client.close()


def test_plain_credentials_with_a_nul_are_refused_before_connecting():
    """RFC 4616: NUL separates PLAIN's fields (a ConfigurationError, no I/O)."""
    from singlemongo.errors import ConfigurationError
    with pytest.raises(ConfigurationError, match="NUL"):
        MongoClient("mongodb://user:pass%00word@localhost/?authMechanism=PLAIN")


@pytest.mark.parametrize("fault", [{"action": "close"}, {"action": "hang"}],
                         ids=["connection closed", "timeout"])
def test_a_failed_plain_start_leaves_no_secret_in_any_frame(auth_rs, fault):
    """The saslStart that carries the password fails: no driver frame on the way out shows
    it (the payload is SecretBytes, the password SecretText)."""
    from .test_secrets import _leaks
    auth_rs.reset()
    auth_rs.primary.fail("saslStart", **fault)
    client = MongoClient(f"mongodb://ldapuser:{SECRET}@{hosts(auth_rs)}/?replicaSet=rs"
                         f"&authMechanism=PLAIN&connectTimeoutMS=300&retryReads=false")
    with pytest.raises(BaseException) as caught:
        client.app.c.find_one()
    client.close()
    auth_rs.primary.clear_faults()
    assert _leaks(caught.value, {"password": SECRET}) == []


def test_the_plugin_offers_a_deployment_with_a_user_of_each_mechanism(mongo_authenticated):
    """The pytest plugin's ``mongo_authenticated``: one connection string per mechanism,
    each of which logs in; a wrong password is refused for each."""
    assert set(mongo_authenticated.mechanisms) >= {"SCRAM-SHA-256", "PLAIN", "MONGODB-AWS",
                                                   "MONGODB-OIDC", "GSSAPI"}
    for mechanism in mongo_authenticated.mechanisms:
        with mongo_authenticated.kerberos:  # GSSAPI's client side (a no-op for the others)
            client = MongoClient(mongo_authenticated.uri_for(mechanism),
                                 **mongo_authenticated.options_for(mechanism))
            assert client.admin.command("ping")["ok"] == 1, mechanism
            assert client.app.c.insert_one({"by": mechanism}).acknowledged
            client.close()
            if mechanism == "MONGODB-OIDC":
                continue  # no password to get wrong (tests/test_auth_oidc.py refuses tokens)
            wrong = mongo_authenticated.uri_for(mechanism).replace("-1@", "-2@")
            client = MongoClient(wrong)
            with pytest.raises(AuthenticationFailed, match=mechanism):
                client.app.c.find_one()
            client.close()


def test_each_mechanisms_one_off_cost_next_to_scrams(mongo_authenticated):
    """A one-off find_one with each mechanism on a 3-member replica set: the same
    connections as SCRAM's (one per member: the scan, then the primary's is used), and the
    commands on the primary: SCRAM and OIDC (its first connection has no cached token, so
    no speculation) and PLAIN one command after the handshake, MONGODB-AWS two."""
    costs = {}
    for mechanism in ("SCRAM-SHA-256", "PLAIN", "MONGODB-AWS", "MONGODB-OIDC"):
        mongo_authenticated.reset()
        client = MongoClient(mongo_authenticated.uri_for(mechanism),
                             **mongo_authenticated.options_for(mechanism))
        client.app.c.find_one()
        client.close()
        primary = mongo_authenticated.primary
        costs[mechanism] = ([s.connections for s in mongo_authenticated.servers],
                            [n for n in (next(iter(c)) for c in primary.command_log)
                             if n not in ("endSessions",)])
    for mechanism, (connections, _) in costs.items():
        assert connections == costs["SCRAM-SHA-256"][0], mechanism
    assert costs["SCRAM-SHA-256"][1] == ["ismaster", "saslContinue", "find"]
    assert costs["PLAIN"][1] == ["ismaster", "saslStart", "find"]
    assert costs["MONGODB-OIDC"][1] == ["ismaster", "saslStart", "find"]
    assert costs["MONGODB-AWS"][1] == ["ismaster", "saslStart", "saslContinue", "find"]


def test_a_one_off_loads_no_other_mechanism_or_compressor():
    """Every new dependency is imported only when used: a SCRAM one-off (and a plain one)
    loads no module of PLAIN, AWS, OIDC or GSSAPI, no http.client, no snappy or zstandard."""
    import subprocess
    import sys
    program = """
import sys
from singlemongo.testing import ReplicaSet
from singlemongo import MongoClient
with ReplicaSet(1, users={"u": "pw"}) as rs:
    MongoClient(f"mongodb://u:pw@{rs.servers[0].address_text}/").app.c.find_one()
    MongoClient(rs.uri.replace("mongodb://", "mongodb://u:pw@")).app.c.find_one()
names = ("singlemongo.auth.plain", "singlemongo.auth.aws", "singlemongo.auth.oidc",
         "singlemongo.auth.gssapi", "singlemongo.auth.http", "singlemongo.auth_oidc",
         "snappy", "zstandard", "kerberos", "http.client")
print(",".join(n for n in names if n in sys.modules))
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ""


def test_pymongo_logs_in_with_plain_on_the_same_deployment(auth_rs):
    """The control: PyMongo's PLAIN against the simulated server, as singlemongo's."""
    import pymongo
    auth_rs.reset()
    auth_rs.store.seed("app", "c", [{"_id": 1}])
    uri = f"mongodb://ldapuser:{SECRET}@{hosts(auth_rs)}/?replicaSet=rs&authMechanism=PLAIN"
    control, ours = pymongo.MongoClient(uri), MongoClient(uri)
    assert control.app.c.find_one() == ours.app.c.find_one() == {"_id": 1}
    control.close()
    ours.close()
