"""What an application error does to the topology (SDAM, "Error handling"), as a pure decision.

The engine turns each failed operation into an ``ApplicationError`` and applies the returned
``ErrorDecision``: a new server description (or none), whether to clear the server's
connection (bump its generation), and whether the single-threaded scanner must rescan.
"""
import enum
from singlemongo.records import dataclass
from typing import Any, Mapping, Optional, Tuple

from singlemongo.sdam.server_description import ServerDescription, compare_topology_version, TopologyType
from singlemongo.replies import is_ok


class ErrorKind(enum.Enum):
    NOT_WRITABLE_PRIMARY = "not writable primary"
    NODE_IS_RECOVERING = "node is recovering"
    NODE_IS_SHUTTING_DOWN = "node is shutting down"
    NETWORK = "network error"
    NETWORK_TIMEOUT = "network timeout"
    OTHER = "other error"


# "not writable primary" and "node is recovering": matched by code, never by code name.
STATE_CHANGE_CODES = {
    10107: ErrorKind.NOT_WRITABLE_PRIMARY,   # NotWritablePrimary
    13435: ErrorKind.NOT_WRITABLE_PRIMARY,   # NotPrimaryNoSecondaryOk
    10058: ErrorKind.NOT_WRITABLE_PRIMARY,   # LegacyNotPrimary
    11600: ErrorKind.NODE_IS_SHUTTING_DOWN,  # InterruptedAtShutdown
    91: ErrorKind.NODE_IS_SHUTTING_DOWN,     # ShutdownInProgress
    11602: ErrorKind.NODE_IS_RECOVERING,     # InterruptedDueToReplStateChange
    13436: ErrorKind.NODE_IS_RECOVERING,     # NotPrimaryOrSecondary
    189: ErrorKind.NODE_IS_RECOVERING,       # PrimarySteppedDown
}
# Only when a reply has no code: substrings, checked in this order.
STATE_CHANGE_MESSAGES = (
    ("node is recovering", ErrorKind.NODE_IS_RECOVERING),
    ("not master or secondary", ErrorKind.NODE_IS_RECOVERING),
    ("not master", ErrorKind.NOT_WRITABLE_PRIMARY),
)
STATE_CHANGE_KINDS = frozenset({ErrorKind.NOT_WRITABLE_PRIMARY, ErrorKind.NODE_IS_RECOVERING,
                                ErrorKind.NODE_IS_SHUTTING_DOWN})
# SDAM summary, "Error handling": single-threaded clients MUST request a scan after every state
# change error ("not writable primary", "node is recovering", "shutting down") and network error.
MARKS_TOPOLOGY_STALE = frozenset({ErrorKind.NOT_WRITABLE_PRIMARY, ErrorKind.NODE_IS_RECOVERING,
                                  ErrorKind.NODE_IS_SHUTTING_DOWN, ErrorKind.NETWORK})


def classify_code(code, message=""):
    """The ErrorKind of a server error; the message is only read when there is no code."""
    if code:
        return STATE_CHANGE_CODES.get(code, ErrorKind.OTHER)
    for needle, kind in STATE_CHANGE_MESSAGES:
        if needle in (message or ""):
            return kind
    return ErrorKind.OTHER


def classify_reply(reply):
    """Classify a command reply: the error itself, else a writeConcernError; never writeErrors."""
    if not is_ok(reply):
        return classify_code(reply.get("code"), reply.get("errmsg", reply.get("$err", "")))
    wce = reply.get("writeConcernError")
    if wce:
        return classify_code(wce.get("code"), wce.get("errmsg", ""))
    return None


@dataclass(frozen=True)
class ApplicationError:
    address: Tuple[str, Any]
    kind: ErrorKind
    generation: int
    completed_handshake: bool = True
    max_wire_version: int = 0
    message: str = ""
    topology_version: Optional[Mapping[str, Any]] = None
    labels: Tuple[str, ...] = ()


@dataclass(frozen=True)
class ErrorDecision:
    new_description: Optional[ServerDescription] = None
    clear_pool: bool = False
    mark_stale: bool = False

    @property
    def ignored(self):
        return self.new_description is None and not self.clear_pool and not self.mark_stale


IGNORE = ErrorDecision()


def handle_application_error(td, error, current_generation):
    """The decision for one application error ("Error handling pseudocode")."""
    current = td.servers.get(error.address)
    if current is None or error.generation < current_generation:
        return IGNORE
    load_balanced = td.topology_type is TopologyType.LOAD_BALANCED
    if error.kind in STATE_CHANGE_KINDS:
        if compare_topology_version(current.topology_version, error.topology_version) >= 0:
            return IGNORE
        # Pre-4.2 servers close connections on every state change; 4.2+ only on shutdown.
        clear = error.kind is ErrorKind.NODE_IS_SHUTTING_DOWN or error.max_wire_version <= 7
        unknown = None if load_balanced else ServerDescription.unknown(
            error.address, f"{error.kind.value}: {error.message}", error.topology_version)
        return ErrorDecision(unknown, clear, error.kind in MARKS_TOPOLOGY_STALE)
    if "SystemOverloadedError" in error.labels:
        return IGNORE  # client backpressure: overload never marks a server Unknown.
    if error.kind is ErrorKind.NETWORK_TIMEOUT and error.completed_handshake:
        return IGNORE  # a slow operation, not a dead server
    if error.kind in (ErrorKind.NETWORK, ErrorKind.NETWORK_TIMEOUT):
        if not error.completed_handshake:
            return IGNORE  # the check that opened the connection already reported it
        unknown = None if load_balanced else ServerDescription.unknown(
            error.address, f"{error.kind.value}: {error.message}", network=True)
        return ErrorDecision(unknown, True, True)
    return IGNORE
