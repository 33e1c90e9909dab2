"""The lifecycle of one operation and of the transaction it may belong to, as one table:
(state, event) -> (next state, actions), as the SDAM transitions are a table
(``sdam/topology_description.py``). Pure: the engine's run (``operation.py``) and the session
(``client_session.py``) look each step up here and do the actions it lists, in order; a step
the table does not have is a bug, never a guess.

An operation's states: it is ``selecting`` a server (or taking the connection it is pinned
to), has a connection ``checked out``, is ``awaiting reply``, is ``reauthenticating`` the
connection, is ``between attempts`` (the retry rules decide), or has ``succeeded`` or
``failed``. The connection an attempt checked out is checked in (or kept by what is pinned to
it, ``cmap_events.attempt_ended``) when the attempt ends: the actions say where.

A transaction's states are ``TxnState``'s values (transactions spec, "ClientSession
changes"); ``transaction.TRANSITIONS`` is its part of this table, with PyMongo's errors for
the steps a program may not take.
"""

# Operation actions (what the run does on the step, in this order):
SPEND_HANDSHAKE = "spend the handshake budget"  # client backpressure: closed handshakes
REMEMBER_SERVER = "remember the server"  # for deprioritization (retryable reads and writes)
REPORT_EARLIER = "report the earlier error"  # a retry that finds no server reports the cause
TAKE_SESSION = "take the implicit session"  # driver sessions spec: at the first connection
PIN_TRANSACTION = "pin the transaction"  # Mongos Pinning: the first command's server
SDAM_ERROR = "apply the SDAM error rules"  # server discovery: "Error handling"
DIRTY_SESSION = "mark the session dirty"  # driver sessions spec: a network error taints it
LABEL_RETRYABLE = "label RetryableWriteError"  # retryable writes: a network error of one
REAUTHENTICATE = "reauthenticate the connection"  # auth spec, "Reauthentication": once
RECORD_REPLY = "record the reply"  # $clusterTime, operationTime, recoveryToken
CHECK_IN = "check the connection in"  # or give it to the transaction or cursor pinned to it
RETURN_TOKENS = "return tokens to the bucket"  # client backpressure: a success pays back
BACKOFF = "back off"  # client backpressure: the overload retry's backoff
DEPRIORITIZE = "deprioritize the server"  # the retry prefers another server
BEFORE_RETRY = "prepare the transaction's retry"  # commit's retry: w: majority
LABEL_TRANSACTION = "label the transaction error"  # TransientTransactionError, unknown commit
# Transaction action:
SEND = "send the command"

_LEAVE = (CHECK_IN,)

# Operation rows. Events: what the attempt met.
OPERATION = {
    ("selecting", "connection"): ("checked out", (TAKE_SESSION, PIN_TRANSACTION)),
    ("selecting", "no server"): ("failed", (REPORT_EARLIER,)),
    ("selecting", "handshake error"): ("between attempts", (SPEND_HANDSHAKE, REMEMBER_SERVER)),
    ("checked out", "sent"): ("awaiting reply", ()),
    ("checked out", "sent unacknowledged"): ("succeeded", _LEAVE),
    ("checked out", "network error"): ("failed", (SDAM_ERROR,) + _LEAVE),  # w: 0 is not retried
    ("awaiting reply", "ok reply"): ("succeeded", (RECORD_REPLY,) + _LEAVE),
    ("awaiting reply", "error reply"): ("between attempts", (RECORD_REPLY, SDAM_ERROR) + _LEAVE),
    ("awaiting reply", "network error"):
        ("between attempts", (SDAM_ERROR, DIRTY_SESSION, LABEL_RETRYABLE) + _LEAVE),
    ("awaiting reply", "reauthentication required"):
        ("reauthenticating", (RECORD_REPLY, REAUTHENTICATE)),
    # Retryable writes, "Determining Retryable Support": txnNumber refused, never retried.
    ("awaiting reply", "no retryable writes"): ("failed", (RECORD_REPLY, SDAM_ERROR) + _LEAVE),
    ("reauthenticating", "sent"): ("awaiting reply", ()),
    ("between attempts", "retry"): ("selecting", (BACKOFF, DEPRIORITIZE, BEFORE_RETRY)),
    ("between attempts", "give up"): ("failed", ()),
    # Anything else that stops an attempt (a handshake the client refuses, a document too
    # large, a signal, a bug): the connection is checked in as after any attempt, and the
    # operation has failed.
    ("selecting", "error"): ("failed", ()),
    ("checked out", "error"): ("failed", _LEAVE),
    ("awaiting reply", "error"): ("failed", _LEAVE),
    ("reauthenticating", "error"): ("failed", _LEAVE),
    ("between attempts", "error"): ("failed", ()),
    # An interrupt after the reply was read (a signal's handler raising during the check-in):
    # what the caller gets is the interrupt, so the operation has failed.
    ("succeeded", "error"): ("failed", ()),
    ("succeeded", "end"): ("ended", (RETURN_TOKENS,)),
    ("failed", "end"): ("ended", (LABEL_TRANSACTION,)),
}

# Transaction rows (transactions spec, "ClientSession changes"): events "start", "commit",
# "abort", "operation" (a command run with the session), "sent" (its first command went
# out); a string is the InvalidOperation PyMongo raises.
TRANSACTION = {
    ("none", "start"): ("starting", ()),
    ("starting", "start"): "Transaction already in progress",
    ("in_progress", "start"): "Transaction already in progress",
    ("committed", "start"): ("starting", ()),
    ("committed_empty", "start"): ("starting", ()),
    ("aborted", "start"): ("starting", ()),
    ("none", "commit"): "No transaction started",
    ("starting", "commit"): ("committed_empty", ()),
    ("in_progress", "commit"): ("committed", (SEND,)),
    ("committed", "commit"): ("committed", (SEND,)),  # re-run, with w: majority
    ("committed_empty", "commit"): ("committed_empty", ()),
    ("aborted", "commit"): "Cannot call commitTransaction after calling abortTransaction",
    ("none", "abort"): "No transaction started",
    ("starting", "abort"): ("aborted", ()),
    ("in_progress", "abort"): ("aborted", (SEND,)),
    ("committed", "abort"): "Cannot call abortTransaction after calling commitTransaction",
    ("committed_empty", "abort"): "Cannot call abortTransaction after calling commitTransaction",
    ("aborted", "abort"): "Cannot call abortTransaction twice",
    ("none", "operation"): ("none", (SEND,)),
    ("starting", "operation"): ("starting", (SEND,)),  # in progress once sent
    ("in_progress", "operation"): ("in_progress", (SEND,)),
    ("committed", "operation"): ("none", (SEND,)),
    ("committed_empty", "operation"): ("none", (SEND,)),
    ("aborted", "operation"): ("none", (SEND,)),
    # The session is "in progress" after its first command was sent, even on error.
    ("starting", "sent"): ("in_progress", ()),
}

LIFECYCLE = {**OPERATION, **TRANSACTION}


def advance(state, event):
    """(next state, actions) for ``event`` in ``state``; a refused transaction step is its
    message (a str). A step the table does not have is a defect of the driver, never of the
    program or the server: AssertionError (no class of its own: a one-off creates none)."""
    try:
        return LIFECYCLE[(state, event)]
    except KeyError:
        raise AssertionError(f"no lifecycle step for {event!r} in state {state!r}") from None
