"""The one-operation guard and the fork check: a client runs one operation at a time (one
socket per server), and a forked child never touches its parent's sockets.
"""
import _thread
import contextlib
import os

from .. import errors
from ..errors import InvalidOperation
from .deadlines import timeout_block


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

    def another_thread_in_flight(self):
        """Whether another thread's operation holds the client now."""
        return self._owner is not None and self._owner != _thread.get_ident()

    @contextlib.contextmanager
    def operation(self):
        """One operation at a time per client: a thread that finds another thread's operation
        in flight waits for it to finish (their replies would interleave on the one socket
        per server), as a pool of one connection would make it wait: at most what is left of
        timeoutMS, else waitQueueTimeoutMS, else serverSelectionTimeoutMS, then
        WaitQueueTimeoutError."""
        self.check_open()
        me = _thread.get_ident()  # identification only: the driver starts no thread
        if self._owner == me:
            yield  # an operation within an operation, on the same thread
            return
        if not self._in_use.acquire(False):
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
        try:
            yield
        finally:
            self._owner = None
            self._in_use.release()

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
