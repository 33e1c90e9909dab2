"""User management as a MongoDB 7.0 server does it: ``createUser``, ``updateUser``,
``dropUser``, ``dropAllUsersFromDatabase`` and ``usersInfo``, kept where the server keeps
them, in ``admin.system.users`` (``_id`` "db.user", SCRAM credentials as salt, storedKey and
serverKey). The simulated servers' SCRAM reads the same documents (``lookup``), so a user
created by a test logs in, and one a test deletes from ``system.users`` no longer does."""
import base64
import uuid

import bson

from singlemongo.testing.auth.scram_server import ITERATIONS, credentials
from singlemongo.testing.query.codes import CommandError

USERS = ("admin", "system.users")
DEFAULT_MECHANISMS = ("SCRAM-SHA-1", "SCRAM-SHA-256")
SHOWN = ("_id", "userId", "user", "db", "roles", "customData", "mechanisms")


def _name(cmd, key):
    name = cmd.get(key)
    if not isinstance(name, str) or not name:
        raise CommandError(14, f"BSON field '{key}' is the wrong type, expected a user name")
    return name


def _credentials(name, cmd, mechanisms):
    password = cmd.get("pwd")
    if not isinstance(password, str) or not password:
        raise CommandError(2, "Must provide a 'pwd' field for all user documents, except those "
                              "with '$external' as the user's source db")
    out = {}
    for mechanism in mechanisms:
        if mechanism not in ITERATIONS:
            raise CommandError(2, f"Unknown auth mechanism '{mechanism}'")
        salt, stored, server = credentials(mechanism, name, password)
        out[mechanism] = {"iterationCount": ITERATIONS[mechanism],
                          "salt": base64.b64encode(salt).decode(),
                          "storedKey": base64.b64encode(bytes(stored)).decode(),
                          "serverKey": base64.b64encode(bytes(server)).decode()}
    return out


def _roles(cmd, db):
    roles = cmd.get("roles", [])
    if not isinstance(roles, list):
        raise CommandError(14, "BSON field 'roles' is the wrong type, expected type array")
    return [{"role": r, "db": db} if isinstance(r, str) else dict(r) for r in roles]


def create_user(store, server, cmd):
    db, name = cmd["$db"], _name(cmd, "createUser")
    users = store.collection(*USERS)
    if users.find_one({"_id": f"{db}.{name}"}) is not None:
        raise CommandError(51003, f'User "{name}@{db}" already exists')
    mechanisms = cmd.get("mechanisms") or list(DEFAULT_MECHANISMS)
    doc = {"_id": f"{db}.{name}", "userId": bson.Binary.from_uuid(uuid.uuid4()),
           "user": name, "db": db, "roles": _roles(cmd, db)}
    if db != "$external":
        doc["credentials"] = _credentials(name, cmd, mechanisms)
    if "customData" in cmd:
        doc["customData"] = cmd["customData"]
    users.insert_one(doc)
    return {"ok": 1}


def update_user(store, server, cmd):
    db, name = cmd["$db"], _name(cmd, "updateUser")
    users = store.collection(*USERS)
    doc = users.find_one({"_id": f"{db}.{name}"})
    if doc is None:
        raise CommandError(11, f"User {name}@{db} not found")
    if "pwd" in cmd:
        doc["credentials"] = _credentials(
            name, cmd, cmd.get("mechanisms") or list(doc.get("credentials") or DEFAULT_MECHANISMS))
    if "roles" in cmd:
        doc["roles"] = _roles(cmd, db)
    if "customData" in cmd:
        doc["customData"] = cmd["customData"]
    users.replace_one({"_id": doc["_id"]}, doc)
    return {"ok": 1}


def drop_user(store, server, cmd):
    db, name = cmd["$db"], _name(cmd, "dropUser")
    if not store.collection(*USERS).delete_one({"_id": f"{db}.{name}"}).deleted_count:
        raise CommandError(11, f"User '{name}@{db}' not found")
    return {"ok": 1}


def drop_all_users(store, server, cmd):
    return {"ok": 1, "n": store.collection(*USERS).delete_many({"db": cmd["$db"]}).deleted_count}


def _wanted(cmd):
    """usersInfo's argument as a filter: 1 (this database), a name, {user, db}, or a list."""
    db, arg = cmd["$db"], cmd.get("usersInfo")
    if arg == 1 or arg is True:
        return {"db": db}
    if isinstance(arg, dict) and arg.get("forAllDBs"):
        return {}
    names = arg if isinstance(arg, list) else [arg]
    ids = []
    for item in names:
        if isinstance(item, str):
            ids.append(f"{db}.{item}")
        elif isinstance(item, dict) and isinstance(item.get("user"), str):
            ids.append(f"{item.get('db', db)}.{item['user']}")
        else:
            raise CommandError(2, f"usersInfo takes 1, a user name, {{user, db}} or a list of "
                                  f"them, not {item!r}")
    return {"_id": {"$in": ids}}


def users_info(store, server, cmd):
    found = []
    for doc in store.collection(*USERS).find(_wanted(cmd), sort=[("_id", 1)]):
        doc["mechanisms"] = list(doc.get("credentials") or ())
        shown = {k: doc[k] for k in SHOWN if k in doc}
        if cmd.get("showCredentials") and "credentials" in doc:
            shown["credentials"] = doc["credentials"]
        found.append(shown)
    return {"ok": 1, "users": found}


def lookup(store):
    """``lookup(db, user) -> {mechanism: (salt, stored_key, server_key)}`` for SCRAM."""
    def find(db, user):
        with store.lock:
            doc = store.collection(*USERS).find_one({"_id": f"{db}.{user}"})
        return {mechanism: tuple(base64.b64decode(c[k]) for k in ("salt", "storedKey",
                                                                 "serverKey"))
                for mechanism, c in ((doc or {}).get("credentials") or {}).items()}
    return find


COMMANDS = {"createUser": create_user, "updateUser": update_user, "dropUser": drop_user,
            "dropAllUsersFromDatabase": drop_all_users, "usersInfo": users_info}
