"""An operation's admission: one at a time (a client has one socket per server), within its
deadline (client-side operations timeout: the timeoutMS an operation starting now gets, from
a ``singlemongo.timeout()`` block or the client's timeoutMS, shared by everything inside its
outermost public call), and never in a forked child on its parent's sockets.
"""
import _thread
import os
import sys

from singlemongo import errors
from singlemongo.clock import Deadline
from singlemongo.errors import InvalidOperation


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

    def timeout_scope(self, deadline=None):
        """The operation's timeoutMS deadline (client-side operations timeout): set by the
        outermost public call, shared by everything inside it (each batch of an insert_many,
        each retry). ``deadline``: one made earlier, for what it bounds across calls (a
        GridFS stream's lifetime), else ``new_deadline()``. A context manager whose value is
        the deadline in force (None: none)."""
        return _TimeoutScope(self, deadline)


class _TimeoutScope:
    """``timeout_scope``'s block. A class, not a generator: a one-off does not load
    contextlib (3 M instructions on Python 3.12+), and every operation enters one."""

    __slots__ = ("owner", "deadline", "outermost")

    def __init__(self, owner, deadline):
        self.owner, self.deadline, self.outermost = owner, deadline, False

    def __enter__(self):
        owner = self.owner
        if owner.deadline is not None:  # inside an outer call: its deadline
            return owner.deadline
        deadline = self.deadline if self.deadline is not None else owner.new_deadline()
        if deadline is not None:
            owner.deadline, self.outermost = deadline, True
        return deadline

    def __exit__(self, *exc):
        if self.outermost:
            self.owner.deadline = None
        return False


def _owner_id():
    """Who runs an operation: the thread, and with greenlets (gevent, eventlet) loaded, the
    greenlet: identification only, the driver starts neither."""
    greenlet = sys.modules.get("greenlet")
    if greenlet is None:
        return _thread.get_ident()
    return _thread.get_ident(), id(greenlet.getcurrent())


class OperationGuard:
    """The Topology's part that admits one operation at a time and notices a fork."""

    def _init_guard(self):
        self.pid = os.getpid()
        self.closed = False
        # Held by the thread running an operation. Reentrant, so that a signal landing
        # between its acquisition and the ``with`` that releases it (CPython checks signals
        # there) cannot lock that thread out of its own client: it knows its thread.
        self._in_use = _thread.RLock()
        self._owner = None

    def check_open(self):
        if self.closed:
            raise InvalidOperation("Cannot use MongoClient after close: a closed client never "
                                   "reconnects; create a new MongoClient (or call "
                                   "singlemongo.get_client again)")

    def check_fork(self):
        """In a forked child, before anything touches a socket: forget the parent's state."""
        if self.pid != os.getpid():
            self.forget_after_fork()

    def holds_operation(self):
        """Whether this thread (greenlet) is inside an operation of this client: admitted,
        its fork check done."""
        return self._owner is not None and self._owner == _owner_id()

    def another_thread_in_flight(self):
        """Whether another thread's (or greenlet's) operation holds the client now."""
        return self._owner is not None and self._owner != _owner_id()

    def operation(self):
        """One operation at a time per client: a thread that finds another thread's operation
        in flight waits for it to finish (their replies would interleave on the one socket
        per server), as a pool of one connection would make it wait: at most what is left of
        timeoutMS, else waitQueueTimeoutMS, else serverSelectionTimeoutMS, then
        WaitQueueTimeoutError. Another greenlet of the same thread cannot wait (it would
        block the thread): InvalidOperation at once. A context manager."""
        return _Admission(self)

    def _admit(self):
        """Take the client for this thread's operation; False if it already holds it (an
        operation within an operation), True if it must be released."""
        self.check_open()
        me = _owner_id()
        if self._owner == me:
            return False  # an operation within an operation, on the same thread
        acquired = self._in_use.acquire(False)
        if acquired and self._owner is not None:
            # The lock is this OS thread's, reentrant: another greenlet of this thread holds
            # the client. It cannot be waited for (waiting would block the thread it runs
            # on), and it must not share the socket.
            self._in_use.release()
            raise InvalidOperation(
                "this MongoClient is running another greenlet's operation: a singlemongo "
                "client runs one operation at a time (one socket per server), and a greenlet "
                "cannot wait for one of the same thread. Give each greenlet (each request) its "
                "own client: call singlemongo.get_client(uri) in the request (it lends the "
                "greenlet a client until the greenlet ends), or use `with "
                "singlemongo.MongoClient(uri) as client:`")
        if not acquired:
            wait_s = self._wait_queue_timeout_s()
            if not self._in_use.acquire(True, wait_s):
                raise errors.WaitQueueTimeoutError(
                    f"waited {wait_s * 1000:.0f} ms for another thread's operation on this "
                    f"MongoClient to finish: a singlemongo client runs one operation at a "
                    f"time (one socket per server). Give each thread its own client "
                    f"(singlemongo.get_client(uri)), or raise waitQueueTimeoutMS")
            if self.closed:
                self._in_use.release()
                self.check_open()
        self._owner = me
        return True

    def _wait_queue_timeout_s(self):
        """How long a thread waits for the client (see ``operation``): timeoutMS when in
        force, which overrides the deprecated waitQueueTimeoutMS (client-side operations
        timeout, "Validation and Overrides"), else waitQueueTimeoutMS, else
        serverSelectionTimeoutMS: never without a bound."""
        options = self.options
        block = timeout_block()
        if block is not None:
            deadline = block.deadline_for(self.clock)
            if deadline is not None:
                return max(deadline.remaining(), 0.0)
        elif options.timeout_ms:
            return options.timeout_ms / 1000.0
        if options.wait_queue_timeout_ms:
            return options.wait_queue_timeout_ms / 1000.0
        return options.server_selection_timeout_ms / 1000.0


class _Admission:
    """``operation``'s block (a class, as ``_TimeoutScope``)."""

    __slots__ = ("guard", "admitted")

    def __init__(self, guard):
        self.guard, self.admitted = guard, False

    def __enter__(self):
        self.admitted = self.guard._admit()

    def __exit__(self, *exc):
        if self.admitted:
            self.admitted = False
            guard = self.guard
            guard._owner = None
            guard._in_use.release()
        return False
