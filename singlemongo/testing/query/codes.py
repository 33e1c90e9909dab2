"""MongoDB error codes the simulated server answers with (the server's error_codes.yml names),
and the exception a command handler raises to answer one.

A command never kills a simulated server: whatever goes wrong becomes an ``ok: 0`` reply
with a code, a code name and a message.
"""

CODE_NAMES = {
    1: "InternalError", 2: "BadValue", 6: "HostUnreachable", 7: "HostNotFound",
    9: "FailedToParse", 11: "UserNotFound", 13: "Unauthorized", 14: "TypeMismatch",
    17: "ProtocolError", 18: "AuthenticationFailed", 20: "IllegalOperation", 24: "LockTimeout",
    26: "NamespaceNotFound", 27: "IndexNotFound", 40: "ConflictingUpdateOperators",
    43: "CursorNotFound", 48: "NamespaceExists", 50: "MaxTimeMSExpired", 59: "CommandNotFound",
    64: "WriteConcernFailed", 66: "ImmutableField", 67: "CannotCreateIndex",
    72: "InvalidOptions", 73: "InvalidNamespace", 79: "UnknownReplWriteConcern",
    85: "IndexOptionsConflict", 86: "IndexKeySpecsConflict", 89: "NetworkTimeout",
    91: "ShutdownInProgress", 100: "UnsatisfiableWriteConcern", 112: "WriteConflict",
    115: "CommandNotSupported", 139: "JSInterpreterFailure", 121: "DocumentValidationFailure", 125: "CommandFailed",
    133: "FailedToSatisfyReadPreference", 134: "ReadConcernMajorityNotAvailableYet",
    189: "PrimarySteppedDown", 211: "KeyNotFound", 238: "NotImplemented",
    123: "NotAReplicaSet", 225: "TransactionTooOld", 239: "SnapshotTooOld",
    244: "TransactionAborted", 246: "SnapshotUnavailable", 322: "APIVersionError",
    323: "APIStrictError", 251: "NoSuchTransaction", 256: "TransactionCommitted",
    257: "TransactionTooLarge", 262: "ExceededTimeLimit", 263: "OperationNotSupportedInTransaction",
    267: "PreparedTransactionInProgress", 462: "IngressRequestRateLimitExceeded",
    9001: "SocketException", 10107: "NotWritablePrimary", 11000: "DuplicateKey",
    11600: "InterruptedAtShutdown", 11601: "Interrupted", 11602: "InterruptedDueToReplStateChange",
    13435: "NotPrimaryNoSecondaryOk", 13436: "NotPrimaryOrSecondary",
    47: "NoMatchingDocument", 150: "StaleEpoch", 216: "ElectionInProgress",
    234: "RetryChangeStream", 260: "InvalidResumeToken", 280: "ChangeStreamFatalError",
    15955: "Location15955", 40324: "Location40324", 50811: "Location50811",
}


# What a MongoDB 7.0 server outside Atlas answers to the search index commands.
ATLAS_ONLY = ("Using Atlas Search Database Commands and the $listSearchIndexes aggregation "
              "stage requires additional configuration. Please connect to Atlas or an "
              "AtlasCLI local deployment to enable.")


def code_name(code):
    return CODE_NAMES.get(code, f"Location{code}" if code and code > 10000 else "UnknownError")


def error_reply(code, message, **extra):
    """An ``ok: 0`` reply as the server sends it."""
    reply = {"ok": 0, "errmsg": message, "code": code, "codeName": code_name(code)}
    reply.update(extra)
    return reply


class CommandError(Exception):
    """Raised inside a command handler: answered as ``error_reply(code, message, **extra)``."""

    def __init__(self, code, message, **extra):
        super().__init__(message)
        self.code, self.message, self.extra = code, message, extra

    def reply(self):
        return error_reply(self.code, self.message, **self.extra)


class WriteFailure(CommandError):
    """A per-document write error (a ``writeErrors`` entry), not a command error."""

    def entry(self, index):
        # The insert page's output: index, code, errmsg (a command error has a codeName).
        return {"index": index, "code": self.code, "errmsg": self.message, **self.extra}


def duplicate_message(details):
    pattern = details.get("keyPattern") or {"_id": 1}
    value = details.get("keyValue") or {}
    name = "_".join(f"{k}_{v}" for k, v in pattern.items())
    shown = ", ".join(f"{k}: {v!r}" for k, v in value.items())
    return f"E11000 duplicate key error index: {name} dup key: {{ {shown} }}"
