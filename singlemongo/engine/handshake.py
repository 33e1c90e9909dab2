"""The connection handshake command (handshake spec) and read preference on the wire.

Client metadata is computed once per process (it reads the platform and a few environment
variables) and trimmed to the spec's 512-byte limit in the spec's order.
"""
from __future__ import annotations

import os
import sys
from typing import Any

import bson

from .. import __version__
from ..sdam.server_type import ServerType, TopologyType

METADATA_LIMIT = 512
_FAAS_ENV = (
    ("aws.lambda", ("AWS_LAMBDA_RUNTIME_API",), "AWS_EXECUTION_ENV"),
    ("azure.func", ("FUNCTIONS_WORKER_RUNTIME",), None),
    ("gcp.func", ("K_SERVICE", "FUNCTION_NAME"), None),
    ("vercel", ("VERCEL",), None),
)
_metadata_cache: dict[Any, Any] = {}


def _env():
    env = {}
    for name, markers, _ in _FAAS_ENV:
        if any(os.environ.get(m) for m in markers):
            env["name"] = name
            break
    if os.path.exists("/.dockerenv"):
        env["container"] = {"runtime": "docker"}
    if os.environ.get("KUBERNETES_SERVICE_HOST"):
        env.setdefault("container", {})["orchestrator"] = "kubernetes"
    return env


def _drop_container(doc):
    doc.get("env", {}).pop("container", None)


def _os_type_only(doc):
    doc["os"] = {"type": doc["os"]["type"]}


def _drop_env(doc):
    doc.pop("env", None)


def _drop_platform(doc):
    doc.pop("platform", None)


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
    # Handshake spec, "Limitations": drop fields in this order until the document fits.
    for trim in (_drop_container, _os_type_only, _drop_env, _drop_platform):
        if len(bson.encode(doc)) <= METADATA_LIMIT:
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


def read_preference_for_op_msg(topology_type, server_type, read_preference, is_read=True):
    """The ``$readPreference`` to add to an OP_MSG command, or None (server selection spec)."""
    if not is_read:
        return None
    if topology_type is TopologyType.SINGLE:
        if server_type is ServerType.STANDALONE:
            return None
        if server_type is not ServerType.MONGOS and read_preference.is_primary:
            return {"mode": "primaryPreferred"}  # so that any member answers a direct read
    if read_preference.is_primary:
        return None
    return read_preference.document()


def op_query_read_preference(topology_type, server_type, read_preference):
    """(secondaryOk flag, $readPreference or None) for an OP_QUERY read."""
    if topology_type is TopologyType.SINGLE and server_type not in (ServerType.MONGOS,
                                                                    ServerType.STANDALONE):
        return True, None
    if server_type in (ServerType.MONGOS, ServerType.LOAD_BALANCER):
        doc = read_preference.document() if read_preference.needs_document_for_op_query() else None
        return not read_preference.is_primary, doc
    return not read_preference.is_primary, None
