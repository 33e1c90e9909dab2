"""FakeClock: deterministic time for tests (``singlemongo.clock.FakeClock``, its public
name). Its own module: a program that does not test never makes the class."""
from __future__ import annotations

from singlemongo import clock
TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Any, List, Sequence


class FakeClock(clock.Clock):
    """Deterministic time for tests: ``sleep`` advances time instead of waiting."""

    def __init__(self, start: float = 1000.0, wall_start: float = 1_700_000_000.0,
                 jitter: float = 0.5) -> None:
        """Monotonic time starts at ``start``, wall-clock time at ``wall_start``; every
        random draw is ``jitter``."""
        self.now = start
        self._start = start
        self._wall_offset = wall_start - start
        self.jitter = jitter
        self.sleeps: List[float] = []  # every sleep asked for, in order

    def monotonic(self) -> float:
        """The fake time: moved only by ``sleep`` and ``advance``."""
        return self.now

    def io_time(self) -> float:
        """Real time plus every fake sleep: a deadline covers backoffs and real waits alike."""
        return clock._real_time() + (self.now - self._start)

    def wall(self) -> float:
        """Wall-clock seconds, moving with the fake time."""
        return self.now + self._wall_offset

    def sleep(self, seconds: float) -> None:
        """Recorded in ``sleeps``, and the fake time moves on at once."""
        self.sleeps.append(seconds)
        if seconds > 0:
            self.now += seconds

    def advance(self, seconds: float) -> None:
        """Move the fake time on, as time passing would."""
        self.now += seconds

    def random(self) -> float:
        """Always ``jitter``: backoffs and tie-breaks are reproducible."""
        return self.jitter

    def shuffle(self, items: List[Any]) -> None:
        """Leaves ``items`` in their order."""
        pass

    def choice(self, items: Sequence[Any]) -> Any:
        """The first of ``items``."""
        return items[0]
