"""Wire encoding and decoding: round trips, and malformed input that must raise ProtocolError."""
import struct

import bson
import pytest

from singlemongo.wire import messages as wire
from singlemongo.errors import ProtocolError


def _body(message):
    return message[16:]


def test_op_msg_round_trip_with_document_sequence():
    msg = wire.encode_op_msg(7, {"insert": "c", "$db": "d"}, [("documents", [{"a": 1}, {"b": 2}])])
    header = wire.check_header(msg[:16], expect_response_to=None)
    assert header.length == len(msg) and header.request_id == 7 and header.op_code == wire.OP_MSG
    flags, doc, seqs = wire.decode_op_msg(_body(msg))
    assert doc == {"insert": "c", "$db": "d"} and seqs == {"documents": [{"a": 1}, {"b": 2}]}


def test_op_msg_with_checksum_accepted():
    msg = wire.encode_op_msg(1, {"ok": 1}, flags=wire.CHECKSUM_PRESENT)
    body = _body(msg) + b"\x00\x00\x00\x00"
    assert wire.decode_op_msg(body)[1] == {"ok": 1}


def test_op_query_and_op_reply_round_trip():
    q = wire.encode_op_query(3, "admin.$cmd", {"isMaster": 1}, flags=wire.QUERY_SECONDARY_OK)
    flags, ns, doc = wire.decode_op_query(_body(q))
    assert ns == "admin.$cmd" and doc == {"isMaster": 1} and flags & wire.QUERY_SECONDARY_OK
    r = wire.encode_op_reply(4, 3, [{"ok": 1}])
    assert wire.decode_reply(wire.check_header(r[:16], expect_response_to=3), _body(r)) == {"ok": 1}


def test_query_failure_reply_becomes_ok_0():
    r = wire.encode_op_reply(4, 3, [{"$err": "not master", "code": 10107}], flags=wire.REPLY_QUERY_FAILURE)
    doc = wire.decode_op_reply(_body(r))
    assert doc["ok"] == 0 and doc["errmsg"] == "not master"


@pytest.mark.parametrize("raw,message", [
    (b"\x00" * 10, "truncated message header"),
    (struct.pack("<iiii", 8, 1, 1, wire.OP_MSG), "outside 16"),
    (struct.pack("<iiii", 100_000_000, 1, 1, wire.OP_MSG), "maxMessageSizeBytes"),
    (struct.pack("<iiii", 40, 1, 99, wire.OP_MSG), "responseTo 99"),
    (struct.pack("<iiii", 40, 1, 1, 42), "opCode 42"),
])
def test_bad_headers(raw, message):
    with pytest.raises(ProtocolError, match=message):
        wire.check_header(raw, expect_response_to=1)


@pytest.mark.parametrize("body,message", [
    (b"\x00\x00", "truncated OP_MSG"),
    (b"\x00\x00\x00\x00\x00\xff\x00\x00\x00", "overruns"),
    (b"\x00\x00\x00\x00\x07" + bson.encode({"a": 1}), "unknown OP_MSG section kind"),
    (b"\x00\x00\x00\x00\x00\x0c\x00\x00\x00\x99\x61\x00\x00\x00\x00\x00\x00", "invalid BSON"),
    (b"\x00\x00\x01\x00" + b"\x00" + bson.encode({"a": 1}), None),  # exhaustAllowed is fine
    (b"\x04\x00\x00\x00\x00" + bson.encode({"a": 1}), "unknown required flag"),
])
def test_bad_op_msg_bodies(body, message):
    if message is None:
        assert wire.decode_op_msg(body)[1] == {"a": 1}
        return
    with pytest.raises(ProtocolError, match=message):
        wire.decode_op_msg(body)


def _bodies():
    doc = bson.encode({"ok": 1, "hosts": ["a:1"]})
    one = struct.pack("<I", 0) + b"\x00" + doc
    yield one  # the usual reply
    yield struct.pack("<I", wire.MORE_TO_COME) + one[4:]  # flags set
    yield struct.pack("<I", wire.CHECKSUM_PRESENT) + one[4:] + b"\x00" * 4
    yield one + b"\x01" + struct.pack("<i", 9) + b"seq\x00" + bson.encode({})[:1]  # two sections
    yield struct.pack("<I", 0) + b"\x01" + doc  # a kind 1 section first
    yield one[:-1]  # its length says more than there is
    yield one + b"\x00"  # bytes after the section
    yield struct.pack("<I", 0) + b"\x00" + doc[:4] + b"\x07" + doc[5:]  # an unknown BSON type
    yield struct.pack("<I", 1 << 3) + one[4:]  # an unknown required flag


@pytest.mark.parametrize("body", list(_bodies()))
def test_decode_reply_reads_every_op_msg_as_the_whole_reading_does(body):
    """Rule: decode_reply's one-step reading of the usual reply (no flags, one kind 0 section
    to the end) gives what decode_op_msg's whole reading gives, and leaves every other body,
    valid or not, to it: the same document or the same error."""
    header = wire.Header(16 + len(body), 1, 0, wire.OP_MSG)

    def outcome(read):
        try:
            return read()
        except ProtocolError as exc:
            return str(exc)
    for codec in (wire.CODEC, wire.DEFAULT_CODEC_OPTIONS):
        fast = outcome(lambda: wire.decode_reply(header, body, codec=codec))
        whole = outcome(lambda: wire.decode_reply_flags(header, body, codec=codec)[1])
        assert fast == whole
