"""``ClientSession.with_transaction`` (the convenient transactions API, as PyMongo 4.20 runs
it): start, call back, commit; retry the whole transaction on TransientTransactionError and
the commit on UnknownTransactionCommitResult, for at most 120 s, or within timeoutMS when one
is set (client-side operations timeout, "Convenient Transactions API": a ``timeout()`` block
around the call, else the session's ``default_timeout_ms``, else the client's ``timeoutMS``).
With timeoutMS the whole call, the callback's operations included, runs in one ``timeout()``
block; after a failed callback the abortTransaction gets a refreshed timeoutMS.

The 120 s are measured on the client's clock (``clock.py``): a FakeClock's backoffs advance
it and a freezegun test moves it, so the limit is reached without really waiting; the
backoffs are counted even when the clock is frozen, and the attempts are bounded by a count,
so frozen time never loops for ever.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional, TypeVar

from singlemongo.clock import Budget
from singlemongo.errors import ExecutionTimeout, InvalidOperation, NetworkTimeout, PyMongoError
from singlemongo.transaction import TRANSIENT, UNKNOWN_COMMIT, TransactionOptions

if TYPE_CHECKING:
    from singlemongo.client_session import ClientSession

TIME_LIMIT_S = 120.0
# A jittered exponential backoff between attempts (PyMongo 4.20's constants).
BACKOFF_INITIAL_S = 0.005
BACKOFF_MAX_S = 0.5
MAX_ATTEMPTS = 10_000
MAX_TIME_MS_EXPIRED = 50
_T = TypeVar("_T")


def run(session: ClientSession, callback: Callable[[ClientSession], _T],
        options: TransactionOptions) -> _T:
    """What ``session.with_transaction(callback, ...)`` does."""
    clock = session.client._topology.clock
    seconds = _timeout_s(session)
    if seconds is None:
        return _run(session, callback, options, Budget(clock, TIME_LIMIT_S), None)
    from singlemongo.csot import timeout
    with timeout(seconds):  # inside a block already: the same deadline
        return _run(session, callback, options, Budget(clock, seconds, io=True), seconds)


def _timeout_s(session: ClientSession) -> Optional[float]:
    """The timeoutMS that bounds the call (seconds; None: none, the 120 s apply): a
    ``timeout()`` block, else the session's ``default_timeout_ms``, else the client's."""
    from singlemongo.client_session import _timeout_block_in_force
    ms = session.options.default_timeout_ms
    if ms is not None and not _timeout_block_in_force():
        return ms / 1000.0 or None
    deadline = session.client._topology.new_deadline()
    return None if deadline is None or deadline.at is None else max(deadline.remaining(), 0.0)


def _run(session: ClientSession, callback: Callable[[ClientSession], _T],
         options: TransactionOptions, budget: Budget, timeout_s: Optional[float]) -> _T:
    clock = session.client._topology.clock
    last: Optional[BaseException] = None
    for attempt in range(MAX_ATTEMPTS):
        if attempt:
            backoff = clock.random() * min(BACKOFF_INITIAL_S * 1.5 ** attempt, BACKOFF_MAX_S)
            if not budget.allows(backoff):
                raise _out_of_time(last, timeout_s) from last
            budget.sleep(backoff)
        session.start_transaction(options.read_concern, options.write_concern,
                                  options.read_preference, options.max_commit_time_ms)
        try:
            result = callback(session)
        except BaseException as exc:  # KeyboardInterrupt too: the transaction is aborted
            last = exc
            if session.in_transaction:
                _abort(session, timeout_s)
            if isinstance(exc, PyMongoError) and exc.has_error_label(TRANSIENT):
                if budget.allows():
                    continue
                raise _out_of_time(exc, timeout_s) from exc
            raise
        if not session.in_transaction:
            return result  # the callback committed or aborted: its choice
        committed, last = _commit(session, budget, timeout_s)
        if committed:
            return result
    assert last is not None  # only an error leads to another attempt
    raise last  # the attempts are used up (the count bound)


def _out_of_time(error: Optional[BaseException], timeout_s: Optional[float]) -> PyMongoError:
    """The error once the time is used up, as PyMongo 4.20 raises it: ExecutionTimeout (code
    50) under timeoutMS, else NetworkTimeout, with the last error's message and labels."""
    message = f"with_transaction ran out of time ({timeout_s * 1000:.0f} ms timeoutMS" \
        if timeout_s is not None else f"with_transaction ran out of time ({TIME_LIMIT_S:g} s"
    message += f"); the last error: {error}"
    timeout: PyMongoError = ExecutionTimeout(
        message, MAX_TIME_MS_EXPIRED, {"ok": 0, "errmsg": message, "code": 50}, address=None) \
        if timeout_s is not None else NetworkTimeout(message)
    if isinstance(error, PyMongoError):
        timeout.error_labels = tuple(error.error_labels)  # type: ignore[misc]
    return timeout


def _abort(session: ClientSession, timeout_s: Optional[float]) -> None:
    """Abort after a failed callback, with timeoutMS refreshed (CSOT, "Convenient
    Transactions API"): the callback may have used it all."""
    if timeout_s is None:
        session.abort_transaction()
        return
    from singlemongo.csot import refreshed
    with refreshed(timeout_s):
        session.abort_transaction()


def _commit(session: ClientSession, budget: Budget, timeout_s: Optional[float]
            ) -> tuple[bool, Optional[BaseException]]:
    """(True, None) once committed, (False, the transient error) to run it all again;
    raises what ends it."""
    for _ in range(MAX_ATTEMPTS):
        try:
            session.commit_transaction()
            return True, None
        except PyMongoError as exc:
            retry = (exc.has_error_label(UNKNOWN_COMMIT)
                     and getattr(exc, "code", None) != MAX_TIME_MS_EXPIRED)
            if (retry or exc.has_error_label(TRANSIENT)) and not budget.allows():
                raise _out_of_time(exc, timeout_s) from exc
            if retry:
                continue
            if exc.has_error_label(TRANSIENT):
                return False, exc
            raise
    raise InvalidOperation(f"commitTransaction failed {MAX_ATTEMPTS} times with an unknown "
                           f"result")
