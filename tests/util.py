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
