"""The only module that reads time, sleeps or draws random numbers.

The standard functions are looked up at call time, so ``freezegun`` (which patches the ``time``
module) and tests that install a :class:`FakeClock` both see their replacement.

Two kinds of time: ``monotonic`` is the clock SDAM reasons with (heartbeats, cooldowns, the
500 ms rescan interval) and may be frozen or moved by tests; ``io_time`` bounds real waits on
sockets and always moves with real time, frozen or not (freezegun does not patch
``clock_gettime``), so a deadline on a read can always pass. ``Deadline`` is built on it.
"""
from __future__ import annotations

import os
import sys
import time
TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Optional
    from singlemongo.fake_clock import FakeClock as FakeClock  # served by __getattr__

_MONOTONIC = getattr(time, "CLOCK_MONOTONIC", None)


def _real_time():
    """Real monotonic seconds, even under freezegun."""
    if _MONOTONIC is not None:
        return time.clock_gettime(_MONOTONIC)
    return time.perf_counter()  # platforms without clock_gettime (freezegun patches this one)


def time_is_frozen():
    """Whether freezegun holds time still (``freeze_time`` without ``tick``): sleeping could
    then never end a wait on the clock; freezegun itself is never imported here."""
    api = sys.modules.get("freezegun.api")
    factories = getattr(api, "freeze_factories", None) if api is not None else None
    return bool(factories) and type(factories[-1]).__name__ == "FrozenDateTimeFactory"


_random = None  # the random module, once a draw has loaded it


def _load_random():
    global _random
    import random
    _random = random
    return random


class Clock:
    """Real time: monotonic seconds, wall-clock seconds, sleep and jitter. While freezegun
    holds time still, ``sleep`` returns at once: a wait only time could end (the rescan
    interval, a backoff) is counted by its ``Budget`` and bounded by a count, not slept."""

    def monotonic(self):
        return time.monotonic()

    def wall(self):
        return time.time()

    def io_time(self):
        """Seconds that always move with real time: deadlines of socket waits."""
        return _real_time()

    def sleep(self, seconds):
        if seconds > 0 and not time_is_frozen():
            time.sleep(seconds)

    # ``random`` (0.8 ms to import) is loaded by the first draw: only retries, multi-server
    # scans and SRV shuffles draw; a one-off that succeeds never does. Then kept: an import
    # statement per draw costs more than the draw (a large scan draws once a server).

    def random(self):
        return (_random or _load_random()).random()

    def shuffle(self, items):
        (_random or _load_random()).shuffle(items)

    def choice(self, items):
        return (_random or _load_random()).choice(items)

    def random_bytes(self, n):
        """Secrets (SCRAM nonces) come from the OS, never from ``random``."""
        return os.urandom(n)

    def uuid4(self):
        import uuid
        return uuid.uuid4()


class Budget:
    """Time used against a budget of ``timeout_s`` on ``clock.monotonic()``; it counts its own
    sleeps even when the clock is frozen (freezegun), so a loop bounded by it always ends."""

    __slots__ = ("clock", "start", "timeout_s", "slept", "_now")

    def __init__(self, clock, timeout_s: float, io: bool = False):
        """``io``: measured on ``clock.io_time()``, as timeoutMS deadlines are (real waits
        count even on a FakeClock)."""
        self.clock = clock
        self._now = clock.io_time if io else clock.monotonic
        self.start = self._now()
        self.timeout_s = timeout_s
        self.slept = 0.0

    def now(self) -> float:
        return max(self._now(), self.start + self.slept)

    @property
    def elapsed(self) -> float:
        return self.now() - self.start

    @property
    def deadline(self) -> float:
        return self.start + self.timeout_s

    def allows(self, extra: float = 0.0) -> bool:
        """Whether ``extra`` more seconds still fit in the budget."""
        return self.elapsed + extra < self.timeout_s

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.clock.sleep(seconds)
            self.slept += seconds


class Deadline:
    """When some work must be done by, on ``clock.io_time()``; ``None`` seconds: never."""

    __slots__ = ("clock", "at", "what", "seconds")

    def __init__(self, clock, seconds: Optional[float], what: str = "the operation"):
        self.clock = clock
        self.seconds = seconds  # as long as it was made for
        self.at = None if seconds is None else clock.io_time() + seconds
        self.what = what  # named in timeout errors: "timeoutMS 2000", "socketTimeoutMS 300"

    def remaining(self) -> Optional[float]:
        return None if self.at is None else self.at - self.clock.io_time()

    def expired(self) -> bool:
        return self.at is not None and self.clock.io_time() >= self.at

    def sooner(self, seconds: Optional[float], what: str) -> "Deadline":
        """The earlier of this deadline and one ``seconds`` from now."""
        other = Deadline(self.clock, seconds, what)
        if other.at is None or (self.at is not None and self.at <= other.at):
            return self
        return other


DEFAULT_CLOCK = Clock()


def __getattr__(name):
    # FakeClock is for tests: made where they ask for it, not by every one-off (its class
    # and code cost a one-off 0.18 M instructions).
    if name == "FakeClock":
        from singlemongo.fake_clock import FakeClock as made
        return made
    if name == "__path__":  # asked by every `from singlemongo.clock import ...`
        raise AttributeError(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
