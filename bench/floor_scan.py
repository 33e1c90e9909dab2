"""The raw floor of a scan: what any driver that follows the SDAM spec must do before a
first read of a replica set it only knows by its seed list. One hello to every seed at
once (non-blocking sockets and one selector), then a find on the primary: socket,
selectors, struct and bson only. The 50-member row's lower bound."""
import selectors
import socket
import struct
import sys

import bson

from floor import command, message


def read_reply(sock, buffer):
    """The reply once ``buffer`` holds all of it, else None."""
    buffer += sock.recv(65536)
    if len(buffer) >= 4 and len(buffer) >= struct.unpack("<i", buffer[:4])[0]:
        return bson.decode(bytes(buffer[21:]))
    return None


def wave(hosts):
    """Each seed's hello reply, by address; the sockets stay open."""
    sel, socks, replies = selectors.DefaultSelector(), {}, {}
    for i, address in enumerate(hosts):
        host, port = address.rsplit(":", 1)
        sock = socket.socket()
        sock.setblocking(False)
        sock.connect_ex((host, int(port)))
        request = message(i, {"hello": 1, "$db": "admin"})
        sel.register(sock, selectors.EVENT_WRITE, (address, request, bytearray()))
        socks[address] = sock
    while len(replies) < len(hosts):
        for key, mask in sel.select(5):
            address, request, buffer = key.data
            if mask & selectors.EVENT_WRITE:
                key.fileobj.send(request)
                sel.modify(key.fileobj, selectors.EVENT_READ, key.data)
            elif (reply := read_reply(key.fileobj, buffer)) is not None:
                replies[address] = reply
                sel.unregister(key.fileobj)
    return socks, replies


def main(uri):
    hosts = uri.split("//", 1)[1].split("/", 1)[0].split(",")
    socks, replies = wave(hosts)
    primary = next(a for a, r in replies.items() if r.get("isWritablePrimary"))
    sock = socks[primary]
    sock.setblocking(True)
    reply = command(sock, len(hosts) + 1, {"find": "c", "filter": {}, "limit": 1,
                                           "singleBatch": True, "$db": "bench"})
    print(reply["cursor"]["firstBatch"][:1])
    for s in socks.values():
        s.close()


if __name__ == "__main__":
    main(sys.argv[1])
