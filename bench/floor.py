"""The raw floor: one connection, one hello, one find, with socket + struct + bson only."""
import socket
import struct
import sys

import bson


def message(request_id, doc):
    """An OP_MSG holding ``doc`` (flags 0, one body section)."""
    body = b"\x00\x00\x00\x00\x00" + bson.encode(doc)
    return struct.pack("<iiii", 16 + len(body), request_id, 0, 2013) + body


def command(sock, request_id, doc):
    sock.sendall(message(request_id, doc))
    header = b""
    while len(header) < 16:
        header += sock.recv(16 - len(header))
    length = struct.unpack("<i", header[:4])[0]
    data = b""
    while len(data) < length - 16:
        data += sock.recv(length - 16 - len(data))
    return bson.decode(data[5:])


def main(host, port):
    sock = socket.create_connection((host, int(port)))
    command(sock, 1, {"hello": 1, "$db": "admin"})
    reply = command(sock, 2, {"find": "c", "filter": {}, "limit": 1, "singleBatch": True,
                              "$db": "bench"})
    print(reply["cursor"]["firstBatch"][:1])


if __name__ == "__main__":
    main(*sys.argv[1].split(":"))
    import os
    if os.environ.get("BENCH_RSS"):
        # VmHWM: the peak of this program's own memory (ru_maxrss would include the
        # forked parent's pages from before exec).
        with open("/proc/self/status") as status:
            print(next(line.split()[1] for line in status if line.startswith("VmHWM")),
                  file=sys.stderr)
