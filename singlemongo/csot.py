"""``singlemongo.timeout(seconds)`` (as ``pymongo.timeout``): one deadline for a block of
operations (client-side operations timeout, "timeout" API).

Inside ``with timeout(5):`` every operation of every client shares a deadline 5 s after the
block began; it replaces the client's ``timeoutMS``. Nested blocks can only shorten it;
``timeout(0)`` means no deadline at all (the client's ``timeoutMS`` is not applied either) and
``timeout(None)`` leaves the client's ``timeoutMS`` in force, as in PyMongo. The block is measured on real time; a client with an injected clock
(FakeClock) measures what is left on its own clock from its first operation in the block, so
the backoffs it fakes are counted too.

The driver starts no thread, so the blocks in force are a plain stack, not a context variable.
"""
from __future__ import annotations

from types import TracebackType
from typing import Any, Optional

from singlemongo.clock import DEFAULT_CLOCK, Deadline

_BLOCKS: list[_TimeoutBlock] = []


class _TimeoutBlock:
    """What ``timeout()`` returns: a context manager (not reentrant)."""

    def __init__(self, seconds: Optional[float], fresh: bool = False) -> None:
        self._seconds = seconds
        self._fresh = fresh  # the blocks around it do not shorten it
        self._at: Optional[float] = None  # real io_time at which it expires; None: never
        self.transparent = False  # timeout(None) outside any block: the client's timeoutMS
        self._deadlines: dict[int, Deadline] = {}  # per client clock, made on first use

    def __enter__(self) -> None:
        at = DEFAULT_CLOCK.io_time() + self._seconds if self._seconds else None
        outer = _BLOCKS[-1]._at if _BLOCKS and not self._fresh else None
        if outer is not None and (at is None or outer < at):
            at = outer  # a nested block can only shorten the deadline
        self._at = at if (self._seconds or outer is not None) else None
        self.transparent = self._seconds is None and not _BLOCKS
        self._deadlines = {}
        _BLOCKS.append(self)

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        if self in _BLOCKS:
            _BLOCKS.remove(self)

    def deadline_for(self, clock: Any) -> Optional[Deadline]:
        """The block's deadline on ``clock`` (None: no deadline)."""
        if self._at is None:
            return None
        deadline = self._deadlines.get(id(clock))
        if deadline is None:
            left = self._at - DEFAULT_CLOCK.io_time()
            deadline = Deadline(clock, left, f"timeout({self._seconds:g})")
            self._deadlines[id(clock)] = deadline
        return deadline


def timeout(seconds: Optional[float]) -> _TimeoutBlock:
    """A block whose operations share one deadline ``seconds`` from its start (0: no
    deadline; None: the client's timeoutMS). An operation that runs out raises an error whose ``timeout`` is True. Raises
    TypeError for a value that is not a number, ValueError for a negative one."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float, type(None))):
        raise TypeError(f"timeout must be None, an int, or a float, not {type(seconds)}")
    if seconds and seconds < 0:
        raise ValueError("timeout cannot be negative")
    return _TimeoutBlock(None if seconds is None else float(seconds))


def refreshed(seconds: float) -> _TimeoutBlock:
    """A block of ``seconds`` from now, whatever the blocks around it say (client-side
    operations timeout: with_transaction refreshes timeoutMS for the abortTransaction after a
    failed callback). Internal."""
    return _TimeoutBlock(float(seconds), fresh=True)


def current() -> Optional[_TimeoutBlock]:
    """The innermost block in force, or None."""
    return _BLOCKS[-1] if _BLOCKS else None


def check_max_await(topology: Any, max_await_time_ms: int) -> None:
    """CSOT, "Tailable awaitData Cursors" and "Change Streams": maxAwaitTimeMS must be less
    than a non-zero timeoutMS, or every getMore that finds nothing would time out on the
    client before the server's empty reply arrives. Checked before anything is sent (this
    module is loaded by the first cursor with a max_await_time_ms). Internal."""
    from singlemongo.errors import ConfigurationError
    deadline = topology.current_deadline()
    if deadline is None or not deadline.seconds:
        return
    timeout_ms = deadline.seconds * 1000.0
    if max_await_time_ms >= timeout_ms:
        raise ConfigurationError(
            f"max_await_time_ms ({max_await_time_ms}) must be less than the timeout in force "
            f"({deadline.what}, {timeout_ms:.0f} ms): a getMore waits that long on the server "
            f"for data, and the client would give up first; lower max_await_time_ms or raise "
            f"the timeout")
