"""The only module that reads time, sleeps or draws random numbers.

The standard functions are looked up at call time, so ``freezegun`` (which patches the ``time``
module) and tests that install a :class:`FakeClock` both see their replacement.
"""
import os
import random
import time


class Clock:
    """Real time: monotonic seconds, wall-clock seconds, sleep and jitter."""

    def monotonic(self):
        return time.monotonic()

    def wall(self):
        return time.time()

    def sleep(self, seconds):
        if seconds > 0:
            time.sleep(seconds)

    def random(self):
        return random.random()

    def shuffle(self, items):
        random.shuffle(items)

    def choice(self, items):
        return random.choice(items)

    def random_bytes(self, n):
        """Secrets (SCRAM nonces) come from the OS, never from ``random``."""
        return os.urandom(n)

    def uuid4(self):
        import uuid
        return uuid.uuid4()


class FakeClock(Clock):
    """Deterministic time for tests: ``sleep`` advances time instead of waiting."""

    def __init__(self, start=1000.0, wall_start=1_700_000_000.0, jitter=0.5):
        self.now = start
        self._wall_offset = wall_start - start
        self.jitter = jitter
        self.sleeps = []

    def monotonic(self):
        return self.now

    def wall(self):
        return self.now + self._wall_offset

    def sleep(self, seconds):
        self.sleeps.append(seconds)
        if seconds > 0:
            self.now += seconds

    def advance(self, seconds):
        self.now += seconds

    def random(self):
        return self.jitter

    def shuffle(self, items):
        pass

    def choice(self, items):
        return items[0]


DEFAULT_CLOCK = Clock()
