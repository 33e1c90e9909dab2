"""The database profiler: the ``profile`` command and the ``system.profile`` collection it
fills, as a MongoDB 7.0 server does (what mongoengine's ``query_counter`` and tests that count
queries read).

Level 2 records every operation on the database, level 1 those slower than ``slowms``;
update and delete commands record one entry per statement, as the server does. The entries
carry the fields tools read (``op``, ``ns``, ``command``, ``nreturned``, ``millis``, ``ts``,
``appName``); plan statistics (``keysExamined``, ``docsExamined``) are counted as a
collection scan would.
"""
import datetime

from singlemongo.testing.query.codes import CommandError

PROFILE = "system.profile"
DEFAULTS = {"level": 0, "slowms": 100, "sampleRate": 1.0}
# Command -> the profiler's ``op`` ("Database Profiler Output"); anything else is "command".
OPS = {"find": "query", "insert": "insert", "update": "update", "delete": "remove",
       "getMore": "getmore", "killCursors": "killcursors"}
# The statements of these commands are profiled one by one: (array field, its ns key).
STATEMENTS = {"update": "updates", "delete": "deletes"}
_NOT_PROFILED = frozenset({"profile"})


def settings(store, db):
    return store.profiling.get(db, DEFAULTS)


def profile(store, server, cmd):
    """``{profile: level, slowms, sampleRate}``: sets this database's profiler (-1 reads it)
    and answers with the level it ``was``."""
    level = cmd.get("profile")
    if isinstance(level, bool) or level not in (-1, 0, 1, 2):
        raise CommandError(2, f"Invalid profiling level: {level!r} (expected -1, 0, 1 or 2)")
    db = cmd["$db"]
    before = dict(settings(store, db))
    if level != -1:
        now = dict(before, level=level)
        for key in ("slowms", "sampleRate"):
            if key in cmd:
                now[key] = cmd[key]
        store.profiling[db] = now
    return {"was": before["level"], "slowms": before["slowms"],
            "sampleRate": before["sampleRate"], "ok": 1}


def record(store, name, cmd, reply, millis, state):
    """Write the profile entries of one command, if its database profiles it."""
    db = cmd.get("$db")
    wanted = settings(store, db) if isinstance(db, str) else DEFAULTS
    if not wanted["level"] or name in _NOT_PROFILED or \
            (wanted["level"] == 1 and millis <= wanted["slowms"]):
        return
    base = {"op": OPS.get(name, "command"), "ns": f"{db}.{_collection(name, cmd)}",
            "millis": int(millis), "ts": _now(),
            "client": "127.0.0.1", "appName": _app_name(state), "allUsers": [], "user": ""}
    entries = []
    statements = cmd.get(STATEMENTS.get(name, ""), None)
    if isinstance(statements, list) and statements:
        for statement in statements:
            entries.append(dict(base, command=dict(statement)))
    else:
        entries.append(dict(base, command=_shown(cmd), **_counts(name, reply)))
    if not reply.get("ok"):
        for entry in entries:
            entry.update(ok=0, errCode=reply.get("code"), errMsg=reply.get("errmsg"))
    store.collection(db, PROFILE).insert_many(entries)


def _collection(name, cmd):
    if name == "getMore":
        return cmd.get("collection", "$cmd")
    target = cmd.get(name)
    return target if isinstance(target, str) else "$cmd"


def _shown(cmd):
    return {k: v for k, v in cmd.items() if k not in ("lsid", "$clusterTime", "txnNumber")}


def _counts(name, reply):
    cursor = reply.get("cursor")
    if isinstance(cursor, dict):
        returned = len(cursor.get("firstBatch", cursor.get("nextBatch", [])))
        return {"nreturned": returned, "keysExamined": 0, "docsExamined": returned,
                "cursorid": cursor.get("id", 0)}
    if name == "insert":
        return {"ninserted": reply.get("n", 0)}
    return {}


def _now():
    # The store keeps dates as naive UTC instants (the server codec).
    return datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)


def _app_name(state):
    client = (state or {}).get("handshake", {}).get("client") or {}
    return (client.get("application") or {}).get("name", "")


COMMANDS = {"profile": profile}
