"""Client backpressure (specs/client-backpressure.md, the seed version): the per-client token
bucket and the overload retry decision, as pure code. The engine sleeps and reselects.

Every command is retried when its error carries ``RetryableError``: at most
``maxAdaptiveRetries`` times (5, MAX_ATTEMPTS), each retry paid for with one token, after a
backoff of ``jitter * min(10 s, 100 ms * 2**i)`` when the error also carries
``SystemOverloadedError`` (and that server is then avoided on the next selection). Ordinary
retryable reads and writes get ``ordinary_limit`` free retries: one, or under timeoutMS as
many as the engine allows before the deadline (client-side operations timeout, "Retryability").
"""
from singlemongo.records import dataclass
from typing import Optional

RETRYABLE_ERROR = "RetryableError"
SYSTEM_OVERLOADED = "SystemOverloadedError"
NO_WRITES_PERFORMED = "NoWritesPerformed"
MAX_ATTEMPTS = 5
BASE_BACKOFF_S = 0.1
MAX_BACKOFF_S = 10.0
RETRY_TOKEN_RETURN_RATE = 0.1
RETRY_COST = 1
TOKEN_CAPACITY = 1000


class TokenBucket:
    def __init__(self, capacity=TOKEN_CAPACITY):
        self.capacity = capacity
        self.tokens = float(capacity)

    def consume(self, n=RETRY_COST):
        if self.tokens >= n:
            self.tokens -= n
            return True
        return False

    def deposit(self, n):
        self.tokens = min(self.capacity, self.tokens + n)


def backoff_seconds(retry_index, jitter):
    """Delay before overload retry ``retry_index`` (0 for the first): 100, 200, 400, 800 ms..."""
    return jitter * min(MAX_BACKOFF_S, BASE_BACKOFF_S * 2 ** retry_index)


def labels_of(error):
    return set(getattr(error, "error_labels", ()) or ())


@dataclass(frozen=True)
class Decision:
    retry: bool
    reason: str = ""
    backoff_s: float = 0.0
    deprioritize: bool = False


def decide(state, error, *, ordinary_retryable, max_adaptive_retries, bucket, jitter,
           now, deadline: Optional[float], ordinary_limit=1):
    """Whether to retry after ``error``; consumes a token when an overload retry is granted.
    ``ordinary_limit``: how many ordinary retries the operation may make (the caller stops
    them at its deadline)."""
    labels = labels_of(error)
    if RETRYABLE_ERROR in labels and max_adaptive_retries > 0:
        if state.overload_retries >= min(max_adaptive_retries, MAX_ATTEMPTS):
            return Decision(False, f"retry attempts exhausted ({state.overload_retries} overload "
                                   f"retries, maxAdaptiveRetries={max_adaptive_retries})")
        overloaded = SYSTEM_OVERLOADED in labels
        # Rule 5: "i is the retry attempt (starting with 0 for the first retry)", read as
        # every retry of the operation so far, ordinary ones included (the seed's Python
        # pseudocode counts every attempt), so the order of earlier errors never matters.
        retry_index = max(state.attempts - 1, 0)
        backoff = backoff_seconds(retry_index, jitter) if overloaded else 0.0
        if deadline is not None and now + backoff > deadline:
            return Decision(False, f"the deadline (timeoutMS) would pass during a "
                                   f"{backoff * 1000:.0f} ms backoff")
        if not bucket.consume(RETRY_COST):
            return Decision(False, "the client's retry budget is spent (token bucket empty)")
        state.overload_retries += 1
        return Decision(True, backoff_s=backoff, deprioritize=overloaded)
    if ordinary_retryable and state.ordinary_retries < ordinary_limit:
        state.ordinary_retries += 1
        return Decision(True)
    if not state.attempts or not ordinary_retryable:
        return Decision(False, "not retryable")
    return Decision(False, "the one retry of a retryable read or write was used"
                    if ordinary_limit == 1 else f"the {ordinary_limit} retries of a retryable "
                                                f"read or write allowed under timeoutMS were used")


def annotate(error, reason, attempts, quiet=False):
    """Say why retrying stopped, in the error itself (``quiet``: in its attributes only, for
    an error no retry could fix: a bad operator, a bad sort key)."""
    error.retry_stopped = reason
    error.attempts = attempts
    if quiet:
        return error
    if error.args and isinstance(error.args[0], str) and "[retries stopped" not in error.args[0]:
        error.args = (f"{error.args[0]} [retries stopped: {reason}; {attempts} attempt(s)]",) \
            + error.args[1:]
    return error
