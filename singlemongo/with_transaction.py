"""``ClientSession.with_transaction`` (the convenient transactions API, as PyMongo 4.20 runs
it): start, call back, commit; retry the whole transaction on TransientTransactionError and
the commit on UnknownTransactionCommitResult, for at most 120 s.

The 120 s are measured on the client's clock (``clock.py``): a FakeClock's backoffs advance
it and a freezegun test moves it, so the limit is reached without really waiting; the
backoffs are counted even when the clock is frozen, and the attempts are bounded by a count,
so frozen time never loops for ever.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional, TypeVar

from .clock import Budget
from .errors import InvalidOperation, PyMongoError
from .transaction import TRANSIENT, UNKNOWN_COMMIT, TransactionOptions

if TYPE_CHECKING:
    from .client_session import ClientSession

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
    budget = Budget(clock, TIME_LIMIT_S)
    last: Optional[BaseException] = None
    for attempt in range(MAX_ATTEMPTS):
        if attempt:
            backoff = clock.random() * min(BACKOFF_INITIAL_S * 1.5 ** attempt, BACKOFF_MAX_S)
            if not budget.allows(backoff):
                break
            budget.sleep(backoff)
        session.start_transaction(options.read_concern, options.write_concern,
                                  options.read_preference, options.max_commit_time_ms)
        try:
            result = callback(session)
        except BaseException as exc:  # KeyboardInterrupt too: the transaction is aborted
            last = exc
            if session.in_transaction:
                session.abort_transaction()
            if isinstance(exc, PyMongoError) and exc.has_error_label(TRANSIENT) \
                    and budget.allows():
                continue
            raise
        if not session.in_transaction:
            return result  # the callback committed or aborted: its choice
        committed, last = _commit(session, budget)
        if committed:
            return result
    assert last is not None  # only an error leads to another attempt
    raise last  # the time or the attempts are used up: the last error, as PyMongo


def _commit(session: ClientSession, budget: Budget) -> tuple[bool, Optional[BaseException]]:
    """(True, None) once committed, (False, the transient error) to run it all again;
    raises what ends it."""
    for _ in range(MAX_ATTEMPTS):
        try:
            session.commit_transaction()
            return True, None
        except PyMongoError as exc:
            within = budget.allows()
            if exc.has_error_label(UNKNOWN_COMMIT) and within and \
                    getattr(exc, "code", None) != MAX_TIME_MS_EXPIRED:
                continue
            if exc.has_error_label(TRANSIENT) and within:
                return False, exc
            raise
    raise InvalidOperation(f"commitTransaction failed {MAX_ATTEMPTS} times with an unknown "
                           f"result")
