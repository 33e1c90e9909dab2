"""The Stable API as a MongoDB 8.0 server enforces it: a command declaring ``apiVersion``
must name version 1, and with ``apiStrict: true`` only the commands and aggregation stages of
API Version 1 run (the rest fail with APIStrictError, code 323)."""
from singlemongo.testing.query.codes import error_reply

# MongoDB's "Stable API Commands" (API Version 1), lower-cased.
API_V1_COMMANDS = frozenset({
    "aborttransaction", "aggregate", "authenticate", "bulkwrite", "collmod",
    "committransaction", "count", "create", "createindexes", "delete", "drop",
    "dropdatabase", "dropindexes", "endsessions", "explain", "find", "findandmodify",
    "getmore", "hello", "insert", "killcursors", "listcollections", "listindexes", "ping",
    "refreshsessions", "update", "saslstart", "saslcontinue"})
# Aggregation stages outside API Version 1.
NOT_V1_STAGES = frozenset({"$currentOp", "$collStats", "$indexStats", "$listLocalSessions",
                           "$listSessions", "$planCacheStats", "$search", "$searchMeta",
                           "$listSearchIndexes"})
HELP = ("Information on supported commands and migrations in API Version 1 can be found at "
        "https://dochub.mongodb.org/core/manual-versioned-api")


def refusal(lname, name, cmd):
    """The reply refusing ``cmd`` under its API parameters, or None when it may run."""
    if "apiVersion" not in cmd:
        if "apiStrict" in cmd or "apiDeprecationErrors" in cmd:
            return error_reply(322, "API parameter apiStrict or apiDeprecationErrors "
                                    "specified without apiVersion")
        return None
    if cmd["apiVersion"] != "1":
        return error_reply(322, f"API version must be \"1\", not {cmd['apiVersion']!r}")
    if not cmd.get("apiStrict"):
        return None
    if lname not in API_V1_COMMANDS:
        return error_reply(323, f"Provided apiStrict:true, but the command {name} is not in "
                                f"API Version 1. {HELP}")
    for stage in cmd.get("pipeline") or () if lname == "aggregate" else ():
        found = sorted(set(stage) & NOT_V1_STAGES) if isinstance(stage, dict) else ()
        if found:
            return error_reply(323, f"{found[0]} is not allowed with 'apiStrict: true' in "
                                    f"API Version 1")
    return None
