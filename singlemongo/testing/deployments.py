"""Simulated deployments: standalone, mongoses, replica sets and a load balancer.

Each is a context manager that starts real TCP servers on 127.0.0.1 and stops them cleanly::

    with ReplicaSet(3) as rs:
        client = MongoClient(rs.uri)
        rs.step_down()
"""
import datetime
import itertools

from bson import ObjectId

from singlemongo.testing import gaps, stable_api, tools
from singlemongo.testing.auth.scram_server import Users
from singlemongo.testing.failpoints import (WTIMEOUT, add_write_concern_error, server_labels,
                         waits_for_replication)
from singlemongo.testing.auth.x509 import authenticate_x509
from singlemongo.testing.server import SimServer
from singlemongo.testing.query import Store
from singlemongo.testing.query.users import lookup as user_catalog

MAX_WIRE_VERSION = 25
SERVER_VERSION = (8, 0, 0)  # what wire version 25 is (buildInfo says so)
READ_CONCERN_LEVELS = frozenset({"local", "majority", "linearizable", "available", "snapshot"})
WRITE_COMMANDS = frozenset({"insert", "update", "delete", "findandmodify", "bulkwrite", "create",
                            "drop", "createindexes", "dropindexes", "dropdatabase"})
READ_ANYWHERE = frozenset({"buildinfo", "listdatabases", "endsessions", "killcursors", "getmore",
                           "saslstart", "saslcontinue"}) | {name.lower() for name in tools.COMMANDS}
NO_AUTH_NEEDED = frozenset({"hello", "ismaster", "ping", "saslstart", "saslcontinue",
                            "endsessions", "buildinfo", "authenticate", "connectionstatus"})
_ids = itertools.count(1)
MEMBER_ROLES = ("secondary", "arbiter", "hidden")  # what add_member makes


def _oid(n):
    return ObjectId(f"{n:024x}")


def installed_compressors():
    """The compressors a simulated server offers by default: zlib, and snappy and zstd when
    their packages are installed (the server compresses its replies with them too)."""
    from importlib.util import find_spec
    from singlemongo.wire.compression import zstd_module
    return tuple(name for name, found in (("snappy", find_spec("snappy")), ("zlib", True),
                                          ("zstd", zstd_module())) if found)


class _Deployment:
    """Options shared by every deployment: ``users`` requires SCRAM authentication (users a
    test creates with ``createUser`` can log in either way), ``mechanisms`` the other SASL
    mechanisms' users (``sasl.Plain``, ...), ``tls_context`` serves TLS, ``compressors`` are
    the ones the servers accept (None: every one installed), and
    ``hello_ok=False`` plays a pre-5.0 server that never offers the ``hello`` command, and
    ``host`` is the name the servers announce (``"localhost"`` plays a replica set configured
    with that name; they listen on 127.0.0.1 either way).
    ``server.limits`` overrides a server's maxBsonObjectSize, maxMessageSizeBytes and
    maxWriteBatchSize."""
    kind = "deployment"
    gossips_cluster_time = False

    def __init__(self, users=None, tls_context=None, compressors=None, hello_ok=True,
                 x509_users=(), host="127.0.0.1", mechanisms=()):
        self.servers = []
        self.host = host
        self.hello_ok = hello_ok  # False plays a server that only knows legacy hello
        self.commands = {}  # extra command handlers: name -> fn(server, cmd, state) -> reply
        # MONGODB-X509: the certificate subjects (RFC 2253) that are users of $external.
        self.x509_users = frozenset(x509_users)
        self.requires_auth = bool(users or x509_users or mechanisms)
        # Other SASL mechanisms (sasl.py): mechanism name -> its server side.
        self.sasl = {m.mechanism: m for m in mechanisms}
        self.tls_context = tls_context
        self.compressors = (tuple(compressors) if compressors is not None
                            else installed_compressors())
        self.store = Store().install(self)
        # SCRAM: the users given here, and those createUser keeps in admin.system.users.
        self.users = Users(users or {}, catalog=user_catalog(self.store))
        self.sessions_ended = []

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def start(self):
        for server in self.servers:
            server.start()
        return self

    def stop(self):
        for server in self.servers:
            server.stop()

    def reset(self):
        """Back to the state just after ``start()``: no data, faults, latency or counters,
        every server up in its first role. Cheaper than a new deployment between tests."""
        self.store.reset()
        self.sessions_ended.clear()
        for server in self.servers:
            server.reset()
        return self

    @property
    def uri(self):
        return "mongodb://" + ",".join(s.address_text for s in self.servers) + self._query("/?")

    def _query(self, lead):
        return lead + "tls=true&tlsInsecure=true" if self.tls_context else ""

    def counters(self):
        """{address: (connections, hellos, commands)} across every server."""
        return {s.address_text: (s.connections, hellos(s), sum(s.commands.values()))
                for s in self.servers}

    def total_connections(self):
        return sum(s.connections for s in self.servers)

    def _new_server(self, **attrs):
        server = SimServer(self._handle, tls_context=self.tls_context)
        server.executed_before = self.store.executed_before
        server.time_limited = self.store.time_limited
        server.await_data = self.store.await_seconds
        server.role = attrs.pop("role")
        server.host = self.host
        server.process_id = _oid(next(_ids))
        server.tv_counter = 0
        server.tags = {}
        server.service_id = None
        for key, value in attrs.items():
            setattr(server, key, value)
        self.servers.append(server)
        return server

    def hello(self, server, state):
        raise NotImplementedError

    def refuse(self, server, name, cmd):
        """An error reply if this server cannot run the command in its current role."""
        return None

    def replication_stopped(self):
        """Whether a member has the fail point stopReplProducer on."""
        return any("stopReplProducer" in s.failpoints for s in self.servers)

    def data_bearing_members(self):
        """How many members a write concern's ``w`` can count (more: UnsatisfiableWriteConcern):
        a replica set's data-bearing members; behind mongos, a three-member shard."""
        if self.kind in ("sharded", "load-balanced"):
            return 3
        return len([s for s in self.servers if getattr(s, "role", None) in (
            "primary", "secondary", "hidden", "standalone")]) or 1

    def _handle(self, server, name, cmd, state):
        reply = self._dispatch(server, name, name.lower(), cmd, state)
        gaps.note(name, reply)
        if name.lower() in ("hello", "ismaster") and not self.hello_ok:
            reply.pop("helloOk", None)
        if reply.get("ok") in (0, 0.0) and "errorLabels" not in reply:
            labels = server_labels(cmd, reply.get("code"))  # what a 4.4+ server adds itself
            if labels:
                reply = dict(reply, errorLabels=list(labels))
        wc = cmd.get("writeConcern")
        if reply.get("ok") and isinstance(wc, dict) and isinstance(wc.get("w"), int) and \
                wc["w"] > self.data_bearing_members():
            reply = add_write_concern_error(reply, cmd, {
                "code": 100, "codeName": "UnsatisfiableWriteConcern",
                "errmsg": "Not enough data-bearing nodes"})
        if reply.get("ok") and "writeConcernError" not in reply and \
                waits_for_replication(cmd) and self.replication_stopped():
            # Fail point stopReplProducer: a real server waits until wtimeout (forever without
            # one); the simulator answers the timeout at once either way.
            reply = add_write_concern_error(reply, cmd, dict(WTIMEOUT))
        if "autocommit" in cmd and reply.get("ok") and self.kind in ("sharded", "load-balanced"):
            # Sharded Transactions, "recoveryToken field": every ok reply in a transaction.
            reply = dict(reply, recoveryToken={"recoveryShardId": "shard0"})
        if self.gossips_cluster_time:  # hello replies carry it too, as on a real server
            now = self.store.transactions.tick()
            reply.setdefault("$clusterTime", {"clusterTime": now, "signature": {
                "hash": b"\x00" * 20, "keyId": 0}})
            reply.setdefault("operationTime", now)
        return reply

    def _dispatch(self, server, name, lname, cmd, state):
        """A command's reply: the hello first, then the checks every other command passes in
        a server's order (authentication, the Stable API, the read concern level), the
        commands served before the deployment's refusals (faults, a member's role), then the
        rest: the deployment's table, the tools' commands, buildInfo."""
        if lname in ("hello", "ismaster"):
            return self._hello(server, cmd, state)
        for check in (self._unauthenticated, self._expired, _api_refusal, _bad_read_concern):
            refusal = check(lname, name, cmd, state)
            if refusal is not None:
                return refusal
        early = _BEFORE_REFUSALS.get(lname)
        if early is not None:
            return early(self, cmd, state)
        refusal = self.refuse(server, lname, cmd)
        if refusal is not None:
            return refusal
        if lname == "endsessions":
            return self._end_sessions(cmd)
        handler = self.commands.get(name)
        if handler is not None:
            return handler(server, cmd, state)
        tool = tools.COMMANDS.get(name)
        if tool is not None:  # what shells ask: rs.status(), db.currentOp(), ...
            return tool(self, server, cmd, state)
        if lname == "buildinfo":  # after self.commands: a test may answer it its own way
            return {"version": ".".join(map(str, SERVER_VERSION)),
                    "versionArray": [*SERVER_VERSION, 0], "gitVersion": "singlemongo-simulated",
                    "bits": 64, "maxBsonObjectSize": 16 * 1024 * 1024, "ok": 1}
        return {"ok": 0, "errmsg": f"no such command: '{name}'", "code": 59,
                "codeName": "CommandNotFound"}

    def _unauthenticated(self, lname, name, cmd, state):
        if self.requires_auth and lname not in NO_AUTH_NEEDED and not state.get("authenticated"):
            return {"ok": 0, "code": 13, "codeName": "Unauthorized",
                    "errmsg": f"command {name} requires authentication"}
        return None

    def _expired(self, lname, name, cmd, state):
        expires = state.get("auth_expires")  # (when, now) of a token's login (MONGODB-OIDC)
        if expires is not None and lname not in NO_AUTH_NEEDED and \
                lname not in ("saslstart", "saslcontinue") and expires[0] <= expires[1]():
            return {"ok": 0, "code": 391, "codeName": "ReauthenticationRequired",
                    "errmsg": "the access token this connection authenticated with expired"}
        return None

    def _end_sessions(self, cmd):
        self.sessions_ended.extend(cmd.get("endSessions", []))
        with self.store.lock:  # a real server aborts an ended session's transaction
            ended = cmd.get("endSessions")
            self.store.transactions.end(ended if isinstance(ended, list) else [])
        return {"ok": 1}

    def _hello(self, server, cmd, state):
        if "client" in cmd:
            state["handshake"] = cmd
        reply = self._base_hello(server, cmd, state)
        reply.update(self.hello(server, cmd))
        reply.update(server.hello_extra)
        wanted = [c for c in cmd.get("compression", ()) if c in self.compressors]
        if wanted:
            reply["compression"] = wanted
        spec = cmd.get("speculativeAuthenticate")
        if isinstance(spec, dict) and spec.get("mechanism") == "MONGODB-X509":
            done = self._x509(spec, state)
            if done.get("ok") == 1:
                reply["speculativeAuthenticate"] = {"dbname": "$external", "user": done["user"]}
        else:
            mechs_for = cmd.get("saslSupportedMechs")
            if isinstance(mechs_for, str):
                db, _, user = mechs_for.partition(".")
                mechanisms = self.users.mechanisms(db, user)
                if mechanisms or self.requires_auth:
                    reply["saslSupportedMechs"] = mechanisms
            spec = cmd.get("speculativeAuthenticate")
            if spec:
                first = self._sasl_start(state, spec, spec.get("db"))
                if first.get("ok") == 1:
                    reply["speculativeAuthenticate"] = first
        return reply

    def _sasl_start(self, state, cmd, db):
        """A saslStart (or a hello's speculative one): SCRAM, or the mechanism named."""
        state["sasl"] = self.sasl.get(cmd.get("mechanism"), self.users)
        return state["sasl"].start(state, cmd.get("mechanism"), cmd.get("payload", b""), db)

    def _x509(self, cmd, state):
        return authenticate_x509(self.x509_users, cmd, state)

    @staticmethod
    def _base_hello(server, cmd, state):
        reply = {"ok": 1, "maxBsonObjectSize": 16 * 1024 * 1024,
                 "maxMessageSizeBytes": 48_000_000, "maxWriteBatchSize": 100_000,
                 "localTime": datetime.datetime.now(datetime.timezone.utc),
                 "logicalSessionTimeoutMinutes": 30,
                 "connectionId": state.get("connection_id", server.connections),
                 "minWireVersion": 0, "maxWireVersion": MAX_WIRE_VERSION,
                 "topologyVersion": {"processId": server.process_id,
                                     "counter": server.tv_counter}}
        if cmd.get("helloOk") or "hello" in cmd:
            reply["helloOk"] = True
        reply.update(server.limits)
        return reply


def hellos(server):
    return sum(n for name, n in server.commands.items() if name.lower() in ("hello", "ismaster"))


def _secondary_ok(cmd):
    """OP_MSG: a read preference other than primary is what secondaryOk was (OP_MSG spec)."""
    preference = cmd.get("$readPreference")
    return isinstance(preference, dict) and preference.get("mode", "primary") != "primary"


def _primary_key(cmd):
    return "isWritablePrimary" if "hello" in cmd else "ismaster"


class Standalone(_Deployment):
    kind = "standalone"

    def __init__(self, **options):
        super().__init__(**options)
        self._new_server(role="standalone")

    def refuse(self, server, name, cmd):
        if (cmd.get("readConcern") or {}).get("level") == "snapshot":
            return {"ok": 0, "code": 123, "codeName": "NotAReplicaSet",
                    "errmsg": "readConcern level 'snapshot' is only allowed on a replica set "
                              "member or mongos"}
        if "txnNumber" in cmd:  # what a standalone mongod answers
            return {"ok": 0, "code": 20, "codeName": "IllegalOperation",
                    "errmsg": "Transaction numbers are only allowed on a replica set member "
                              "or mongos"}
        return None

    def hello(self, server, cmd):
        return {_primary_key(cmd): True}


class Sharded(_Deployment):
    """``n`` mongoses."""
    kind = "sharded"
    gossips_cluster_time = True

    def __init__(self, n=2, **options):
        super().__init__(**options)
        for _ in range(n):
            self._new_server(role="mongos")

    def hello(self, server, cmd):
        return {_primary_key(cmd): True, "msg": "isdbgrid"}


class LoadBalancer(_Deployment):
    """A load balancer in front of mongoses; ``service_id=False`` plays one without serviceId,
    ``op_msg_only=True`` one that never answers OP_QUERY (legacy hello)."""
    kind = "load-balanced"
    gossips_cluster_time = True  # the mongos behind it does

    def __init__(self, service_id=True, op_msg_only=False, **options):
        super().__init__(**options)
        self.lb = self._new_server(role="mongos")
        self.lb.accepts_op_query = not op_msg_only
        self.send_service_id = service_id

    @property
    def uri(self):
        return f"mongodb://{self.lb.address_text}/?loadBalanced=true" + self._query("&")

    def hello(self, server, cmd):
        reply = {_primary_key(cmd): True, "msg": "isdbgrid"}
        if cmd.get("loadBalanced") and self.send_service_id:
            reply["serviceId"] = server.process_id
        return reply


class ReplicaSet(_Deployment):
    """Members 0..n-1 (member 0 starts as primary), plus arbiters, hidden members and ghosts."""
    kind = "replica-set"
    gossips_cluster_time = True

    def __init__(self, n=3, name="rs", arbiters=0, hidden=0, primary=0, **options):
        super().__init__(**options)
        self.name = name
        self.set_version = 1
        self.election_id = 1
        for _ in range(n):
            self._new_server(role="secondary")
        for _ in range(arbiters):
            self._new_server(role="arbiter")
        for _ in range(hidden):
            self._new_server(role="hidden")
        self.members = list(self.servers)
        if primary is not None:
            self.servers[primary].role = "primary"
        self._initial = [(server, server.role) for server in self.servers]
        self.publish_config()

    def publish_config(self):
        """The set's configuration where a member keeps it, ``local.system.replset`` (what
        mongosh's rs.printSecondaryReplicationInfo() reads); kept up to date as members
        come and go."""
        config = tools.repl_set_get_config(self, None, {}, {})["config"]
        self.store.collection("local", "system.replset").replace_one(
            {"_id": self.name}, config, upsert=True)

    def reset(self):
        for server in [s for s in self.servers if s not in dict(self._initial)]:
            server.stop()
            self.servers.remove(server)
        for server, role in self._initial:
            if server.role != role:
                server.role = role
                self._bump(server)
        self.members = [server for server, _ in self._initial]
        super().reset()
        self.publish_config()
        return self

    @property
    def uri(self):
        seeds = ",".join(s.address_text for s in self.servers if s.role != "hidden")
        return f"mongodb://{seeds}/?replicaSet={self.name}" + self._query("&")

    @property
    def primary(self):
        return next((s for s in self.members if s.role == "primary"), None)

    def _bump(self, *servers):
        # topologyVersion: a member's counter moves when its hello would read differently.
        for server in set(servers):
            server.tv_counter += 1

    def step_down(self):
        """The primary becomes a secondary; no primary until ``elect``."""
        old = self.primary
        if old is not None:
            old.role = "secondary"
            self._bump(*self.members)  # every member's "primary" changed
        return old

    def elect(self, index):
        """Member ``index`` becomes primary with a new electionId."""
        self._check_member("elect", index)
        self.step_down()
        self.election_id += 1
        new = self.members[index]
        new.role = "primary"
        self._bump(*self.members)
        self.publish_config()
        return new

    def _check_member(self, control, index):
        """IndexError naming the members a control can name, for one it cannot."""
        if isinstance(index, bool) or not isinstance(index, int) or \
                not -len(self.members) <= index < len(self.members):
            raise IndexError(f"{control}({index!r}): the replica set has {len(self.members)} "
                             f"member(s), numbered 0 to {len(self.members) - 1}")

    def add_member(self, role="secondary"):
        """A new member in ``role`` ("secondary", "arbiter" or "hidden"), started."""
        if role not in MEMBER_ROLES:
            raise ValueError(f"add_member(role={role!r}): a new member is one of "
                             f"{', '.join(MEMBER_ROLES)}")
        server = self._new_server(role=role)
        self.members.append(server)
        server.start()
        self.set_version += 1
        self._bump(*self.members)  # every member's hello changed (an awaiting one answers)
        self.publish_config()
        return server

    def remove_member(self, index):
        """Reconfigure the member out; it answers as a ghost from then on."""
        self._check_member("remove_member", index)
        server = self.members.pop(index)
        server.role = "ghost"
        self.set_version += 1
        self._bump(server, *self.members)
        self.publish_config()
        return server

    def admin_command(self, server, name, cmd):
        """replSetStepDown and replSetFreeze, as a test drives an election."""
        if name == "replsetfreeze":
            return {"ok": 1}
        if name == "replsetstepdown":
            if server.role != "primary":
                return {"ok": 0, "code": 10107, "codeName": "NotWritablePrimary",
                        "errmsg": "not primary so can't step down"}
            others = [i for i, s in enumerate(self.members) if s.role == "secondary"]
            if not others:
                return {"ok": 0, "code": 262, "codeName": "ExceededTimeLimit",
                        "errmsg": "No electable secondaries caught up"}
            self.elect(others[0])
            return {"ok": 1}
        return None

    def refuse(self, server, name, cmd):
        if name in ("replsetfreeze", "replsetstepdown"):
            return self.admin_command(server, name, cmd)
        if server.role == "primary" or name in READ_ANYWHERE:
            return None
        if name in WRITE_COMMANDS:
            return {"ok": 0, "errmsg": "not primary", "code": 10107,
                    "codeName": "NotWritablePrimary",
                    "topologyVersion": {"processId": server.process_id,
                                        "counter": server.tv_counter}}
        if server.role in ("secondary", "hidden") and _secondary_ok(cmd):
            return None  # a hidden member serves reads sent to it directly, as a secondary
        return {"ok": 0, "errmsg": "not primary and secondaryOk=false", "code": 13435,
                "codeName": "NotPrimaryNoSecondaryOk"}

    def hello(self, server, cmd):
        role = server.role
        if role == "ghost":
            return {_primary_key(cmd): False, "secondary": False, "isreplicaset": True}
        data = [s.address_text for s in self.members if s.role in ("primary", "secondary")]
        reply = {_primary_key(cmd): role == "primary", "secondary": role in ("secondary", "hidden"),
                 "setName": self.name, "setVersion": self.set_version, "hosts": data,
                 "me": server.address_text,
                 "lastWrite": {"lastWriteDate": datetime.datetime.now(datetime.timezone.utc)}}
        arbiters = [s.address_text for s in self.members if s.role == "arbiter"]
        if arbiters:
            reply["arbiters"] = arbiters
        primary = self.primary
        if primary is not None:
            reply["primary"] = primary.address_text
        if role == "primary":
            reply["electionId"] = _oid(self.election_id)
        elif role == "arbiter":
            reply["arbiterOnly"] = True
        elif role == "hidden":
            reply["hidden"] = True
        if server.tags:
            reply["tags"] = dict(server.tags)
        return reply


def _api_refusal(lname, name, cmd, state):
    return stable_api.refusal(lname, name, cmd)


def _bad_read_concern(lname, name, cmd, state):
    read_concern = cmd.get("readConcern")
    level = read_concern.get("level") if isinstance(read_concern, dict) else None
    if level is not None and level not in READ_CONCERN_LEVELS:
        return {"ok": 0, "code": 9, "codeName": "FailedToParse",
                "errmsg": "readConcern.level must be either 'local', 'majority', "
                          "'linearizable', 'available', or 'snapshot'"}
    return None


# Commands a deployment serves before its refusals (a fault, a member's role): (deployment,
# command, connection state) -> reply.
_BEFORE_REFUSALS = {
    "ping": lambda dep, cmd, state: {"ok": 1},
    "authenticate": lambda dep, cmd, state: dep._x509(cmd, state),
    "saslstart": lambda dep, cmd, state: dep._sasl_start(state, cmd, cmd.get("$db")),
    "saslcontinue": lambda dep, cmd, state: state.get("sasl", dep.users).proceed(
        state, cmd.get("payload", b"")),
}
