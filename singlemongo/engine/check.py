"""hello: the handshake a connection opens with (handshake spec), and one check of one server
(server monitoring spec, "Check", as a single-threaded client does it).

Client metadata is computed once per process (it reads the platform and a few environment
variables) and trimmed to the spec's 512-byte limit in the spec's order.

A check is a hello on the server's connection, or the handshake of a new one. Its outcome
updates the description, and every ServerHeartbeatStartedEvent ends with a Succeeded or Failed
event whose duration is the check's own round trip. A known server whose check fails on the
network is checked again at once, on a new connection ("Network or command error during
server check", step 4: the old socket may only have gone stale); a second failure leaves it
Unknown, skipped for cooldownMS.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Optional

import bson

from .. import __version__
from ..errors import ConnectionFailure, with_configured_timeouts
from ..records import dataclass
from ..sdam.address import format_address
from ..sdam.server_description import ServerDescription, average_rtt
from ..replies import is_ok

METADATA_LIMIT = 512
_FAAS_ENV = (
    ("aws.lambda", ("AWS_LAMBDA_RUNTIME_API",), "AWS_EXECUTION_ENV"),
    ("azure.func", ("FUNCTIONS_WORKER_RUNTIME",), None),
    ("gcp.func", ("K_SERVICE", "FUNCTION_NAME"), None),
    ("vercel", ("VERCEL",), None),
)
_metadata_cache: dict[Any, Any] = {}

# Handshake spec, "client.env.container" (PyMongo's names, served by pymongo.pool_options).
DOCKER_ENV_PATH = "/.dockerenv"
ENV_VAR_K8S = "KUBERNETES_SERVICE_HOST"
RUNTIME_NAME_DOCKER = "docker"
ORCHESTRATOR_NAME_K8S = "kubernetes"


def _env():
    env = {}
    for name, markers, _ in _FAAS_ENV:
        if any(os.environ.get(m) for m in markers):
            env["name"] = name
            break
    if os.path.exists(DOCKER_ENV_PATH):
        env["container"] = {"runtime": RUNTIME_NAME_DOCKER}
    if os.environ.get(ENV_VAR_K8S):
        env.setdefault("container", {})["orchestrator"] = ORCHESTRATOR_NAME_K8S
    return env


def _env_name_only(doc):
    if "env" in doc:
        doc["env"] = {k: v for k, v in doc["env"].items() if k == "name"}


def _os_type_only(doc):
    doc["os"] = {"type": doc["os"]["type"]}


def _drop_env(doc):
    doc.pop("env", None)


def _overflow(doc):
    return len(bson.encode(doc)) - METADATA_LIMIT


def _shortened(text, by, keep=""):
    """``text`` ``by`` bytes shorter in UTF-8 (never below ``keep``, its prefix), cut on a
    character boundary."""
    data = text.encode("utf-8")
    floor = len(keep.encode("utf-8"))
    return data[:max(floor, len(data) - by)].decode("utf-8", "ignore")


def _truncate_platform(doc):
    doc["platform"] = _shortened(doc.get("platform", ""), _overflow(doc))
    if not doc["platform"]:
        doc.pop("platform")


def _truncate_wrapped(doc):
    """Beyond the spec's list ("truncate or omit driver provided values"): what wrapping
    libraries appended to the driver's version, then to its name; the driver's own stays."""
    for field, own in (("version", __version__), ("name", "singlemongo")):
        over = _overflow(doc)
        if over > 0:
            doc["driver"][field] = _shortened(doc["driver"][field], over, own)


# Handshake spec, "Limitations": applied in this order until the document fits in 512 bytes.
TRIMS = (_env_name_only, _os_type_only, _drop_env, _truncate_platform, _truncate_wrapped)


def _wrapped(doc, drivers):
    """Handshake spec, "Supporting Wrapping Libraries": each library's name, version and
    platform joined to the driver's with ``|`` (an empty name or version keeps its segment)."""
    for info in drivers:
        doc["driver"]["name"] += f"|{info.name or ''}"
        doc["driver"]["version"] += f"|{info.version or ''}"
        if info.platform:
            doc["platform"] += f"|{info.platform}"


def client_metadata(appname=None, drivers=()):
    """The ``client`` document; fields are dropped in the spec's order until it fits.
    ``drivers``: the DriverInfo of libraries wrapping the driver."""
    key = (appname, tuple(drivers))
    if key in _metadata_cache:
        return _metadata_cache[key]
    # os.uname and sys instead of the platform module, which costs milliseconds to import.
    uname = os.uname() if hasattr(os, "uname") else None
    system = uname.sysname if uname else sys.platform
    version = ".".join(map(str, sys.version_info[:3]))
    doc = {"driver": {"name": "singlemongo", "version": __version__},
           "os": {"type": system, "name": system,
                  "architecture": uname.machine if uname else "unknown",
                  "version": uname.release if uname else "unknown"},
           "platform": f"{'CPython' if sys.implementation.name == 'cpython' else sys.implementation.name} {version}"}
    _wrapped(doc, drivers)
    if appname:
        doc["application"] = {"name": appname}
    env = _env()
    if env:
        doc["env"] = env
    for trim in TRIMS:
        if _overflow(doc) <= 0:
            break
        trim(doc)
    _metadata_cache[key] = doc
    return doc


def uses_op_msg_hello(options):
    """Handshake spec: a load balancer, or a client that declared a Stable API version
    (versioned API spec, "Handshake behavior"), is greeted with ``hello``; everything else
    with the legacy hello and ``helloOk``. Both go as OP_MSG (the spec's 2026-06 revision;
    PyMongo 4.20)."""
    return bool(options.load_balanced) or options.server_api is not None


def api_fields(options):
    """The Stable API fields every command carries when a version is declared (versioned API
    spec, "Command Syntax"; getMore and transaction commands included), else nothing."""
    api = options.server_api
    return api.command_fields() if api is not None else {}


def handshake_command(options, initial=True, hello_ok=False, drivers=()):
    """The hello for a new connection (``initial``) or for a check on an open one. Every
    legacy hello carries ``helloOk: true`` (checkServer pseudocode), so a server that
    learns to speak ``hello`` is used with it."""
    if hello_ok or uses_op_msg_hello(options):
        cmd = {"hello": 1}
    else:
        cmd = {"ismaster": 1, "helloOk": True}  # PyMongo's spelling of the legacy hello
    cmd.update(api_fields(options))
    if not initial:
        return cmd
    cmd["helloOk"] = True
    cmd["client"] = client_metadata(options.appname, drivers)
    if options.compressors:
        cmd["compression"] = list(options.compressors)
    if options.load_balanced:
        cmd["loadBalanced"] = True
    cmd["backpressure"] = True  # client backpressure: the server may answer 462 with labels
    return cmd


# ----- a check ------------------------------------------------------------------------------

@dataclass
class Outcome:
    """What one hello got: a reply or a network error, and how long it took (seconds)."""
    reply: Optional[dict] = None
    error: Optional[ConnectionFailure] = None
    duration: float = 0.0
    new_connection: Any = None  # a connection the check opened and has not handed over


def hello(topology, address, conn=None, timeout_s=None):
    """A hello on ``conn``, or on a new connection when there is none (``timeout_s`` caps its
    connectTimeoutMS); never raises."""
    clock = topology.clock
    start = clock.monotonic()
    if conn is None or conn.closed:
        try:
            conn, reply, rtt = topology.connect(address, timeout_s)
        except ConnectionFailure as exc:
            return Outcome(error=exc, duration=clock.monotonic() - start)
        topology.connections[address] = conn
        return Outcome(reply, duration=rtt)
    try:
        reply = conn.command("admin", handshake_command(topology.options, initial=False,
                                                        hello_ok=conn.hello_ok),
                             topology.handshake_deadline(timeout_s))
    except ConnectionFailure as exc:
        return Outcome(error=exc, duration=clock.monotonic() - start)
    conn.last_used = clock.monotonic()
    return Outcome(reply, duration=conn.last_used - start)


def check_server(topology, address, outcome=None):
    """Check ``address`` (or apply the ``outcome`` a concurrent wave got); the new description.
    A wave has already published the heartbeat's Started event."""
    prior = topology.description.servers.get(address)
    if outcome is None:
        topology.heartbeat_started(address)
        outcome = hello(topology, address, topology.connections.get(address))
    if outcome.error is None:
        return _succeeded(topology, address, outcome, prior)
    if _cut_short(topology, outcome):
        return _unfinished(topology, address, outcome, prior)
    unknown = failed(topology, address, outcome)
    if prior is None or not prior.is_known or address not in topology.description.servers:
        return topology.description.servers.get(address)
    topology.heartbeat_started(address)
    outcome = hello(topology, address)  # at once, on a new connection
    # SDAM, "roundTripTime": the server became Unknown, its average RTT is cleared; the retry
    # starts a new one (it folded the old average in).
    if outcome.error is None:
        return _succeeded(topology, address, outcome, unknown)
    if _cut_short(topology, outcome):
        return _unfinished(topology, address, outcome, unknown)
    return failed(topology, address, outcome)


def _cut_short(topology, outcome):
    """A check that timed out because the operation's timeoutMS ran out, not connectTimeoutMS:
    it says nothing about the server (CSOT, "Server Monitoring": monitoring is not subject
    to timeoutMS; only a single-threaded client's operation waits for its checks)."""
    deadline = topology.deadline
    return deadline is not None and deadline.expired() and getattr(outcome.error, "timeout",
                                                                   False)


def _unfinished(topology, address, outcome, prior):
    """The heartbeat ends, the half-used connection closes (no pool clear), the server keeps
    its description and the topology stays stale: the next operation checks it again."""
    conn = topology.connections.get(address)
    if conn is not None and conn.closed:
        topology.connections.pop(address)
    ended_unapplied_failure(topology, address, outcome)
    topology.unfinished.add(address)
    return prior


def ended_unapplied_failure(topology, address, outcome):
    """The Failed event that ends a check's heartbeat (alone: for an overloaded server or a
    check cut short, the description stays)."""
    if topology.events.active:
        from ..sdam import monitoring as m  # SDAM events: loaded when anyone listens
        topology.events.publish(m.ServerHeartbeatFailedEvent(outcome.duration, outcome.error,
                                                             address))


def _succeeded(topology, address, outcome, prior):
    reply, now = outcome.reply, topology.clock.monotonic()
    topology.verified.add(address)
    events = topology.events.active
    if not is_ok(reply):  # a command error: Unknown, then cleared
        if events:
            from ..sdam import monitoring as m
            topology.events.publish(m.ServerHeartbeatFailedEvent(outcome.duration, reply, address))
        sd = ServerDescription.from_hello(address, reply, now=now)
        topology.apply(sd)
        topology.close_connection(address, bump_generation=True)
        return topology.description.servers.get(address, sd)
    else:
        if events:
            shown = {} if "speculativeAuthenticate" in reply else reply  # sensitive
            from ..sdam import monitoring as m
            topology.events.publish(m.ServerHeartbeatSucceededEvent(outcome.duration, shown,
                                                                    address))
        topology.sessions.advance_cluster_time(reply)
        previous_rtt = prior.round_trip_time if prior is not None else None
        sd = ServerDescription.from_hello(address, reply,
                                          average_rtt(previous_rtt, outcome.duration), now)
        if sd.dropped_hosts and (prior is None or prior.dropped_hosts != sd.dropped_hosts):
            _log_dropped(topology, sd)
    topology.apply(sd)
    return topology.description.servers.get(address, sd)


def _log_dropped(topology, sd):
    """Announced hosts left out of a reply are said once (not every heartbeat), as a warning:
    the server is kept, but a member the set announces wrongly is never reached."""
    from ..monitoring import log
    if log.enabled(log.TOPOLOGY, log.WARNING):
        text = (f"{format_address(sd.address)} announced host entries that are not valid "
                f"addresses; they are left out and the server is used: "
                f"{'; '.join(sd.dropped_hosts)}")
        log.emit(log.TOPOLOGY, log.WARNING, text, topology.topology_id,
                 message="Invalid announced hosts dropped",
                 serverHost=sd.address[0], serverPort=sd.address[1],
                 dropped=list(sd.dropped_hosts))


def failed(topology, address, outcome):
    """A failed check: the server Unknown with a network error (its cooldown starts), then
    its pool cleared, interrupting in-use connections if the check timed out (server
    monitoring, "Network or command error during server check")."""
    ended_unapplied_failure(topology, address, outcome)
    options = topology.options
    with_configured_timeouts(outcome.error, None, options.socket_timeout_ms,
                             options.connect_timeout_ms)
    sd = ServerDescription(address, error=str(outcome.error), error_is_network=True,
                           last_update_time=topology.clock.monotonic())
    topology.apply(sd)
    topology.close_connection(address, bump_generation=True,
                              interrupt=bool(getattr(outcome.error, "timeout", False)))
    return topology.description.servers.get(address, sd)


def end_unapplied(topology, address, outcome):
    """A wave's outcome for a server an earlier reply removed: its heartbeat still ends, and a
    connection it opened is closed; nothing else is done for it."""
    if topology.events.active:
        if outcome.error is None and is_ok(outcome.reply):
            shown = {} if "speculativeAuthenticate" in outcome.reply else outcome.reply
            from ..sdam import monitoring as m
            topology.events.publish(m.ServerHeartbeatSucceededEvent(outcome.duration, shown,
                                                                    address))
        else:
            from ..sdam import monitoring as m
            topology.events.publish(m.ServerHeartbeatFailedEvent(
                outcome.duration, outcome.error or outcome.reply, address))
    if address not in topology.description.servers:
        topology.close_connection(address)
