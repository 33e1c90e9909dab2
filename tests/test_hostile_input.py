"""A server that lies (issue 12): compression bombs, hellos and error replies with wrong types
or absurd values, a SCRAM reply without a payload. The driver answers with its own typed
errors or marks that server Unknown, never AttributeError, TypeError, KeyError or
UnicodeError, and never connects where the server points it but the user did not."""
import socket
import struct
import tracemalloc
import zlib

import pytest

from singlemongo import errors
from singlemongo.client import MongoClient
from singlemongo.clock import FakeClock
from singlemongo.sdam import ServerType
from singlemongo.testing import ReplicaSet
from singlemongo.wire import messages as wire


def _compressed_reply(request_id, inflated, announced):
    body = wire.encode_op_msg(0, {"ok": 1})[16:] if inflated is None else inflated
    payload = zlib.compress(body, 9)
    data = struct.pack("<iiB", wire.OP_MSG, announced, 2) + payload
    return wire.HEADER.pack(16 + len(data), request_id + 1, request_id, wire.OP_COMPRESSED) + data


def test_a_compressed_reply_without_negotiation_is_refused(mongo_standalone, fake_clock):
    """A compressed reply is accepted only after compression was negotiated (here the client
    offered none). Before, the driver inflated whatever came, even the first handshake's."""
    server = mongo_standalone.servers[0]
    client = MongoClient(mongo_standalone.uri, clock=fake_clock)
    client.admin.command("ping")
    server.fail("find", action="raw-reply", times=None,  # the retry gets it too
                raw=lambda request_id: _compressed_reply(request_id, None, 21))
    with pytest.raises(errors.ConnectionFailure, match="compression was not negotiated"):
        client.test.c.find_one()


def _peak_of_a_compressed_find(deployment, clock, inflated, announced, refusal, limits=None):
    """The peak of traced memory while a find is answered with a zlib reply of ``inflated``
    bytes announcing ``announced``, which the client refuses with ``refusal``."""
    server = deployment.servers[0]
    server.limits = dict(limits or {})
    client = MongoClient(deployment.uri, clock=clock, compressors="zlib")
    client.admin.command("ping")
    reply = _compressed_reply(0, inflated, announced)[16:]
    server.fail("find", action="raw-reply", times=None, raw=lambda request_id: wire.HEADER.pack(
        16 + len(reply), request_id + 1, request_id, wire.OP_COMPRESSED) + reply)
    tracemalloc.start()
    try:
        with pytest.raises(errors.ConnectionFailure, match=refusal):
            client.test.c.find_one()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        client.close()


def test_a_compression_bomb_is_refused_before_it_fills_memory(mongo_standalone, fake_clock):
    """A reply that inflates past the size it announces is refused after that many bytes.
    Before, a 1 MB reply inflated to 2 GiB of memory."""
    peak = _peak_of_a_compressed_find(mongo_standalone, fake_clock, b"\0" * 100_000_000, 1000,
                                      "inflates past")
    assert peak < 20_000_000  # not the 100 MB it would inflate to


def test_a_huge_announced_message_size_does_not_bound_inflation(mongo_standalone, fake_clock):
    """Issue 46: inflation was bounded by the server's own maxMessageSizeBytes, so a server
    announcing 2**31-1 inflated a small zlib reply into as much memory as it said. It is
    bounded by what a real server can announce (48,000,000 bytes) whatever this one says."""
    peak = _peak_of_a_compressed_find(mongo_standalone, fake_clock, b"\0" * 60_000_000,
                                      60_000_000, "over maxMessageSizeBytes",
                                      {"maxMessageSizeBytes": 2**31 - 1})
    assert peak < 20_000_000  # not the 60 MB it announces


HOSTILE_HELLOS = {
    "topologyVersion of the wrong type": {"topologyVersion": "x"},
    "a size limit as a string": {"maxBsonObjectSize": "16MB"},
    "a port outside 1-65535": {"hosts": ["127.0.0.1:70000"]},
    "a UNIX socket host": {"hosts": ["/tmp/singlemongo-evil.sock"]},
    "a DNS label over 63 characters": {"hosts": ["a" * 64 + ".example:27017"]},
    "an empty host": {"hosts": [""]},
    "a setName that is a number": {"setName": 5},
    "me that is a number": {"me": 5},
    "an electionId string": {"electionId": "x"},
    "a lastWriteDate string": {"lastWrite": {"lastWriteDate": "yesterday"}},
    "tags with numbers": {"tags": {"dc": 1}},
    "a session timeout string": {"logicalSessionTimeoutMinutes": "30"},
    "a wire version string": {"maxWireVersion": "21"},
    "compression as a string": {"compression": "zlib"},
    "helloOk as a string": {"helloOk": "yes"},
    "a clusterTime string": {"$clusterTime": "x"},
    "a clusterTime without a Timestamp": {"$clusterTime": {"clusterTime": 5}},
    "a connectionId string": {"connectionId": "x"},
    "msg as a number": {"msg": 5},
}


@pytest.mark.parametrize("extra", HOSTILE_HELLOS.values(), ids=HOSTILE_HELLOS.keys())
def test_a_hostile_hello_gives_typed_errors_only(mongo_replica_set, monkeypatch, extra):
    """Each hostile hello field gives the driver's typed error or marks that server Unknown with
    a clear error; later operations raise nothing else either. Before, several gave
    AttributeError, TypeError, KeyError or UnicodeError on every later operation, and a host
    ending in .sock made the client open a local UNIX socket."""
    unix = []
    real_socket = socket.socket

    def watched(family=socket.AF_INET, *args, **kwargs):
        if family == socket.AF_UNIX:
            unix.append(family)
        return real_socket(family, *args, **kwargs)
    monkeypatch.setattr(socket, "socket", watched)
    primary = mongo_replica_set.servers[0]
    primary.hello_extra = extra
    client = MongoClient(mongo_replica_set.uri, clock=FakeClock())
    for _ in range(2):
        try:
            client.test.c.insert_one({"x": 1})
            client.test.c.find_one()
        except errors.SingleMongoError as exc:
            assert "Traceback" not in str(exc)
    sd = client.topology_description.servers.get(primary.address)
    if sd is not None and sd.server_type in (ServerType.UNKNOWN, ServerType.POSSIBLE_PRIMARY):
        assert sd.error and len(sd.error) < 500
    assert unix == []
    assert all(a[1] is not None and 0 < a[1] < 65536 for a in client.topology_description.servers)
    client.close()


def test_an_error_reply_with_wrong_types_is_an_operation_failure(mongo_replica_set, make_client):
    """An error reply whose code, message, labels and topologyVersion have the wrong types is a
    typed OperationFailure, and the client carries on. Before: TypeError."""
    coll = make_client(mongo_replica_set).test.c
    coll.insert_one({"x": 1})
    mongo_replica_set.servers[0].fail("find", extra={
        "code": "x", "errmsg": 5, "codeName": 7, "errorLabels": "abc", "topologyVersion": "x"})
    with pytest.raises(errors.OperationFailure) as info:
        coll.find_one()
    assert info.value.error_labels == ()
    assert coll.find_one()["x"] == 1


def test_a_scram_reply_without_payload_is_an_authentication_failure():
    """A SCRAM reply without a payload is AuthenticationFailed. Before: KeyError('payload')."""
    from singlemongo.auth import AuthenticationFailed
    with ReplicaSet(1, users={"alice": "pw"}) as rs:
        uri = f"mongodb://alice:pw@{rs.servers[0].address_text}/?replicaSet=rs"
        client = MongoClient(uri, clock=FakeClock())
        rs.servers[0].fail("saslContinue", extra={"ok": 1, "done": False, "code": None})
        with pytest.raises(AuthenticationFailed, match="payload"):
            client.test.c.find_one()
        client.close()


# ----- errors a person reads (issue 19) -------------------------------------------------------

@pytest.mark.parametrize("uri", ["mongodb://alice:Pw9x@h/?Pw9x", "mongodb://alice:Pw9x@h/?Pw9x=1",
                                 "mongodb://alice:Pw9x@h/?appName=Pw9x&retryWrites=maybe"])
def test_the_password_typed_as_an_option_is_never_echoed(uri, recwarn):
    """Credentials never appear in exceptions or warnings: a password typed again as an
    option (a paste gone wrong) is not quoted back. Before, InvalidURI said "invalid
    connection option 'Pw9x'", the password itself."""
    try:
        MongoClient(uri)
    except errors.PyMongoError as exc:
        assert "Pw9x" not in str(exc)
    assert not [w for w in recwarn if "Pw9x" in str(w.message)]


def test_a_wrong_scheme_says_so():
    """``mongo://host`` is a connection string with the wrong scheme. Before, it was read
    as a host name and the error spoke of an invalid port in 'mongo:'. The words are
    PyMongo's, which programs match (flask-mongoengine's tests)."""
    with pytest.raises(errors.InvalidURI, match="^Invalid URI scheme: URI must begin with "
                                                "'mongodb://' or 'mongodb\\+srv://'$"):
        MongoClient("mongo://host")


def test_a_mistyped_option_gets_a_suggestion():
    """As PyMongo: an unknown option names the nearest known ones ("did you mean"). Before,
    the connection string's warning named none."""
    with pytest.warns(errors.SingleMongoWarning, match=r"retryWrite.*Did you mean.*retryWrites"):
        MongoClient("mongodb://h/?retryWrite=true")


def test_the_cli_prints_a_warning_as_one_clean_line(mongo_standalone):
    """The command line shows a warning as one line, "singlemongo: warning: ...", never
    Python's two lines with a source path and a line of code."""
    import io

    from singlemongo import cli
    out, err = io.StringIO(), io.StringIO()
    uri = mongo_standalone.uri + ("&" if "?" in mongo_standalone.uri else "/?") + "retryWrite=true"
    assert cli.main(["--uri", uri, "count", "test.c"], out, err, io.StringIO()) == 0
    lines = err.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("singlemongo: warning: unsupported")
    assert ".py" not in lines[0]


@pytest.mark.parametrize("action", ["bad operator", "bad sort key"])
def test_an_error_no_retry_could_fix_has_no_retries_note(mongo_standalone, fake_clock, action):
    """An error no retry could fix says what the server said, without "[retries stopped:
    not retryable; 1 attempt(s)]" (the reason stays in ``retry_stopped``); a network error
    keeps the note. Before, every error ended with it."""
    client = MongoClient(mongo_standalone.uri, clock=fake_clock)
    client.t.c.insert_one({"a": 1})
    with pytest.raises(errors.OperationFailure) as info:
        if action == "bad operator":
            client.t.c.find_one({"a": {"$bad": 1}})
        else:
            list(client.t.c.find({}, sort=[("a", 5)]))
    assert "retries stopped" not in str(info.value)
    assert info.value.retry_stopped == "not retryable"
    client.close()


def test_an_invalid_announced_host_is_dropped_and_the_server_kept(mongo_replica_set, fake_clock,
                                                                   caplog):
    """One announced host with an invalid name is left out, said once in the log (a warning
    on singlemongo.topology), and the primary stays usable. Before, the whole reply was
    refused and every operation failed."""
    import logging
    rs = mongo_replica_set
    hello = rs.hello

    def bad_hosts(server, cmd):
        reply = dict(hello(server, cmd))
        reply["hosts"] = list(reply.get("hosts", ())) + ["bad host!:x", "h:99999"]
        return reply
    rs.hello = bad_hosts
    try:
        caplog.set_level(logging.WARNING, logger="singlemongo.topology")
        client = MongoClient(rs.uri, clock=fake_clock)
        for i in range(6):
            assert client.t.c.insert_one({"i": i}).acknowledged
            fake_clock.advance(11)  # rescans: the warning is not repeated
        warned = [r for r in caplog.records if r.name == "singlemongo.topology"]
        assert len(warned) >= 1 and "bad host!:x" in warned[0].getMessage()
        by_server = [r.mongodb["serverPort"] for r in warned]
        assert len(by_server) == len(set(by_server)) <= len(rs.servers)  # once per server
        assert len(client.topology_description.servers) == len(rs.servers)
        client.close()
    finally:
        del rs.hello


def test_a_date_outside_pythons_range_is_the_users_error_not_the_servers(mongo_replica_set,
                                                                          fake_clock):
    """A stored date Python cannot represent raises bson's InvalidBSON as PyMongo does, sent
    once, on the same connection, the server still selectable. Before, it was a
    ProtocolError (a ConnectionFailure): the connection was closed, the read retried and the
    server marked Unknown for a document the user stored. DATETIME_AUTO reads it."""
    import bson
    from bson.errors import InvalidBSON
    mongo_replica_set.store.seed("db", "c", [{"_id": 1, "d": bson.DatetimeMS(2 ** 62)}])
    primary = mongo_replica_set.primary
    client = MongoClient(mongo_replica_set.uri, clock=fake_clock)
    client.admin.command("ping")
    connections, finds = primary.connections, primary.commands["find"]
    with pytest.raises(InvalidBSON, match="out of range"):
        client.db.c.find_one()
    assert primary.commands["find"] == finds + 1  # not retried
    assert client.db.c.count_documents({}) == 1
    assert primary.connections == connections  # the same connection served both
    auto = client.db.get_collection("c", codec_options=bson.CodecOptions(
        datetime_conversion=bson.DatetimeConversion.DATETIME_AUTO))
    assert auto.find_one()["d"] == bson.DatetimeMS(2 ** 62)


@pytest.mark.parametrize("uri,problem", [
    ("mongodb://localhost:\u00b2", "invalid port"),  # a superscript two: isdigit, not int
    ("mongodb://localhost:\u0662\u0667", "invalid port"),  # Arabic-Indic digits
    ("mongodb://1.2.3.4\n", "no spaces, control characters"),  # `$` matched before "\n"
])
def test_a_host_or_port_that_only_looks_numeric_is_an_invalid_uri(uri, problem):
    """Rule: bad input gets an error that names the problem. Before, a port of Unicode digits
    raised int()'s bare ValueError from deep inside, and an IPv4 address followed by a
    newline was accepted as a host (and failed at connect time)."""
    with pytest.raises(errors.InvalidURI, match=problem):
        MongoClient(uri)


def test_an_ipv4_address_is_ascii_digits_only():
    """Rule: only ASCII dotted quads are IPv4 literals; digits of another script are a host
    name, checked by the host-name rules (and resolved), not connected to as an address."""
    from singlemongo.options.uri import parse_uri
    assert parse_uri("mongodb://10.0.0.255").hosts[0].kind == "ipv4"
    assert parse_uri("mongodb://10.0.0.256").hosts[0].kind == "hostname"
    assert parse_uri("mongodb://\u0661.\u0662.\u0663.\u0664").hosts[0].kind == "hostname"


@pytest.mark.parametrize("text,ok", [
    ("127.0.0.1:27017", True), ("a-b_c.example.com.:1", True), ("x" * 63 + ".y", True),
    ("x" * 64 + ".y", False), ("a..b", False), (".", False), ("a b", False),
    ("a.-", True), ("h\u00e9.example", True), ("bad host!:x", False), ("1.2.3.4\n", False),
])
def test_announced_host_names_follow_the_host_name_rules(text, ok):
    """Rule (RFC 1035 lengths, no spaces or control characters): announced hosts are checked
    as connection-string hosts; the everyday ASCII name is accepted without the slower
    character-by-character rules, and the same names as before pass and fail."""
    from singlemongo.sdam.address import _parse_announced
    if ok:
        assert _parse_announced(text)
    else:
        with pytest.raises(ValueError):
            _parse_announced(text)
