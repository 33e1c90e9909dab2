"""OP_COMPRESSED (the compression spec): wrapping a message and unwrapping a reply, with
zlib, snappy or zstd, each loaded at its first use. A connection loads this module only when
the handshake negotiated a compressor, so a one-off query without compression loads none of it.

Inflation is bounded by the size the message announces (itself bounded by
maxMessageSizeBytes): a compression bomb is refused before it is inflated past that.
"""
from __future__ import annotations

import struct

from ..errors import ProtocolError
from .messages import DEFAULT_MAX_MESSAGE_SIZE, HEADER, OP_COMPRESSED, Header

COMPRESSOR_IDS = {"noop": 0, "snappy": 1, "zlib": 2, "zstd": 3}
# Commands never compressed (compression spec): the handshake and authentication.
UNCOMPRESSIBLE = frozenset({"hello", "ismaster", "saslstart", "saslcontinue", "getnonce",
                            "authenticate", "createuser", "updateuser", "copydbsaslstart",
                            "copydbgetnonce", "copydb"})


def _too_big(size):
    return ProtocolError(f"OP_COMPRESSED inflates past its announced {size} bytes")


def _zlib(level):
    import zlib  # lazily, as each library: one-off queries without compression load none

    def inflate(data, size):  # stops one byte past ``size``: a bomb is refused early
        inflater = zlib.decompressobj()
        out = inflater.decompress(data, size + 1)
        if len(out) > size or inflater.unconsumed_tail:
            raise _too_big(size)
        return out
    return (lambda b: zlib.compress(b, level)), inflate


def _snappy_length(data):
    """The uncompressed length a snappy block announces (its varint preamble)."""
    length = shift = 0
    for byte in data[:5]:
        length |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return length
        shift += 7
    raise ProtocolError("snappy: a bad length preamble")


def _snappy(level):
    import snappy  # type: ignore[import-untyped, import-not-found]  # extra "snappy"

    def inflate(data, size):  # the block says its length: checked before anything inflates
        if _snappy_length(data) > size:
            raise _too_big(size)
        return snappy.uncompress(data)
    return snappy.compress, inflate


def _zstd(level):
    import zstandard  # type: ignore[import-not-found]  # extra "zstd" (PyMongo's package)

    def inflate(data, size):  # a frame may say its length; the read stops past ``size``
        if zstandard.frame_content_size(data) > size:
            raise _too_big(size)
        with zstandard.ZstdDecompressor().stream_reader(data) as reader:
            out = reader.read(size + 1)
        if len(out) > size:
            raise _too_big(size)
        return out
    compressor = zstandard.ZstdCompressor(level=3)
    return compressor.compress, inflate


# Compression spec: compressor id -> (compress, inflate(data, announced size)) for a level.
CODECS = {0: lambda level: ((lambda b: b), (lambda b, size: b)), 1: _snappy, 2: _zlib,
          3: _zstd}


def _codec(compressor_id, level=-1):
    """(compress, decompress(data, size)) for a compressor id."""
    make = CODECS.get(compressor_id)
    if make is None:
        raise ProtocolError(f"unsupported compressor id {compressor_id}")
    return make(level)


def compress_message(message, compressor, level=-1):
    """Wrap an encoded OP_MSG/OP_QUERY in OP_COMPRESSED, keeping its requestID."""
    header = Header(*HEADER.unpack_from(message))
    compressor_id = COMPRESSOR_IDS[compressor]
    payload = _codec(compressor_id, level)[0](message[HEADER.size:])
    data = struct.pack("<iiB", header.op_code, len(message) - HEADER.size, compressor_id) + payload
    return HEADER.pack(HEADER.size + len(data), header.request_id, header.response_to,
                       OP_COMPRESSED) + data


def decompress_body(body, max_message_size=DEFAULT_MAX_MESSAGE_SIZE):
    """(original opCode, body) of an OP_COMPRESSED body."""
    if len(body) < 9:
        raise ProtocolError("truncated OP_COMPRESSED")
    op_code, size, compressor_id = struct.unpack_from("<iiB", body)
    if size < 0 or size > max_message_size:
        raise ProtocolError(f"OP_COMPRESSED announces {size} bytes, over maxMessageSizeBytes")
    try:
        data = _codec(compressor_id)[1](body[9:], size)
    except ProtocolError:
        raise
    except Exception as exc:
        raise ProtocolError(f"cannot decompress OP_COMPRESSED: {exc}") from None
    if len(data) != size:
        raise ProtocolError(f"OP_COMPRESSED decompressed to {len(data)} bytes, not {size}")
    return op_code, data
