"""What the tests of a run asked the simulated deployments for and they do not implement.

A command the simulator does not know is refused as MongoDB refuses an unknown command
(CommandNotFound, 59), and a feature of a known command it does not simulate is NotImplemented
(238). Either may be a mistake in the code under test or a gap of the simulator; the pytest
plugin prints the list at the end of the run, so a user can tell which. Counted per process:
the deployments a test starts serve from threads of the test's own process.
"""
import collections
import threading

# code -> (what it is called in the report, the code's name)
KINDS = {59: ("command", "CommandNotFound"), 238: ("feature", "NotImplemented")}
_seen: collections.Counter = collections.Counter()
_lock = threading.Lock()


def note(command, reply):
    """Count ``reply`` if it is one of the simulator's refusals of ``command``."""
    code = reply.get("code") if not reply.get("ok") else None
    if code not in KINDS:
        return
    what = command if code == 59 else str(reply.get("errmsg", command))[:120]
    with _lock:
        _seen[(code, what)] += 1


def counts():
    """What this process saw, as [[code, what, count], ...] (what a pytest-xdist worker
    sends to the controller)."""
    with _lock:
        return [[code, what, count] for (code, what), count in _seen.items()]


def merge(seen):
    """Add what another process saw (``counts()`` of a pytest-xdist worker)."""
    with _lock:
        for code, what, count in seen:
            _seen[(code, what)] += count


def report():
    """One line per gap, most asked first: ``command NAME: COUNT (CommandNotFound, 59)``."""
    with _lock:
        items = sorted(_seen.items(), key=lambda item: (-item[1], item[0]))
    return [f"{KINDS[code][0]} {what}: {count} ({KINDS[code][1]}, {code})"
            for (code, what), count in items]
