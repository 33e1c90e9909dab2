"""What shells and GUIs ask of a server beyond reads and writes (mongosh's ``rs.status()``,
``rs.conf()``, ``db.currentOp()``, ``db.hostInfo()``, ``db.getLogComponents``...), answered
in the shapes MongoDB's reference pages give for each command, with the simulated
deployment's own members, users and operations.

Each handler takes (deployment, server, command, connection state) and returns the reply;
``COMMANDS`` maps the command names, as a server registers them, to handlers."""
import datetime
import os
import platform
import time

from bson import Int64, Timestamp

# replSetGetStatus: a member's state number and name, by the simulator's roles.
MEMBER_STATES = {"primary": (1, "PRIMARY"), "secondary": (2, "SECONDARY"),
                 "hidden": (2, "SECONDARY"), "arbiter": (7, "ARBITER"),
                 "ghost": (10, "REMOVED")}
NOT_A_REPLICA_SET = {"ok": 0, "code": 76, "codeName": "NoReplicationEnabled",
                     "errmsg": "not running with --replSet"}


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def _members(deployment):
    return getattr(deployment, "members", None)


def repl_set_get_status(deployment, server, cmd, state):
    """replSetGetStatus: the set's name, this member's state and every member's."""
    members = _members(deployment)
    if members is None:
        return dict(NOT_A_REPLICA_SET)
    now = _now()
    optime = {"ts": Timestamp(int(now.timestamp()), 1), "t": Int64(deployment.election_id)}
    rows = []
    for index, member in enumerate(members):
        number, name = MEMBER_STATES.get(member.role, (8, "(not reachable/healthy)"))
        row = {"_id": index, "name": member.address_text, "health": 1.0, "state": number,
               "stateStr": name, "uptime": 0, "optime": optime, "optimeDate": now,
               "configVersion": deployment.set_version, "configTerm": deployment.election_id}
        if member is server:
            row["self"] = True
        rows.append(row)
    mine = MEMBER_STATES.get(server.role, (8, ""))[0]
    return {"set": deployment.name, "date": now, "myState": mine,
            "term": Int64(deployment.election_id), "heartbeatIntervalMillis": Int64(2000),
            "members": rows, "ok": 1}


def repl_set_get_config(deployment, server, cmd, state):
    """replSetGetConfig: the set's configuration document."""
    members = _members(deployment)
    if members is None:
        return dict(NOT_A_REPLICA_SET)
    config = [{"_id": index, "host": member.address_text,
               "arbiterOnly": member.role == "arbiter", "buildIndexes": True,
               "hidden": member.role == "hidden",
               "priority": 0 if member.role in ("arbiter", "hidden") else 1,
               "tags": dict(member.tags), "secondaryDelaySecs": Int64(0), "votes": 1}
              for index, member in enumerate(members) if member.role != "ghost"]
    return {"config": {"_id": deployment.name, "version": deployment.set_version,
                       "term": deployment.election_id, "members": config,
                       "protocolVersion": Int64(1),
                       "writeConcernMajorityJournalDefault": True,
                       "settings": {"chainingAllowed": True,
                                    "heartbeatIntervalMillis": 2000,
                                    "electionTimeoutMillis": 10000}},
            "ok": 1}


def connection_status(deployment, server, cmd, state):
    """connectionStatus: who this connection authenticated as (nobody: empty lists)."""
    user = state.get("authenticated")
    users = [{"user": user, "db": "admin"}] if isinstance(user, str) else []
    info = {"authenticatedUsers": users,
            "authenticatedUserRoles": [{"role": "root", "db": "admin"}] if users else []}
    if cmd.get("showPrivileges"):
        info["authenticatedUserPrivileges"] = []
    return {"authInfo": info, "ok": 1}


def host_info(deployment, server, cmd, state):
    """hostInfo: the machine the simulator runs on."""
    return {"system": {"currentTime": _now(), "hostname": server.address_text,
                       "cpuAddrSize": 64, "numCores": os.cpu_count() or 1,
                       "cpuArch": platform.machine(), "numaEnabled": False},
            "os": {"type": platform.system(), "name": platform.system(),
                   "version": platform.release()},
            "extra": {}, "ok": 1}


def list_commands(deployment, server, cmd, state):
    """listCommands: every command the simulated server answers."""
    from singlemongo.testing.failpoints import served
    names = sorted(served() | set(deployment.commands))
    return {"commands": {name: {"help": f"the simulated server's {name}",
                                "requiresAuth": deployment.requires_auth,
                                "secondaryOk": True, "adminOnly": False,
                                "apiVersions": [], "deprecatedApiVersions": []}
                         for name in names}, "ok": 1}


# getLog: the server's in-memory logs; the simulator writes none.
LOGS = ("global", "startupWarnings")


def get_log(deployment, server, cmd, state):
    """getLog: "*" lists the logs; a log is empty."""
    which = cmd.get("getLog")
    if which == "*":
        return {"names": list(LOGS), "ok": 1}
    if which not in LOGS:
        return {"ok": 0, "code": 2, "codeName": "BadValue",
                "errmsg": f"no RamLog named: {which}"}
    return {"totalLinesWritten": 0, "log": [], "ok": 1}


def current_op(deployment, server, cmd, state):
    """currentOp: the operations in progress."""
    return {"inprog": in_progress(server, cmd), "ok": 1}


def in_progress(server, cmd):
    """currentOp's and ``$currentOp``'s documents: ``cmd``, running, and the operations
    whose replies wait (blockConnection, $where's sleep)."""
    return [operation(server, cmd)] + [operation(server, op, opid, started) for opid, (
        op, started, _) in sorted(server.waiting.items())]


def operation(server, cmd, opid=None, started=None):
    """The currentOp document of ``cmd`` running on ``server`` (since ``started``, a
    ``time.monotonic()``; now if None), under ``opid`` (a new one if None)."""
    micros = int((time.monotonic() - started) * 1e6) if started is not None else 0
    return {"type": "op", "host": server.address_text, "active": True,
            "opid": next(server.opids) if opid is None else opid,
            "op": "command", "ns": f"{cmd.get('$db', 'admin')}.$cmd",
            "command": {k: v for k, v in cmd.items() if not k.startswith("$")},
            "secs_running": Int64(micros // 1_000_000), "microsecs_running": Int64(micros)}


def kill_op(deployment, server, cmd, state):
    """killOp: an operation that is not running is no error (mongod answers alike)."""
    if "op" not in cmd:
        return {"ok": 0, "code": 4, "codeName": "NoSuchKey",
                "errmsg": "Missing expected field \"op\""}
    opid = cmd["op"]
    if isinstance(opid, (int, float)) and not isinstance(opid, bool):
        server.kill_op(int(opid))  # a waiting operation is answered Interrupted
    return {"info": "attempting to kill op", "ok": 1}


COMMANDS = {"replSetGetStatus": repl_set_get_status, "replSetGetConfig": repl_set_get_config,
            "connectionStatus": connection_status, "hostInfo": host_info,
            "listCommands": list_commands, "getLog": get_log, "currentOp": current_op,
            "killOp": kill_op}
