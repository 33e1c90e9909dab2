"""MONGODB-AWS (issue 23) against a simulated replica set whose server checks the SigV4
signature as STS would, and loopback stand-ins for STS (AssumeRoleWithWebIdentity), the ECS
endpoint and EC2's IMDSv2: credentials from each source in the spec's order, each source's
failure reported, the cache (reused, refreshed before expiry, cleared on failure), the
round trips of a one-off, and no secret in any message, log line or event."""
import logging

import pytest

from singlemongo import MongoClient
from singlemongo.auth import AuthenticationFailed, aws_fetch
from singlemongo.clock import FakeClock
from singlemongo.testing import ReplicaSet
from singlemongo.testing.auth.aws import Aws, AwsEndpoints, AwsKeys

from .util import EventTexts, one_off_cost

KEY, SECRET = "AKIDTESTUSER", "test-Secret-Access-Key-123"
AWS_VARIABLES = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                 "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_ROLE_SESSION_NAME",
                 "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")


@pytest.fixture(scope="module")
def keys():
    return AwsKeys({KEY: SECRET, "ASIATEMP": (SECRET, "a-session-token")})


@pytest.fixture(scope="module")
def aws_rs(keys):
    with ReplicaSet(3, users={"alice": "scram-pw"}, mechanisms=[Aws(keys)]) as rs:
        yield rs


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in AWS_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    aws_fetch.clear()
    yield
    aws_fetch.clear()


@pytest.fixture
def endpoints(keys):
    with AwsEndpoints(keys) as stand_ins:
        yield stand_ins


def hosts(rs):
    return ",".join(s.address_text for s in rs.servers)


def aws_uri(rs, userinfo=""):
    return f"mongodb://{userinfo}{hosts(rs)}/?replicaSet=rs&authMechanism=MONGODB-AWS"


def one_off(rs, uri, clock=None):
    return one_off_cost(rs, uri, **({"clock": clock} if clock else {}))


def test_a_lambda_one_off_costs_the_conversations_two_commands_and_nothing_else(
        aws_rs, endpoints, monkeypatch):
    """On Lambda the credentials are in the environment: a one-off find_one sends hello,
    saslStart, saslContinue and find (SCRAM: hello with the speculative first step,
    saslContinue, find): one command more than SCRAM, the same connections, and no HTTP
    request to any credential endpoint."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "ASIATEMP")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_SESSION_TOKEN", "a-session-token")
    _, scram = one_off(aws_rs, f"mongodb://alice:scram-pw@{hosts(aws_rs)}/?replicaSet=rs")
    doc, cost = one_off(aws_rs, aws_uri(aws_rs))
    assert doc == {"_id": 1}
    primary_index = aws_rs.servers.index(aws_rs.primary)
    assert cost[primary_index][1] == scram[primary_index][1] + 1
    assert [c for c, _ in cost] == [c for c, _ in scram]
    assert endpoints.requests == {"sts": 0, "ecs": 0, "ec2": 0}
    commands = [next(iter(c)) for c in aws_rs.primary.command_log]
    assert commands.count("saslStart") == commands.count("saslContinue") == 1


def test_credentials_in_the_connection_string_come_first(aws_rs, endpoints, monkeypatch):
    """"Credential Fetching Order": the connection string's before the environment's (here
    wrong ones), and no endpoint asked."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDWRONG")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "wrong")
    doc, _ = one_off(aws_rs, aws_uri(aws_rs, f"{KEY}:{SECRET}@"))
    assert doc == {"_id": 1}
    assert endpoints.requests == {"sts": 0, "ecs": 0, "ec2": 0}


@pytest.mark.parametrize("source, requests", [
    ("web identity", {"sts": 1, "ecs": 0, "ec2": 0}),
    ("ecs", {"sts": 0, "ecs": 1, "ec2": 0}),
    ("ec2", {"sts": 0, "ecs": 0, "ec2": 3}),  # IMDSv2: token, role name, credentials
])
def test_each_endpoint_source_gives_temporary_credentials(aws_rs, endpoints, monkeypatch,
                                                          tmp_path, source, requests):
    """AssumeRoleWithWebIdentity, the ECS endpoint and EC2's IMDSv2, each selected by its
    environment; their temporary credentials carry a session token the server checks."""
    for name, value in endpoints.env(source, tmp_path).items():
        monkeypatch.setenv(name, value)
    doc, _ = one_off(aws_rs, aws_uri(aws_rs))
    assert doc == {"_id": 1}
    assert endpoints.requests == requests


def test_fetched_credentials_are_cached_until_five_minutes_before_expiry(aws_rs, keys,
                                                                         monkeypatch):
    """"Caching Credentials": a second client of the process asks no endpoint; credentials
    within five minutes of expiring are fetched again; a failed authentication clears the
    cache. Environment credentials are never cached."""
    clock = FakeClock()
    with AwsEndpoints(keys, lifetime_s=3600, clock=clock) as endpoints:
        one_off(aws_rs, aws_uri(aws_rs), clock)
        one_off(aws_rs, aws_uri(aws_rs), clock)
        assert endpoints.requests["ec2"] == 3
        clock.advance(3600 - 299)  # inside the five minutes before expiry
        one_off(aws_rs, aws_uri(aws_rs), clock)
        assert endpoints.requests["ec2"] == 6
        entry = aws_fetch._CACHE["credential"]
        keys.keys.pop(entry[0])  # STS forgets it: authentication fails, the cache empties
        with pytest.raises(AuthenticationFailed):
            one_off(aws_rs, aws_uri(aws_rs), clock)
        assert aws_fetch._CACHE == {}
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    one_off(aws_rs, aws_uri(aws_rs))
    assert aws_fetch._CACHE == {}


def test_no_source_names_each_sources_reason(aws_rs, monkeypatch):
    """With no credentials anywhere and the metadata endpoint unreachable, the error says
    what each source lacked, in the order tried."""
    monkeypatch.setitem(aws_fetch.ENDPOINTS, "ec2", "http://127.0.0.1:9")  # nothing listens
    client = MongoClient(aws_uri(aws_rs))
    with pytest.raises(AuthenticationFailed) as caught:
        client.app.c.find_one()
    message = str(caught.value)
    order = [message.index(part) for part in (
        "connection string: no username", "environment: AWS_ACCESS_KEY_ID",
        "web identity: AWS_WEB_IDENTITY_TOKEN_FILE", "EC2 instance metadata:")]
    assert order == sorted(order)
    assert "ConnectionRefusedError" in message
    client.close()


def test_a_wrong_secret_names_the_mechanism_and_key_id_and_shows_no_secret(aws_rs, caplog):
    """AuthenticationFailed names MONGODB-AWS and the access key id (the user); the secret
    access key is in no message, log line or command event."""
    aws_rs.reset()
    listener = EventTexts()
    client = MongoClient(aws_uri(aws_rs, f"{KEY}:not-the-{SECRET}@"),
                         event_listeners=[listener])
    with caplog.at_level(logging.DEBUG), pytest.raises(AuthenticationFailed) as caught:
        client.app.c.find_one()
    message = str(caught.value)
    assert "MONGODB-AWS" in message and repr(KEY) in message
    for text in [message, repr(caught.value.details), caplog.text, repr(client), *listener.seen]:
        assert SECRET not in text
    client.close()


def test_sigv4_matches_aws_documented_example():
    """Signature Version 4 against the example of AWS's documentation that the auth spec
    quotes (IAM ListUsers, 2015-08-30, the documented example secret): the same signing key
    and signature, so the canonical request and the HMAC chain are AWS's, not only the
    simulator's (which shares this code)."""
    from singlemongo.auth import aws_sigv4
    secret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
    assert bytes(aws_sigv4.signing_key(secret, "20150830", "us-east-1", "iam")).hex() == \
        "c4afb1cc5771d871763a393e44b703571b55cc28424d1a5e86da6ed3c154a4b9"
    headers = {"content-type": "application/x-www-form-urlencoded; charset=utf-8",
               "host": "iam.amazonaws.com", "x-amz-date": "20150830T123600Z"}
    assert aws_sigv4.sign(secret, "20150830T123600Z", "us-east-1", "iam", "GET", "/",
                          "Action=ListUsers&Version=2010-05-08", headers, "") == \
        "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"


@pytest.mark.parametrize("host, region", [
    ("sts.amazonaws.com", "us-east-1"), ("sts.us-west-2.amazonaws.com", "us-west-2"),
    ("sts.us-west-2.amazonaws.com.ch", "us-west-2"), ("example.com", "com"),
    ("localhost", "us-east-1"), ("sts..com", None), (".amazonaws.com", None),
    ("sts.amazonaws.", None), ("", None), ("a" * 256, None)])
def test_region_calculation(host, region):
    """Auth spec, "Region Calculation": each row of its table."""
    from singlemongo.auth import aws_sigv4
    problem = aws_sigv4.host_problem(host)
    assert (problem is None) == (region is not None)
    if region is not None:
        assert aws_sigv4.region(host) == region


@pytest.mark.parametrize("fault", [{"action": "close"}, {"action": "error", "code": 18}],
                         ids=["connection closed", "refused"])
def test_a_failed_conversation_leaves_no_secret_in_any_frame(aws_rs, fault):
    """The signed saslContinue fails: no driver frame on the way out shows the secret
    access key (it lives in SecretText, the signing keys in SecretBytes)."""
    from .test_secrets import _leaks
    aws_rs.reset()
    aws_rs.primary.fail("saslContinue", **fault)
    client = MongoClient(aws_uri(aws_rs, f"{KEY}:{SECRET}@") + "&retryReads=false")
    with pytest.raises(BaseException) as caught:
        client.app.c.find_one()
    client.close()
    aws_rs.primary.clear_faults()
    assert _leaks(caught.value, {"secret access key": SECRET}) == []


def test_an_interrupt_while_signing_leaves_no_secret(aws_rs, monkeypatch):
    """A KeyboardInterrupt inside the HMAC chain (the frames holding the keys are live)."""
    import hmac as real_hmac

    from singlemongo.auth import aws_sigv4

    from .test_secrets import _leaks
    real = real_hmac.new

    def interrupted(key, msg, digestmod):
        raise KeyboardInterrupt
    monkeypatch.setattr(aws_sigv4.hmac, "new", interrupted)
    client = MongoClient(aws_uri(aws_rs, f"{KEY}:{SECRET}@"))
    with pytest.raises(KeyboardInterrupt) as caught:
        client.app.c.find_one()
    monkeypatch.setattr(aws_sigv4.hmac, "new", real)
    client.close()
    assert _leaks(caught.value, {"secret access key": SECRET}) == []


def test_the_server_can_have_the_sts_stand_in_check_the_signature(keys, endpoints):
    """As a real server: the signed GetCallerIdentity is POSTed to STS (the stand-in on
    loopback, which checks SigV4 with the test keys); a bad signature is refused there."""
    with ReplicaSet(1, mechanisms=[Aws(keys, sts=endpoints)]) as rs:
        client = MongoClient(f"mongodb://{KEY}:{SECRET}@{rs.servers[0].address_text}/"
                             f"?authMechanism=MONGODB-AWS")
        assert client.admin.command("ping")["ok"] == 1
        client.app.c.find_one()
        client.close()
        wrong = MongoClient(f"mongodb://{KEY}:not-it@{rs.servers[0].address_text}/"
                            f"?authMechanism=MONGODB-AWS")
        with pytest.raises(AuthenticationFailed):
            wrong.app.c.find_one()
        wrong.close()
    assert endpoints.caller_identity_checks == 2


TOKEN = "a-session-token"


@pytest.mark.parametrize("fault", [{"action": "close"}, {"action": "reset"},
                                   {"action": "error", "code": 18}],
                         ids=["connection closed", "connection reset", "refused"])
def test_the_session_token_is_in_no_frame_either(aws_rs, fault):
    """Issue 46: the MONGODB-AWS session token appeared in traceback frame locals (``signed``,
    ``second``; on a reset also ``cmd``, ``body`` and ``message`` in the connection layer),
    as error trackers and ``pytest -l`` show them. It is kept as the secret key is."""
    from .test_secrets import _leaks
    aws_rs.reset()
    aws_rs.primary.fail("saslContinue", **fault)
    client = MongoClient(aws_uri(aws_rs, f"ASIATEMP:{SECRET}@") + "&retryReads=false"
                         f"&authMechanismProperties=AWS_SESSION_TOKEN:{TOKEN}")
    with pytest.raises(BaseException) as caught:
        client.app.c.find_one()
    client.close()
    aws_rs.primary.clear_faults()
    assert _leaks(caught.value, {"session token": TOKEN, "secret access key": SECRET}) == []


def test_a_session_token_still_signs_and_logs_in(aws_rs):
    """The token kept secret still goes into the signed headers and the conversation."""
    aws_rs.reset()
    client = MongoClient(aws_uri(aws_rs, f"ASIATEMP:{SECRET}@") +
                         f"&authMechanismProperties=AWS_SESSION_TOKEN:{TOKEN}")
    assert client.app.c.find_one() is None
    client.close()


HOSTILE_FIRST_REPLIES = {
    "a payload that is not BSON": {"ok": 1, "conversationId": 1, "done": False,
                                   "payload": b"\x05\x00\x00\x00garbage"},
    "a payload that is a string": {"ok": 1, "conversationId": 1, "done": False,
                                   "payload": "not bytes"},
    "a nonce of the wrong type": {"ok": 1, "conversationId": 1, "done": False,
                                  "payload": __import__("bson").encode({"s": 1, "h": 2})},
}


@pytest.mark.parametrize("reply", HOSTILE_FIRST_REPLIES.values(),
                         ids=HOSTILE_FIRST_REPLIES.keys())
def test_a_hostile_sasl_reply_is_an_authentication_failure_and_drops_the_socket(aws_rs,
                                                                                reply):
    """Issue 46: a garbage saslStart payload or a wrong field type escaped as a raw
    ``bson.InvalidBSON``/``TypeError`` (the CLI said "internal error") and the
    half-authenticated socket was kept. It is an AuthenticationFailed naming the mechanism,
    and that connection is closed."""
    aws_rs.reset()
    aws_rs.primary.fail("saslStart", action="error", extra=reply)
    client = MongoClient(aws_uri(aws_rs, f"{KEY}:{SECRET}@") + "&retryReads=false")
    with pytest.raises(AuthenticationFailed, match="MONGODB-AWS"):
        client.app.c.find_one()
    conn = client._topology._connections.get(aws_rs.primary.address)
    assert conn is None or conn.closed
    aws_rs.primary.clear_faults()
    assert client.app.c.find_one() is None  # a new connection authenticates
    client.close()


def test_a_one_off_with_static_credentials_loads_no_importlib(aws_rs):
    """Rule: a mechanism's module loads at first use without importlib (the package's own
    paused import), so an AWS one-off loads no module a plain one-off does not need but its
    own (before: importlib, 0.4 M instructions)."""
    import subprocess
    import sys
    code = ("import sys\nbefore = 'importlib' in sys.modules  # a .pth file may load it\n"
            "from singlemongo import MongoClient\n"
            "client = MongoClient(sys.argv[1])\nclient.bench.c.find_one()\n"
            "print(before or 'importlib' not in sys.modules, "
            "'singlemongo.auth.aws' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, aws_uri(aws_rs, f"{KEY}:{SECRET}@")],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "True"]
