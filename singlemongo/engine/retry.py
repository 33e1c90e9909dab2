"""The retry loop's decisions (retryable reads and writes specs, client backpressure, and
client-side operations timeout, "Retryability"), read as libmongoc's retry loop reads: after
a failed attempt, ``after_failure`` returns the decision to retry (the run backs off and
deprioritizes as the lifecycle's "retry" step says) or raises the error saying why retrying
stopped. Whether the attempt could be retried at all is the request's
``retry_kind``, decided once (request.py). Loaded at an operation's first failure, with the
backpressure rules and the error tables it applies: a one-off that succeeds loads none.
"""
from __future__ import annotations


from singlemongo.errors import NetworkTimeout, OperationFailure, with_configured_timeouts
from singlemongo.engine.backpressure import (NO_WRITES_PERFORMED, RETRY_COST, SYSTEM_OVERLOADED, annotate, decide,
                           labels_of)
from singlemongo.reply_errors import from_server, is_retryable
from singlemongo.engine.request import MAX_TIMEOUT_RETRIES

RETRYABLE_WRITE_ERROR = "RetryableWriteError"


def after_failure(run, error, retry_kind, max_wire):
    """The decision to retry (its backoff, whether to deprioritize the server), or the error
    saying why retrying stopped, raised."""
    labels = labels_of(error)
    if run.state.attempts > 1 and SYSTEM_OVERLOADED not in labels:
        run.t.token_bucket.deposit(RETRY_COST)
    if run.last_error is not None and NO_WRITES_PERFORMED in labels:
        raise run.last_error  # the retry wrote nothing: the earlier error is the truth
    if run.handshake_budget_s is not None and run.handshake_budget_s <= 0:
        raise with_timeouts(run, annotate(
            error, "connectTimeoutMS is spent on handshakes the server closed",
            run.state.attempts))
    if run.deadline is not None and run.deadline.expired():
        raise with_timeouts(run, timed_out(error, run.deadline, run.state.attempts))
    clock = run.t.clock
    decision = decide(run.state, error,
                      ordinary_retryable=is_retryable(error, retry_kind, max_wire),
                      max_adaptive_retries=run.t.options.max_adaptive_retries,
                      bucket=run.t.token_bucket, jitter=clock.random(),
                      now=clock.io_time(),
                      deadline=run.deadline.at if run.deadline is not None else None,
                      ordinary_limit=MAX_TIMEOUT_RETRIES if run.t.timeout_in_force()
                      else 1)
    if not decision.retry:
        raise with_timeouts(run, annotate(error, decision.reason, run.state.attempts,
                                      quiet=beyond_retries(error, run.state.attempts)))
    run.last_error = error
    log_retry(run)
    return decision  # its backoff and deprioritization: the lifecycle's "retry" actions


def log_retry(run):
    # PyMongo's debug message for a retry (its users' log filters look for it).
    from singlemongo.monitoring import log
    text = f"Retrying {'read' if run.req.is_read else 'write'} attempt number " \
           f"{run.state.attempts}"
    log.emit(log.COMMAND, log.DEBUG, text, run.t.topology_id, message=text,
             commandName=next(iter(run.command)), operationId=run.operation_id)


def with_timeouts(run, error):
    """``error`` with the timeouts configured (and the deadline in force) in its message."""
    options = run.t.options
    return with_configured_timeouts(error, run.deadline.seconds if run.deadline else None,
                                    options.socket_timeout_ms, options.connect_timeout_ms)


# Retryable writes, "Determining Retryable Support": a deployment that refuses txnNumber
# (MMAPv1, a mongod that is no replica set member) gets PyMongo's actionable error.
NO_RETRYABLE_WRITES = ("This MongoDB deployment does not support retryable writes. Please add "
                       "retryWrites=false to your connection string.")


def no_retryable_writes(error):
    """Whether ``error`` says the deployment refuses txnNumber."""
    details = getattr(error, "details", None)
    return isinstance(error, OperationFailure) and error.code == 20 and isinstance(
        details, dict) and str(details.get("errmsg", "")).startswith("Transaction numbers")


def network(error):
    """Whether ``error`` is the network's, not a server's reply."""
    return not from_server(error)


def beyond_retries(error, attempts):
    """A first attempt's server error that no retry of any kind could fix (no label, not a
    retryable code): its message needs no note about retries."""
    return attempts == 1 and from_server(error) and not labels_of(error) and not any(
        is_retryable(error, kind, 0) for kind in ("read", "write"))


def timed_out(error, deadline, attempts):
    """The timeout error once timeoutMS has expired, exposing the error that preceded it."""
    if getattr(error, "timeout", False):
        return annotate(error, f"{deadline.what} expired", attempts)
    timeout = NetworkTimeout(f"{deadline.what} expired after {attempts} attempt(s); the last "
                             f"error: {error}", getattr(error, "address", None))
    timeout.__cause__ = error
    return timeout
