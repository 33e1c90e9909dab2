"""Deadlines (client-side operations timeout): the timeoutMS an operation starting now gets,
from a ``singlemongo.timeout()`` block or the client's timeoutMS, and the one the operation
in flight runs under, shared by everything inside its outermost public call.
"""
import contextlib
import sys

from ..clock import Deadline


def positive(seconds):
    """A socket timeout from what is left of a deadline (never zero: that means non-blocking)."""
    return None if seconds is None else max(seconds, 0.001)


def timeout_block():
    """The ``singlemongo.timeout()`` block that sets the timeout of an operation starting now
    (``timeout(None)`` outside any block leaves the client's timeoutMS), or None. csot.py is
    only loaded by a program using it."""
    csot = sys.modules.get("singlemongo.csot")
    block = csot.current() if csot is not None else None
    return block if block is not None and not block.transparent else None


class Deadlines:
    """The Topology's part that owns ``deadline``, the current operation's timeoutMS (None
    while no operation runs, or when none applies)."""

    deadline = None

    def new_deadline(self, refreshed_s=None, what=None):
        """The deadline an operation starting now gets (None: none): a
        ``singlemongo.timeout()`` block in force replaces the client's timeoutMS.
        ``refreshed_s``: the timeout a cursor was created with, refreshed for its close or
        each next() of a tailable cursor (CSOT, "Cursors"), unless a block overrides it;
        ``what`` names it in errors."""
        block = timeout_block()
        if block is not None:
            return block.deadline_for(self.clock)
        if refreshed_s is not None:
            return Deadline(self.clock, refreshed_s, what or f"timeoutMS {refreshed_s * 1000:.0f}"
                                                             f" (refreshed for close)")
        if self.options.timeout_ms:
            ms = self.options.timeout_ms
            return Deadline(self.clock, ms / 1000.0, f"timeoutMS {ms}")
        return None

    def current_deadline(self):
        """The deadline of the operation in flight, else the one an operation starting now
        would get (None: none)."""
        return self.deadline or self.new_deadline()

    def timeout_in_force(self):
        """Whether timeoutMS applies to an operation starting now, 0 (no deadline) included:
        a ``timeout()`` block other than ``timeout(None)`` outside any block, or the
        client's timeoutMS."""
        return timeout_block() is not None or self.options.timeout_ms is not None

    @contextlib.contextmanager
    def timeout_scope(self, deadline=None):
        """The operation's timeoutMS deadline (client-side operations timeout): set by the
        outermost public call, shared by everything inside it (each batch of an insert_many,
        each retry). ``deadline``: one made earlier, for what it bounds across calls (a
        GridFS stream's lifetime), else ``new_deadline()``."""
        if self.deadline is not None:
            yield self.deadline
            return
        if deadline is None:
            deadline = self.new_deadline()
        if deadline is None:
            yield None
            return
        self.deadline = deadline
        try:
            yield self.deadline
        finally:
            self.deadline = None
