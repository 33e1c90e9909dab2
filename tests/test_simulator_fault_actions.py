"""Each row of the simulator's fault-action table (``testing/failpoints.FAULT_ACTIONS``),
tested on its own with a raw socket: what the client receives (the answer and how its bytes
go out) and whether the command ran."""
import socket
import struct

import bson
import pytest

from singlemongo.testing import Standalone
from singlemongo.testing.failpoints import FAULT_ACTIONS
from singlemongo.wire.messages import encode_op_msg

INSERT = {"insert": "c", "documents": [{"_id": 1}], "$db": "app"}


@pytest.fixture
def standalone():
    with Standalone() as deployment:
        yield deployment


def _exchange(server, timeout=2.0):
    """(reply document or None, raw bytes received, whether the connection ended) for one
    insert sent on a new connection."""
    sock = socket.create_connection(server.address, timeout=timeout)
    received, ended = b"", False
    try:
        sock.sendall(encode_op_msg(7, INSERT))
        while True:
            try:
                chunk = sock.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                ended = True
                break
            if not chunk:
                ended = True
                break
            received += chunk
            if len(received) >= 4 and len(received) >= struct.unpack("<i", received[:4])[0]:
                break
    finally:
        sock.close()
    complete = len(received) >= 16 and len(received) == struct.unpack("<i", received[:4])[0]
    reply = bson.decode(received[21:]) if complete and received[12:16] == \
        struct.pack("<i", 2013) else None
    return reply, received, ended


def _ran(deployment):
    return deployment.store.documents("app", "c") == [{"_id": 1}]


# action -> (what the client gets, whether the command ran)
EXPECTED = {
    "error": ("error reply", False),
    "close": ("nothing, closed", False),
    "hang": ("nothing, open", False),
    "reset": ("half, then closed", True),
    "block": ("ok reply", True),
    "run-then-close": ("nothing, closed", True),
    "write-concern-error": ("write concern error", True),
    "drip": ("ok reply", True),
    "raw-reply": ("raw bytes", True),
}


def _seen(reply, received, ended):
    if received == b"RAW!":
        return "raw bytes"
    if reply is not None and reply.get("writeConcernError"):
        return "write concern error"
    if reply is not None:
        return "ok reply" if reply.get("ok") == 1 else "error reply"
    if received:
        return "half, then closed" if ended else "half, open"
    return "nothing, closed" if ended else "nothing, open"


@pytest.mark.parametrize("action", sorted(FAULT_ACTIONS))
def test_each_fault_action(standalone, action):
    server = standalone.servers[0]
    extra = {"code": 91, "errmsg": "shutting down"} if action == "error" else \
        {"block_s": 0.2} if action == "block" else {"drip_s": 0.001} if action == "drip" else \
        {"raw": lambda request_id: b"RAW!"} if action == "raw-reply" else \
        {"write_concern_error": {"code": 64, "errmsg": "waiting"}} \
        if action == "write-concern-error" else {}
    server.fail("insert", action=action, **extra)
    seen = _seen(*_exchange(server, timeout=0.5 if action == "hang" else 3.0))
    assert (seen, _ran(standalone)) == EXPECTED[action]


def test_the_table_has_a_row_per_action_and_each_is_tested():
    assert set(FAULT_ACTIONS) == set(EXPECTED)
