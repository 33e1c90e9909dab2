"""Helpers for tests that look at the simulated servers, which run in their own threads."""
import time


def eventually(predicate, timeout=3.0):
    """True once ``predicate()`` is; for effects a server thread applies after a
    fire-and-forget message (endSessions with moreToCome)."""
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        if predicate():
            return True
        time.sleep(0.005)
    return predicate()


def selection_records(caplog, action):
    """The structured server selection log records ``action()`` emits."""
    import logging
    caplog.set_level(logging.DEBUG, logger="singlemongo.serverSelection")
    action()
    return [r.mongodb for r in caplog.records if r.name == "singlemongo.serverSelection"]


class EventTexts:
    """A command listener keeping the repr of every command, reply and failure, for tests
    that search them for a secret (it is a listener of singlemongo's: duck-typed)."""

    def __init__(self):
        self.seen = []

    def started(self, event):
        self.seen.append(repr(event.command))

    def succeeded(self, event):
        self.seen.append(repr(event.reply))

    def failed(self, event):
        self.seen.append(repr(event.failure))


def one_off_cost(rs, uri, **client_options):
    """A one-off find_one on ``rs`` (after a reset, with one document seeded), and what it
    cost each member, in member order: (connections, commands other than endSessions)."""
    from singlemongo import MongoClient
    rs.reset()
    rs.store.seed("app", "c", [{"_id": 1}])
    client = MongoClient(uri, **client_options)
    doc = client.app.c.find_one({"_id": 1})
    client.close()
    return doc, [(s.connections, sum(n for name, n in s.commands.items()
                                     if name != "endSessions")) for s in rs.servers]


def wait_or_explain(proc, timeout):
    """``proc``'s exit status within ``timeout`` seconds; if it is still running, it is made to
    dump its threads' stacks (faulthandler, on SIGABRT) and the assertion shows them, with the
    signals it blocks and ignores: a hang after a signal says where it hangs."""
    import os
    import signal
    import subprocess
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with open(f"/proc/{proc.pid}/status") as status:
            masks = [line.strip() for line in status if line.startswith(("SigBlk", "SigIgn",
                                                                          "SigPnd", "ShdPnd"))]
        os.kill(proc.pid, signal.SIGABRT)
        _, err = proc.communicate(timeout=10)
        err = err.decode() if isinstance(err, bytes) else err
        raise AssertionError(f"still running {timeout} s later; {masks}; stderr: {err[-4000:]}")




def raw_answer(document):
    """A simulated server's ``raw-reply`` fault: ``document`` as the OP_MSG answering the
    request it gets, whatever it holds."""
    import struct

    from singlemongo.wire import messages as wire

    def raw(request_id):
        message = wire.encode_op_msg(0, document)
        length = struct.unpack_from("<i", message)[0]
        return wire.HEADER.pack(length, request_id + 1, request_id, wire.OP_MSG) + message[16:]
    return raw
