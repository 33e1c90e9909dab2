"""The wire protocol as pure functions: OP_MSG, and OP_QUERY/OP_REPLY for the legacy hello.

Encoding returns bytes; decoding takes bytes already read and validates them. Nothing here
touches a socket: ``connection.py`` reads exactly the number of bytes the header announces,
after ``check_header`` has bounded it by maxMessageSizeBytes.
"""
from __future__ import annotations

import struct
TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Any, Optional

import bson
from bson.codec_options import DEFAULT_CODEC_OPTIONS, CodecOptions  # noqa: F401

from singlemongo.errors import ProtocolError

OP_REPLY = 1
OP_QUERY = 2004
OP_MSG = 2013
OP_COMPRESSED = 2012
HEADER = struct.Struct("<iiii")  # messageLength, requestID, responseTo, opCode
DEFAULT_MAX_MESSAGE_SIZE = 48_000_000
DEFAULT_MAX_BSON_SIZE = 16 * 1024 * 1024
DEFAULT_MAX_WRITE_BATCH = 100_000

# OP_MSG flag bits.
CHECKSUM_PRESENT = 1 << 0
MORE_TO_COME = 1 << 1
EXHAUST_ALLOWED = 1 << 16
_KNOWN_FLAGS = CHECKSUM_PRESENT | MORE_TO_COME | EXHAUST_ALLOWED
# OP_QUERY flag bits.
QUERY_SECONDARY_OK = 1 << 2
# OP_REPLY responseFlags.
REPLY_CURSOR_NOT_FOUND = 1 << 0
REPLY_QUERY_FAILURE = 1 << 1

CODEC: CodecOptions[dict[str, Any]] = CodecOptions(tz_aware=True)
# DEFAULT_CODEC_OPTIONS (bson's, imported above) decodes a check's hello, as PyMongo decodes
# one: naive UTC datetimes (localTime, lastWriteDate), which bson makes in a fifth fewer
# instructions than aware ones (a scan decodes one a member).

# Reads any date: what tells a codec's refusal of a date out of range from malformed bytes.
# Invalid UTF-8 stays the protocol's error.
_ANY_DATE: CodecOptions[dict[str, Any]] = CodecOptions(
    datetime_conversion=bson.DatetimeConversion.DATETIME_AUTO)
_INT32 = struct.Struct("<i")
_UINT32 = struct.Struct("<I")
_SECTION_START = struct.Struct("<IBi")  # an OP_MSG's flags, first section's kind and length


class Header:
    """A message's header. A plain class, not a record: every reply makes one, and a record
    class costs a one-off more to make."""

    __slots__ = ("length", "request_id", "response_to", "op_code")

    def __init__(self, length: int, request_id: int, response_to: int, op_code: int) -> None:
        self.length, self.request_id = length, request_id
        self.response_to, self.op_code = response_to, op_code

    def __repr__(self) -> str:
        return (f"Header(length={self.length}, request_id={self.request_id}, "
                f"response_to={self.response_to}, op_code={self.op_code})")


class EncodedBatch(list):
    """The documents of a kind 1 section, with ``encoded``: their BSON, concatenated with the
    codec the message uses (a bulk write encodes each document once, to measure the batch,
    and sends those bytes)."""

    encoded: Optional[bytes] = None


def encode_op_msg(request_id, body, sequences=(), flags=0, codec=CODEC):
    """An OP_MSG with one kind 0 section and optional kind 1 sections ``(identifier, docs)``.
    A value bson cannot encode is singlemongo's InvalidDocument (``pymongo.errors``'), which
    is also bson's."""
    return encoding(_encode_op_msg, request_id, body, sequences, flags, codec)


def encoding(encode, *args, **kwargs):
    """``encode(*args, **kwargs)``, bson's InvalidDocument raised as singlemongo's (also
    bson's): ``except pymongo.errors.InvalidDocument`` catches it, as with PyMongo."""
    try:
        return encode(*args, **kwargs)
    except bson.errors.InvalidDocument as exc:
        from singlemongo import errors
        if isinstance(exc, errors.InvalidDocument):
            raise
        raise errors.InvalidDocument(str(exc)) from None


def _encode_op_msg(request_id, body, sequences, flags, codec):
    parts = [_UINT32.pack(flags), b"\x00", bson.encode(body, codec_options=codec)]
    for identifier, docs in sequences:
        encoded = getattr(docs, "encoded", None)  # an EncodedBatch: the bytes of its documents
        if encoded is None:
            encoded = b"".join(bson.encode(d, codec_options=codec) for d in docs)
        payload = identifier.encode("utf-8") + b"\x00" + encoded
        parts.append(b"\x01" + _INT32.pack(len(payload) + 4) + payload)
    data = b"".join(parts)
    return HEADER.pack(HEADER.size + len(data), request_id, 0, OP_MSG) + data


def with_request_id(message, request_id):
    """``message`` (encoded) under another request id."""
    return message[:4] + _INT32.pack(request_id) + message[8:]


def encode_op_query(request_id, namespace, query, flags=0, number_to_return=-1, codec=CODEC):
    data = (_INT32.pack(flags) + namespace.encode("utf-8") + b"\x00"
            + _INT32.pack(0) + _INT32.pack(number_to_return) + bson.encode(query, codec_options=codec))
    return HEADER.pack(HEADER.size + len(data), request_id, 0, OP_QUERY) + data


def encode_op_reply(request_id, response_to, docs, flags=0, codec=CODEC):
    """Used by the simulated deployment to answer OP_QUERY."""
    body = b"".join(bson.encode(d, codec_options=codec) for d in docs)
    data = struct.pack("<iqii", flags, 0, 0, len(docs)) + body
    return HEADER.pack(HEADER.size + len(data), request_id, response_to, OP_REPLY) + data


def check_header(raw, max_message_size=DEFAULT_MAX_MESSAGE_SIZE, expect_response_to=None):
    """Validate a 16-byte header before its body is read."""
    if len(raw) != HEADER.size:
        raise ProtocolError(f"truncated message header: {len(raw)} of {HEADER.size} bytes")
    header = Header(*HEADER.unpack(raw))
    if header.length < HEADER.size or header.length > max_message_size:
        raise ProtocolError(f"message length {header.length} is outside 16..{max_message_size} "
                            f"(maxMessageSizeBytes)")
    if expect_response_to is not None and header.response_to != expect_response_to:
        raise ProtocolError(f"reply responseTo {header.response_to} does not match request "
                            f"{expect_response_to}")
    if header.op_code not in (OP_MSG, OP_REPLY, OP_QUERY, OP_COMPRESSED):
        raise ProtocolError(f"unexpected opCode {header.op_code}")
    return header


class UndecodableDocument(Exception):
    """A well-formed reply the user's codec cannot decode (a date outside Python's range):
    the user's error, ``error`` (bson's InvalidBSON), not the connection's.
    ``flags`` are the OP_MSG's (a streaming reply still ends its stream)."""

    def __init__(self, error, flags=0):
        super().__init__(str(error))
        self.error, self.flags = error, flags


def _decode_doc(data, where, codec=CODEC, user_fields=None):
    """One document. With a codec of the user's, ``user_fields`` names where the user's
    documents are ({"cursor": {"firstBatch": 1}}): a type registry's decoders apply there
    only, as in PyMongo (bson's selective decoding); everything else is decoded whole."""
    try:
        if codec is CODEC or not codec.type_registry._decoder_map:
            return bson.decode(data, codec_options=codec)
        return bson._decode_all_selective(data, codec, user_fields)[0]
    except Exception as exc:  # bson raises several types for malformed input
        # Only the user's documents decoded with the user's codec: the driver's own replies
        # (hello, handshake) must decode, or the server is not speaking the protocol.
        if codec is not CODEC and isinstance(exc, bson.errors.InvalidBSON) and \
                _well_formed(data, codec):
            raise UndecodableDocument(exc) from None
        raise ProtocolError(f"invalid BSON in {where}: {exc}") from None


def _well_formed(data, codec):
    try:
        bson.decode(data, codec_options=_ANY_DATE.with_options(
            unicode_decode_error_handler=codec.unicode_decode_error_handler))
    except Exception:  # malformed: the protocol's error
        return False
    return True


def _doc_length(body, offset, where):
    if offset + 4 > len(body):
        raise ProtocolError(f"truncated document in {where}")
    length = _INT32.unpack_from(body, offset)[0]
    if length < 5 or offset + length > len(body):
        raise ProtocolError(f"document length {length} overruns {where}")
    return length


def _section(data, flags, codec, user_fields):
    """The kind 0 section's document; a user's undecodable document says the reply's flags
    (an exhaust cursor's moreToCome must still be honoured)."""
    try:
        return _decode_doc(data, "OP_MSG section", codec, user_fields)
    except UndecodableDocument as exc:
        exc.flags = flags
        raise


def decode_op_msg(body, codec=CODEC, user_fields=None):
    """The body of an OP_MSG (after the header): (flags, kind 0 document, {identifier: docs})."""
    if len(body) < 5:
        raise ProtocolError("truncated OP_MSG")
    flags = _UINT32.unpack_from(body, 0)[0]
    if flags & ~_KNOWN_FLAGS & 0xFFFF:
        raise ProtocolError(f"OP_MSG has unknown required flag bits {flags:#x}")
    end = len(body) - (4 if flags & CHECKSUM_PRESENT else 0)
    # Most replies are one kind 0 section up to the end: read without the sections' loop.
    if end >= 10 and body[4] == 0 and _INT32.unpack_from(body, 5)[0] == end - 5:
        return flags, _section(body[5:end], flags, codec, user_fields), {}
    offset, document, sequences = 4, None, {}
    while offset < end:
        kind = body[offset]
        offset += 1
        if kind == 0:
            length = _doc_length(body[:end], offset, "OP_MSG section")
            if document is not None:
                raise ProtocolError("OP_MSG has two kind 0 sections")
            document = _section(body[offset:offset + length], flags, codec, user_fields)
            offset += length
        elif kind == 1:
            size = _doc_length(body[:end], offset, "OP_MSG document sequence")
            stop = offset + size
            name_end = body.find(b"\x00", offset + 4, stop)
            if name_end < 0:
                raise ProtocolError("OP_MSG document sequence has no identifier")
            identifier = body[offset + 4:name_end].decode("utf-8", "replace")
            docs, pos = [], name_end + 1
            while pos < stop:
                length = _doc_length(body[:stop], pos, "OP_MSG document sequence")
                docs.append(_decode_doc(body[pos:pos + length], "OP_MSG document sequence",
                                        codec))
                pos += length
            sequences[identifier] = docs
            offset = stop
        else:
            raise ProtocolError(f"unknown OP_MSG section kind {kind}")
    if document is None:
        raise ProtocolError("OP_MSG has no kind 0 section")
    return flags, document, sequences


def decode_op_reply(body):
    """The first document of an OP_REPLY; a QueryFailure reply is returned as ok: 0."""
    if len(body) < 20:
        raise ProtocolError("truncated OP_REPLY")
    flags, _cursor_id, _start, count = struct.unpack_from("<iqii", body, 0)
    if count < 1:
        raise ProtocolError("OP_REPLY carries no document")
    length = _doc_length(body, 20, "OP_REPLY")
    doc = _decode_doc(body[20:20 + length], "OP_REPLY")
    if flags & REPLY_QUERY_FAILURE:
        doc = dict(doc, ok=0, errmsg=doc.get("$err", "query failure"))
    return doc


def decode_op_query(body, codec=CODEC):
    """(flags, namespace, query) of an OP_QUERY body; used by the simulated deployment."""
    flags = _INT32.unpack_from(body, 0)[0]
    end = body.find(b"\x00", 4)
    if end < 0:
        raise ProtocolError("OP_QUERY has no namespace")
    namespace = body[4:end].decode("utf-8", "replace")
    offset = end + 1 + 8
    length = _doc_length(body, offset, "OP_QUERY")
    return flags, namespace, _decode_doc(body[offset:offset + length], "OP_QUERY", codec)


def decode_reply(header, body, max_message_size=DEFAULT_MAX_MESSAGE_SIZE, compressed=False,
                 codec=CODEC, user_fields=None):
    """The reply document; an OP_COMPRESSED reply only where compression was negotiated."""
    # The usual reply, no flags and one kind 0 section to the end, in one step (a scan
    # decodes one a member); any other takes decode_op_msg's whole reading.
    if header.op_code == OP_MSG and len(body) >= 10:
        flags, kind, length = _SECTION_START.unpack_from(body)
        if not flags and not kind and length == len(body) - 5:
            return _decode_doc(body[5:], "OP_MSG section", codec, user_fields)
    return decode_reply_flags(header, body, max_message_size, compressed, codec,
                              user_fields)[1]


def decode_reply_flags(header, body, max_message_size=DEFAULT_MAX_MESSAGE_SIZE,
                       compressed=False, codec=CODEC, user_fields=None):
    """(OP_MSG flags, reply document): moreToCome says another reply follows (exhaust). Pure:
    the connection holds signals around it (``connection.signals_held``)."""
    if header.op_code == OP_COMPRESSED:
        if not compressed:
            raise ProtocolError("the server sent a compressed reply, but compression was not "
                                "negotiated on this connection")
        from singlemongo.wire.compression import decompress_body  # loaded where compression was negotiated
        op_code, body = decompress_body(body, max_message_size)
        header = Header(HEADER.size + len(body), header.request_id, header.response_to, op_code)
    if header.op_code == OP_MSG:
        flags, document, _ = decode_op_msg(body, codec, user_fields)
        return flags, document
    if header.op_code == OP_REPLY:
        return 0, decode_op_reply(body)
    raise ProtocolError(f"unexpected reply opCode {header.op_code}")
