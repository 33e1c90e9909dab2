"""Signal handlers deferred while a reply is decoded, in a process with other threads
(issue 46). ``pthread_sigmask`` holds a signal in one thread only: a signal sent to the
process is then delivered to another thread, and Python runs its handler in the main thread
at once, inside bson's decoding, which turns the handler's exception into InvalidBSON. So in
the main thread the Python handlers themselves are replaced, for the call, by one that notes
the signal, and the real handlers run after. Loaded only when other threads run.
"""
import _thread
import sys
from typing import Any, Callable, Tuple


def _main_thread():
    """The main thread's id (where Python runs signal handlers): threading's, when loaded
    (any thread it started loaded it), else the thread running now."""
    threading = sys.modules.get("threading")
    return threading.main_thread().ident if threading is not None else _thread.get_ident()


def call_in_main_thread(sig: Any, signals: set, fn: Callable[..., Any],
                        args: tuple) -> Tuple[bool, Any]:
    """(True, ``fn(*args)``) with the handlers deferred, in the main thread; (False, None)
    elsewhere (Python runs no handler in another thread: the caller holds the signals)."""
    if _thread.get_ident() != _main_thread():
        return False, None
    return True, _handlers_deferred(sig, signals, fn, args)


def _handlers_deferred(sig: Any, signals: set, fn: Callable[..., Any], args: tuple) -> Any:
    """``fn(*args)`` with every Python signal handler replaced by one that notes the signal;
    the real handlers run afterwards, in order, and what they raise propagates."""
    pending: list = []
    replaced = {}
    for signum in signals:
        handler = sig.getsignal(signum)
        if callable(handler):
            replaced[signum] = handler
    try:
        for signum in replaced:
            sig.signal(signum, lambda signum, frame: pending.append((signum, frame)))
        return fn(*args)
    finally:
        for signum, handler in replaced.items():
            sig.signal(signum, handler)
        for signum, frame in pending:
            replaced[signum](signum, frame)
