"""Property-based tests: the wire decoder, the URI parser, hello parsing, and BSON round trips.

Bounded for `make test`; `make fuzz` (HYPOTHESIS_PROFILE=fuzz) runs many more examples."""
import datetime
import os
import socket
import struct
import warnings
from urllib.parse import quote

import bson
import pytest
from bson import Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from singlemongo.wire import messages as wire
from singlemongo.client import MongoClient
from singlemongo.options.client_options import client_options
from singlemongo.clock import FakeClock
from singlemongo.engine.connection import Connection
from singlemongo.errors import ConfigurationError, ConnectionFailure, ProtocolError, WriteError
from singlemongo.sdam import ServerDescription, ServerType, TopologyDescription
from singlemongo.testing import Standalone

settings.register_profile("default", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fuzz", max_examples=5000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

A = ("a", 27017)


# ----- the wire decoder ----------------------------------------------------------------------

def _message(op_code, body, length=None, response_to=1):
    return struct.pack("<iiii", length if length is not None else 16 + len(body), 9,
                       response_to, op_code) + body


@given(st.binary(max_size=64), st.sampled_from([wire.OP_MSG, wire.OP_REPLY, wire.OP_COMPRESSED,
                                                 2004, 7]),
       st.one_of(st.none(), st.integers(-2 ** 31, 2 ** 31 - 1)), st.integers(0, 3))
def test_decoder_only_raises_protocol_error(body, op_code, length, response_to):
    """Malformed bytes are a ProtocolError; a well-formed document the codec refuses (a date
    out of range) is UndecodableDocument, the user's error (issue 21)."""
    raw = _message(op_code, body, length, response_to)
    try:
        header = wire.check_header(raw[:16], expect_response_to=1)
        wire.decode_reply(header, raw[16:header.length])
    except (ProtocolError, wire.UndecodableDocument):
        pass


@given(st.binary(max_size=200), st.booleans())
def test_connection_never_hangs_or_reads_without_bound(garbage, lying_length):
    left, right = socket.socketpair()
    conn = Connection(A, left, 0, 0.0)
    data = garbage
    if lying_length:
        data = struct.pack("<iiii", 2 ** 30, 1, 1, wire.OP_MSG) + garbage
    right.sendall(data)
    right.shutdown(socket.SHUT_WR)
    try:
        with pytest.raises(ConnectionFailure):  # ProtocolError is a ConnectionFailure
            conn.command("admin", {"ping": 1}, timeout=2)
        assert conn.closed
    finally:
        right.close()
        left.close()


# ----- the URI parser --------------------------------------------------------------------------

@given(st.text(max_size=80))
def test_any_string_parses_or_raises_configuration_error(text):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for uri in (text, "mongodb://" + text, "mongodb://h/?" + text):
            try:
                client_options(uri)
            except ConfigurationError:
                pass


@given(st.text(min_size=1, max_size=30), st.text(max_size=30),
       st.from_regex(r"[a-z][a-z0-9]{0,10}", fullmatch=True))
def test_percent_encoding_round_trips(user, password, db):
    uri = f"mongodb://{quote(user, safe='')}:{quote(password, safe='')}@h/{db}"
    opts = client_options(uri)
    assert (opts.credentials.username, opts.credentials.password) == (user, password)
    assert opts.database == db


# ----- hello parsing and the SDAM update ----------------------------------------------------

VALUES = st.one_of(st.none(), st.booleans(), st.integers(-5, 30), st.text(max_size=8),
                   st.just(ObjectId("000000000000000000000001")),
                   st.lists(st.sampled_from(["a:27017", "b:27017", "B:1", "[::1]:2"]), max_size=3),
                   st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=2))
HELLO_KEYS = ["ok", "isWritablePrimary", "ismaster", "secondary", "arbiterOnly", "hidden",
              "isreplicaset", "msg", "setName", "setVersion", "electionId", "hosts",
              "passives", "arbiters", "primary", "me", "tags", "minWireVersion",
              "maxWireVersion", "logicalSessionTimeoutMinutes", "topologyVersion", "lastWrite"]


@given(st.lists(st.dictionaries(st.sampled_from(HELLO_KEYS), VALUES, max_size=10), max_size=4),
       st.sampled_from([dict(), dict(replica_set="rs"), dict(direct_connection=True)]))
def test_any_hello_gives_a_description_and_the_update_never_raises(hellos, start):
    td = TopologyDescription.initial([A, ("b", 27017)], **start)
    for hello in hellos:
        sd = ServerDescription.from_hello(A, dict(hello, ok=hello.get("ok", 1)))
        assert isinstance(sd.server_type, ServerType)
        if sd.server_type is ServerType.UNKNOWN and "invalid hello" in (sd.error or ""):
            assert sd.error
        td = td.update(sd)
        assert td.compatible in (True, False)


# ----- BSON documents of every type through the driver ------------------------------------------

KEYS = st.text(alphabet=st.characters(blacklist_characters="$.\x00",
                                      blacklist_categories=["Cs"]), min_size=1, max_size=6)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(-2 ** 31, 2 ** 31 - 1),
    st.integers(-2 ** 63, 2 ** 63 - 1).map(Int64), st.floats(allow_nan=False),
    st.text(max_size=20), st.binary(max_size=20).map(lambda b: Binary(b, 0)),
    st.builds(ObjectId), st.decimals(min_value=-10 ** 20, max_value=10 ** 20, places=3)
    .map(lambda d: Decimal128(str(d))),
    st.datetimes(min_value=datetime.datetime(1900, 1, 1), max_value=datetime.datetime(2200, 1, 1))
    .map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000,
                             tzinfo=datetime.timezone.utc)),
    st.builds(Timestamp, st.integers(0, 2 ** 31), st.integers(0, 2 ** 31)),
    st.just(MinKey()), st.just(MaxKey()), st.builds(Code, st.text(max_size=10)),
    st.builds(Regex, st.text(alphabet="abc*+", max_size=5)))
DOCS = st.dictionaries(KEYS, st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)), max_leaves=8),
    max_size=6)


@pytest.fixture(scope="module")
def deployment():
    with Standalone() as s:
        yield s


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(doc=DOCS)
@example(doc={"_id": Code("x")})  # the simulator's engine could not hash a Code _id
@example(doc={"_id": Decimal128("0.000")})  # ... nor a Decimal128 one (make fuzz)
def test_documents_of_every_bson_type_round_trip(deployment, doc):
    client = MongoClient(deployment.uri, clock=FakeClock())
    coll = client.test.types
    try:
        doc = dict(doc)
        if isinstance(doc.get("_id"), (Regex, list)):  # MongoDB refuses these _id types
            with pytest.raises(WriteError, match="_id"):
                coll.insert_one(doc)
            return
        inserted = coll.insert_one(doc).inserted_id
        back = coll.find_one({"_id": inserted})
        assert bson.encode(back) == bson.encode(doc)
    finally:
        coll.delete_many({})
        client.close()


# ----- hostile servers: hellos, error replies and SCRAM messages (issue 12) --------------------

HOSTS = st.one_of(
    st.text(max_size=12),
    st.builds(lambda h, p: f"{h}:{p}", st.text(min_size=1, max_size=70),
              st.integers(-5, 100_000)),
    st.sampled_from(["/tmp/x.sock", "a" * 64 + ".example:1", "[::1]:2", "[::1", "[]:1",
                     "h:", ":1", "h:+1", "h:0x10", "h\x00:1", "ü" * 70 + ":1", "a..b:1"]))
HOSTILE = st.one_of(
    VALUES, st.integers(-2 ** 63, 2 ** 63 - 1), st.lists(HOSTS, max_size=4),
    st.builds(Timestamp, st.integers(0, 2 ** 31), st.integers(0, 2 ** 31)),
    st.dictionaries(st.sampled_from(["processId", "counter", "clusterTime", "lastWriteDate"]),
                    VALUES, max_size=2))
HOSTILE_HELLO_KEYS = HELLO_KEYS + ["maxBsonObjectSize", "maxMessageSizeBytes",
                                   "maxWriteBatchSize", "$clusterTime", "compression",
                                   "helloOk", "connectionId", "saslSupportedMechs"]


@given(st.dictionaries(st.sampled_from(["hosts", "passives", "arbiters", "me", "primary"]),
                       st.one_of(HOSTS, st.lists(HOSTS, max_size=4)), max_size=3),
       st.booleans())
@example(fields={"hosts": ["[\x80:"]}, primary=False)  # make fuzz: a bracket took any literal
def test_announced_hosts_are_valid_addresses_or_the_server_is_unknown(fields, primary):
    """Hosts a server announces become addresses a socket can use (a port in 1-65535, no
    UNIX socket path, a name getaddrinfo can encode), or the server is Unknown and says why."""
    hello = dict(fields, ok=1, setName="rs", isWritablePrimary=primary, secondary=not primary)
    sd = ServerDescription.from_hello(A, hello)
    if sd.server_type is ServerType.UNKNOWN:
        assert sd.error and len(sd.error) < 500
        return
    for host, port in sd.hosts + sd.passives + sd.arbiters + tuple(
            a for a in (sd.me, sd.primary) if a):
        assert 0 < port < 65536 and "/" not in host
        if not host.replace(":", "").isalnum():
            host.encode("idna") if not host.isascii() else None  # UnicodeError would fail here


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
          max_examples=30)
@given(st.dictionaries(st.sampled_from(HOSTILE_HELLO_KEYS), HOSTILE, min_size=1, max_size=4))
def test_a_hostile_hello_gives_only_the_drivers_errors(deployment, extra):
    """Whatever a server puts in its hello, operations raise the driver's typed errors only,
    and the client keeps working once the server behaves."""
    from singlemongo.errors import SingleMongoError
    server = deployment.servers[0]
    server.hello_extra = extra
    client = MongoClient(deployment.uri, clock=FakeClock())
    try:
        for _ in range(2):
            try:
                client.test.c.find_one()
            except SingleMongoError:
                pass
        server.hello_extra = {}
        client.close()
        client = MongoClient(deployment.uri, clock=FakeClock())
        assert client.test.c.find_one() is None
    finally:
        server.hello_extra = {}
        client.close()


ERROR_FIELDS = st.fixed_dictionaries({"ok": st.sampled_from([0, 0.0, False, 1])}, optional={
    "code": HOSTILE, "errmsg": HOSTILE, "codeName": HOSTILE, "errorLabels": HOSTILE,
    "topologyVersion": HOSTILE,
    "writeConcernError": st.one_of(HOSTILE, st.fixed_dictionaries({}, optional={
        "code": HOSTILE, "errmsg": HOSTILE, "errorLabels": HOSTILE})),
    "writeErrors": st.one_of(HOSTILE, st.lists(st.fixed_dictionaries({}, optional={
        "index": HOSTILE, "code": HOSTILE, "errmsg": HOSTILE}), max_size=3))})


@given(ERROR_FIELDS)
def test_any_error_reply_gives_a_typed_error_and_an_sdam_decision(reply):
    """An error reply of any shape becomes an OperationFailure, or a NotPrimaryError for the
    not-primary codes and messages (an AutoReconnect, as PyMongo's), or is a success; and the
    SDAM error handling decides on it without raising. (The fuzz profile found that this
    test wrongly demanded an OperationFailure for code 10107.)"""
    from singlemongo.errors import NotPrimaryError, OperationFailure
    from singlemongo.replies import failed, sanitize
    from singlemongo.reply_errors import error_from_reply
    from singlemongo.sdam import ApplicationError, ErrorKind, classify_reply
    from singlemongo.sdam.error_handling import handle_application_error
    reply = sanitize(reply)
    if not failed(reply):
        return  # a success: the driver reads no error fields
    error = error_from_reply(reply, A)
    assert isinstance(error, (OperationFailure, NotPrimaryError))
    assert isinstance(error.error_labels, tuple)
    str(error)
    kind = classify_reply(reply) or ErrorKind.OTHER
    td = TopologyDescription.initial([A], replica_set="rs").update(ServerDescription.from_hello(
        A, {"ok": 1, "setName": "rs", "isWritablePrimary": True, "hosts": ["a:27017"],
            "maxWireVersion": 21}))
    handle_application_error(td, ApplicationError(
        A, kind, 0, True, 21, str(reply.get("errmsg", "")), reply.get("topologyVersion"),
        tuple(reply.get("errorLabels", ()))), 0)


@given(st.one_of(st.none(), st.integers(), st.text(max_size=40), st.binary(max_size=60),
                 st.builds(lambda r, s, i: f"r={r},s={s},i={i}".encode(),
                           st.sampled_from(["abc", "abcdef", "x"]),
                           st.sampled_from(["c2FsdA==", "not base64!", ""]),
                           st.sampled_from(["4096", "1", "-1", "x", "99999999999", ""]))))
def test_any_server_first_message_is_answered_or_refused_with_authentication_failed(payload):
    """A SCRAM server-first message of any shape gives the client-final message or
    AuthenticationFailed, never KeyError, ValueError or UnicodeError."""
    from singlemongo.auth import AuthenticationFailed
    from singlemongo.auth.scram import Conversation
    conversation = Conversation("SCRAM-SHA-256", "alice", "abc")
    try:
        final = conversation.final_message(payload, "pw")
        assert b",p=" in bytes(final)
        conversation.verify_server_final(payload)
    except AuthenticationFailed:
        pass


def test_a_hostile_hello_value_is_shown_shortened():
    """Found by the property above: a hello whose ``primary`` is a list of long strings gave
    an error of 500 characters (the whole value); a server's value is shown shortened."""
    sd = ServerDescription.from_hello(A, {"ok": 1, "setName": "rs", "primary": ["x" * 10_000]})
    assert sd.server_type is ServerType.UNKNOWN
    assert "primary must be a string" in sd.error and len(sd.error) < 200


HOST_TEXT = st.one_of(st.text(alphabet="0123456789.", max_size=16),
                      st.text(alphabet="aZ09-_.:%é²", max_size=24))


def _octets_rule(host):
    """The dotted-quad rule octet by octet: is_ipv4's reference."""
    octets = host.split(".")
    return len(octets) == 4 and all(
        0 < len(o) <= 3 and o.isascii() and o.isdigit() and int(o) <= 255 for o in octets)


@given(HOST_TEXT)
@example("255.255.255.255")
@example("256.1.1.1")
@example("01.2.3.004")
@example("1.2.3.²")
def test_is_ipv4_says_what_the_octet_by_octet_rule_says(text):
    """is_ipv4 tests whole strings in C (issue 59: each host of a 50-member scan is tested);
    it must accept exactly the dotted quads the octet-by-octet rule accepts."""
    from singlemongo.sdam.address import is_ipv4
    assert is_ipv4(text) == _octets_rule(text)


@given(HOST_TEXT)
@example("a." * 126 + "b")
@example("a" * 64)
@example("a..b")
@example("-a_.b.")
def test_a_plain_name_is_what_the_label_rule_says(text):
    """_is_plain_name tests whole strings in C (issue 59); it must accept exactly the names
    of ASCII labels of 1 to 63 letters, digits, '-' or '_', with an optional final dot."""
    import re

    from singlemongo.sdam.address import _is_plain_name
    expected = len(text) <= 253 and re.fullmatch(
        r"(?:[A-Za-z0-9_-]{1,63}\.)*[A-Za-z0-9_-]{1,63}\.?", text, re.ASCII) is not None
    assert _is_plain_name(text) == expected


@given(HOST_TEXT)
@example("Host.Example:27018")
@example("host:")
@example("a.sock")
@example("1.2.3.4:0")
def test_a_seed_read_by_the_announced_host_rules_is_what_the_uri_rules_read(text):
    """A connection string's host is read by the rules for a host a server announces, whose
    parse a scan's replies then reuse (issue 59); the connection string's own rules must
    give the same host, port and kind, or refuse it as well."""
    from singlemongo import errors
    from singlemongo.options import uri
    host, colon, port = text.partition(":")
    if not host or ":" in port or "%" in text:
        return  # refused, or percent-decoded, before either rule is asked
    results = []
    for read in (lambda: uri._parse_host(text, "mongodb://h"),
                 lambda: uri._named_host(text, text, colon, port)):
        try:
            results.append(read())
        except errors.InvalidURI:
            results.append("refused")
    assert results[0] == results[1]
