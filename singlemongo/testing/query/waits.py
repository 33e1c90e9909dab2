"""What a command asks its server to wait before replying (``$where``'s ``sleep(ms)``), kept
for the thread that runs the command: the server waits after the command, with the store's
lock released and its own thread free to serve other clients (it defers the reply, as for a
blockConnection fail point). Each simulated server runs one command at a time on its thread,
so the thread's pending wait is that command's."""
import threading

_pending = threading.local()


def add(seconds):
    """The running command asks for ``seconds`` more before its reply."""
    _pending.seconds = pending() + seconds


def pending():
    """What the running command has asked for so far."""
    return getattr(_pending, "seconds", 0.0)


def replace(seconds):
    """The reply goes out after ``seconds`` instead (a read interrupted at its maxTimeMS)."""
    _pending.seconds = seconds


def take():
    """The wait asked for by the command that just ran; the next command starts from none."""
    seconds, _pending.seconds = pending(), 0.0
    return seconds
