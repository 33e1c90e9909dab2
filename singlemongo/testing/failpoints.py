"""Scripted faults and MongoDB's fail points (``configureFailPoint``) for simulated servers.

``Fault`` is what a server does instead of (or around) answering a command: reply with an
error, close or reset the connection, hang, block for a while, or run the command and then
drop the reply or add a write concern error. ``from_command`` turns the ``failCommand`` and
``onPrimaryTransactionalWrite`` fail points of the unified test format into faults; the
server's own error labels (``RetryableWriteError``) are added as a 4.4+ server adds them.
"""
from typing import Any, Optional, Tuple

from singlemongo.records import dataclass, field
from singlemongo.testing.query.codes import CommandError, code_name

# Retryable writes spec, "Determining Retryable Errors": a 4.4+ server labels these.
RETRYABLE_WRITE_CODES = frozenset({6, 7, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435,
                                   13436})
WRITE_COMMANDS = frozenset({"insert", "update", "delete", "findAndModify", "findandmodify",
                            "bulkWrite"})
# What each fault action does, as two steps: the answer (the fault's own error reply, no
# reply, the command's reply, or the command run and its reply dropped) and how the bytes
# go out (or, with no reply, what becomes of the connection). No fault: (RUN, SEND).
FAULT_REPLY, NO_REPLY, RUN, RUN_ADD_WCE, RUN_NO_REPLY = (
    "the fault's error reply", "no reply", "the command's reply",
    "the command's reply, with a write concern error", "the command run, its reply dropped")
SEND, CLOSE, HANG, HALF_THEN_RESET, DRIP, RAW = (
    "send", "close the connection", "leave the connection hung", "send half, then reset",
    "send a byte at a time", "send the fault's raw bytes")
FAULT_ACTIONS = {
    "error": (FAULT_REPLY, SEND),
    "close": (NO_REPLY, CLOSE),
    "hang": (NO_REPLY, HANG),
    "reset": (RUN, HALF_THEN_RESET),
    "block": (RUN, SEND),  # the wait (block_s) comes first, as for every action
    "run-then-close": (RUN_NO_REPLY, CLOSE),
    "write-concern-error": (RUN_ADD_WCE, SEND),
    "drip": (RUN, DRIP),
    "raw-reply": (RUN, RAW),
}
ACTIONS = tuple(FAULT_ACTIONS)
NO_FAULT = (RUN, SEND)
# What a simulated server answers besides its store's commands and the tools' (served()).
PROTOCOL_COMMANDS = frozenset({"hello", "isMaster", "ismaster", "ping", "buildInfo",
                               "saslStart", "saslContinue", "authenticate", "endSessions",
                               "configureFailPoint", "replSetStepDown", "replSetFreeze"})


def served():
    """The names of every command a simulated server answers (empty without the testing
    extra, which the store needs)."""
    try:
        from singlemongo.testing.query.store import COMMANDS
    except ImportError:
        return frozenset()
    from singlemongo.testing.tools import COMMANDS as TOOLS
    return PROTOCOL_COMMANDS | set(COMMANDS) | set(TOOLS)


def check_command_name(name: str) -> None:
    """ValueError for a name MongoDB does not have and the simulator does not serve
    (``command_names``): a typo (``fnd``) or an invention, whose fault would never fire."""
    from singlemongo.testing.command_names import check_command_name as check
    check(name, served())


@dataclass
class Fault:
    """What to do instead of answering ``command`` ("*" for any; several with ``commands``),
    ``times`` times (None: forever), after skipping ``skip`` matches.

    action: "error" (reply with ``code``/``errmsg``/``labels``/``extra``), "close" (drop the
    connection unanswered), "reset" (send half the reply, then reset the connection), "hang"
    (never answer), "block" (wait ``block_s`` then answer normally), "run-then-close" (run
    the command, then drop the connection unanswered), "write-concern-error" (run the command
    and add ``write_concern_error`` to its reply), "drip" (run the command and send its reply
    one byte every ``drip_s`` seconds), "raw-reply" (send ``raw(request_id)``, whatever bytes
    that returns, instead of a reply). ``block_s`` also delays the other actions.
    """
    command: str
    action: str = "error"
    times: Optional[int] = 1
    code: int = 0
    errmsg: str = ""
    labels: Optional[Tuple[str, ...]] = ()
    extra: dict = field(default_factory=dict)
    commands: Tuple[str, ...] = ()
    app_name: Optional[str] = None
    namespace: Optional[str] = None
    block_s: float = 0.0
    skip: int = 0
    write_concern_error: Optional[dict] = None
    drip_s: float = 0.05
    raw: Any = None
    # onPrimaryTransactionalWrite: only a retryable write the server has not executed yet (a
    # retry is answered from the first execution and never reaches the fail point).
    transactional: bool = False
    # failGetMoreAfterCursorCheckout: the server knows the cursor (and labels a change stream's
    # resumable error); failCommand fails a getMore before that.
    after_checkout: bool = False
    # maxTimeAlwaysTimeOut: only what runs with a time limit (maxTimeMS, or a getMore of a
    # cursor opened with one) fails.
    time_limited_only: bool = False

    def __post_init__(self):
        if self.action not in ACTIONS:
            raise ValueError(f"unknown fault action {self.action!r}: expected one of {ACTIONS}")

    def matches(self, name, cmd, app_name):
        names = {canonical(n) for n in self.commands or (self.command,)}
        if "*" not in names and canonical(name) not in names:
            return False
        if self.app_name is not None and self.app_name != app_name:
            return False
        if self.namespace is not None:
            target = cmd.get(name)
            if not isinstance(target, str) or f"{cmd.get('$db')}.{target}" != self.namespace:
                return False
        return True

    def reply(self, cmd=None):
        doc = {"ok": 0, "errmsg": self.errmsg or f"Failing command via 'failCommand' failpoint "
                                                  f"(simulated error {self.code})",
               "code": self.code, "codeName": code_name(self.code)}
        labels = self.labels if self.labels is not None else server_labels(
            cmd or {}, self.code, cursor_checked_out=self.command != "getMore" or
            self.after_checkout)
        if labels:
            doc["errorLabels"] = list(labels)
        doc.update(self.extra)
        return doc


def is_retryable_write(cmd):
    name = next(iter(cmd), "")
    return (name in WRITE_COMMANDS and "txnNumber" in cmd and "autocommit" not in cmd) or \
        name in ("commitTransaction", "abortTransaction")


# What a server counts as a transient transaction error (WriteConflict, LockTimeout,
# PreparedTransactionInProgress, ShardCannotRefreshDueToLocksHeld, stale shard versions,
# SnapshotUnavailable).
TRANSIENT_CODES = frozenset({112, 24, 267, 294, 13388, 150, 249, 246})
NO_SUCH_TRANSACTION = 251
TRANSIENT = "TransientTransactionError"


def is_transient(cmd, code, has_write_concern_error=False):
    """Whether a server labels this error TransientTransactionError: only in a transaction;
    commit and abort only for conflicts and NoSuchTransaction without a write concern error."""
    if "autocommit" not in cmd:
        return False
    if code in TRANSIENT_CODES:
        return True
    if next(iter(cmd), "") in ("commitTransaction", "abortTransaction"):
        return code == NO_SUCH_TRANSACTION and not has_write_concern_error
    return code in RETRYABLE_WRITE_CODES or code == NO_SUCH_TRANSACTION


def _resumable_change_stream_code(code):
    # The driver's list (Change Streams, "Resumable Error"), which a 4.4+ server labels;
    # but not CursorNotFound: a cursor the server cannot find is not known to be a change
    # stream's (the driver resumes on 43 itself).
    from singlemongo.change_stream import RESUMABLE_CODES
    return code in RESUMABLE_CODES and code != 43


def server_labels(cmd, code, has_write_concern_error=False, cursor_checked_out=True):
    """The labels a 4.4+ server adds itself to an error with ``code`` on ``cmd``; a getMore
    failed before its cursor was checked out (failCommand) is not known to be a change
    stream's, so it gets no ResumableChangeStreamError."""
    labels = []
    if is_transient(cmd, code, has_write_concern_error):
        labels.append(TRANSIENT)
    if code in RETRYABLE_WRITE_CODES and is_retryable_write(cmd):
        labels.append("RetryableWriteError")
    if next(iter(cmd), "") == "getMore" and cursor_checked_out and \
            _resumable_change_stream_code(code):
        labels.append("ResumableChangeStreamError")
    return tuple(labels)


def add_write_concern_error(reply, cmd, wce, labels=None):
    reply = dict(reply)
    reply["writeConcernError"] = dict(wce)
    # A write concern error is never transient (the write happened); a retryable write, or
    # commit and abort, get RetryableWriteError for a retryable code.
    labels = list(labels) if labels is not None else [
        label for label in server_labels(cmd, wce.get("code")) if label != TRANSIENT]
    if labels:
        reply["errorLabels"] = sorted(set(reply.get("errorLabels", [])) | set(labels))
    return reply


def _mode(mode):
    """(times, skip) of a fail point mode; (0, 0) turns it off."""
    if mode == "alwaysOn":
        return None, 0
    if mode == "off":
        return 0, 0
    if isinstance(mode, dict) and "times" in mode:
        return int(mode["times"]), 0
    if isinstance(mode, dict) and "skip" in mode:
        return None, int(mode["skip"])
    raise CommandError(2, f"invalid fail point mode: {mode!r}")


def from_command(cmd):
    """The Fault a configureFailPoint command describes, or None to turn it off."""
    name = cmd.get("configureFailPoint")
    times, skip = _mode(cmd.get("mode"))
    if times == 0:
        return name, None
    data = cmd.get("data") or {}
    if name == "onPrimaryTransactionalWrite":
        # The write is not committed when failBeforeCommitExceptionCode is set; the connection
        # is closed (the default) or the code is returned.
        code = data.get("failBeforeCommitExceptionCode")
        close = data.get("closeConnection", True)
        action = ("close" if close else "error") if code else (
            "run-then-close" if close else "block")
        return name, Fault("*", action, times, code=code or 0, skip=skip,
                           commands=tuple(WRITE_COMMANDS), transactional=True)
    if name == "failGetMoreAfterCursorCheckout":
        # A getMore fails once its cursor is checked out (the cursor stays on the server).
        return name, Fault("getMore", "error", times, code=data.get("errorCode", 0), skip=skip,
                           labels=None, after_checkout=True)
    if name == "stopReplProducer":
        # Its effect is the deployment's (replication_stopped): it fails no command itself.
        return name, Fault(STOPPED_REPLICATION, "error", times, skip=skip, labels=None)
    if name == "maxTimeAlwaysTimeOut":
        return name, Fault("*", "error", times, code=50, errmsg="operation exceeded time limit",
                           skip=skip, labels=None, time_limited_only=True)
    if name != "failCommand":
        raise CommandError(2, f"the simulated server has no fail point {name!r}")
    commands = tuple(data.get("failCommands") or ())
    if not commands:
        # mongod's failCommand matches the commands data.failCommands lists: none, without it.
        return name, Fault(MATCHES_NOTHING, "error", times, skip=skip, labels=None)
    labels = tuple(data["errorLabels"]) if "errorLabels" in data else None
    block_s = data.get("blockTimeMS", 0) / 1000.0 if data.get("blockConnection") else 0.0
    if data.get("closeConnection"):
        action = "close"
    elif "errorCode" in data:
        action = "error"
    elif "writeConcernError" in data:
        action = "write-concern-error"
    else:
        action = "block"
    return name, Fault(commands[0], action, times, code=data.get("errorCode", 0),
                       errmsg=data.get("errmsg", ""), labels=labels, commands=commands,
                       app_name=data.get("appName"), namespace=data.get("namespace"),
                       block_s=block_s, skip=skip,
                       write_concern_error=data.get("writeConcernError"))


STOPPED_REPLICATION = "\x00stopReplProducer"  # a command name no client can send
MATCHES_NOTHING = "\x00failCommand without failCommands"
WTIMEOUT = {"code": 64, "codeName": "WriteConcernFailed",
            "errmsg": "waiting for replication timed out", "errInfo": {"wtimeout": True}}


def waits_for_replication(cmd):
    """Whether a command's write concern waits for more than the primary."""
    wc = cmd.get("writeConcern")
    w = wc.get("w") if isinstance(wc, dict) else None
    return (isinstance(w, int) and not isinstance(w, bool) and w > 1) or isinstance(w, str)


def canonical(name):
    """A command's name as a server registers it: ``ismaster`` and ``isMaster`` are the one
    legacy hello (a fail point for either matches both, as on a real server)."""
    return "isMaster" if name.lower() == "ismaster" else name
