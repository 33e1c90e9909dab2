"""The Stable API as a MongoDB 7.0 server enforces it: a command declaring ``apiVersion``
must name version 1, and with ``apiStrict: true`` only the commands and aggregation stages of
API Version 1 run (the rest fail with APIStrictError, code 323)."""

# MongoDB's "Stable API Commands" (API Version 1), lower-cased.
API_V1_COMMANDS = frozenset({
    "aborttransaction", "aggregate", "authenticate", "bulkwrite", "collmod",
    "committransaction", "count", "create", "createindexes", "delete", "drop",
    "dropdatabase", "dropindexes", "endsessions", "explain", "find", "findandmodify",
    "getmore", "hello", "insert", "killcursors", "listcollections", "listindexes", "ping",
    "refreshsessions", "update", "saslstart", "saslcontinue", "ismaster",
    # Test-only commands a 7.0 server runs under any API parameters.
    "configurefailpoint"})
# Aggregation stages outside API Version 1.
NOT_V1_STAGES = frozenset({"$currentOp", "$collStats", "$indexStats", "$listLocalSessions",
                           "$listSessions", "$planCacheStats", "$search", "$searchMeta",
                           "$listSearchIndexes"})
HELP = ("Information on supported commands and migrations in API Version 1 can be found at "
        "https://dochub.mongodb.org/core/manual-versioned-api")


def _error(code, code_name, message):
    return {"ok": 0, "code": code, "codeName": code_name, "errmsg": message}


def refusal(lname, name, cmd):
    """The reply refusing ``cmd`` under its API parameters, or None when it may run."""
    if "apiVersion" not in cmd:
        if "apiStrict" in cmd or "apiDeprecationErrors" in cmd:
            return _error(322, "APIVersionError", "API parameter apiStrict or "
                          "apiDeprecationErrors specified without apiVersion")
        return None
    if cmd["apiVersion"] != "1":
        return _error(322, "APIVersionError",
                      f"API version must be \"1\", not {cmd['apiVersion']!r}")
    if not cmd.get("apiStrict"):
        return None
    if lname not in API_V1_COMMANDS:
        return _error(323, "APIStrictError", f"Provided apiStrict:true, but the command "
                      f"{name} is not in API Version 1. {HELP}")
    if lname == "aggregate":
        for stage in cmd.get("pipeline") or ():
            if isinstance(stage, dict) and set(stage) & NOT_V1_STAGES:
                (found,) = set(stage) & NOT_V1_STAGES
                return _error(323, "APIStrictError", f"{found} is not allowed with "
                              f"'apiStrict: true' in API Version 1")
    return None
