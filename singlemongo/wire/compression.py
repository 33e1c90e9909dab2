"""OP_COMPRESSED (the compression spec): wrapping a message and unwrapping a reply, with
zlib, snappy or zstd, each loaded at its first use. A connection loads this module only when
the handshake negotiated a compressor, so a one-off query without compression loads none of it.

Inflation is bounded by the size the message announces (itself bounded by the
connection's max_reply_size): a compression bomb is refused before it is inflated past that.
"""
from __future__ import annotations

import struct

from singlemongo.errors import ProtocolError
from singlemongo.wire.messages import DEFAULT_MAX_MESSAGE_SIZE, HEADER, OP_COMPRESSED, Header

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


# zstd's modules, in PyMongo 4.20's order of preference: the standard library's (3.14+),
# its backport (what PyMongo's "zstd" extra installs), then the older zstandard package.
ZSTD_MODULES = ("compression.zstd", "backports.zstd", "zstandard")


def zstd_module():
    """The first zstd module installed (by its name in ZSTD_MODULES), or None."""
    from importlib.util import find_spec
    for name in ZSTD_MODULES:
        try:
            if find_spec(name) is not None:
                return name
        except ImportError:  # find_spec imports the parent package: "compression" may not be
            continue
    return None


def _zstd(level):
    import importlib
    name = zstd_module()
    if name is None:
        raise ProtocolError("zstd was negotiated but no zstd module is installed")
    zstd = importlib.import_module(name)
    if name == "zstandard":
        return _zstandard(zstd)

    def inflate(data, size):  # a frame may say its length; the inflation stops past ``size``
        announced = zstd.get_frame_info(data).decompressed_size
        if announced is not None and announced > size:
            raise _too_big(size)
        out = zstd.ZstdDecompressor().decompress(data, max_length=size + 1)
        if len(out) > size:
            raise _too_big(size)
        return out
    return (lambda b: zstd.compress(b, 3)), inflate


def _zstandard(zstandard):
    def inflate(data, size):
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
