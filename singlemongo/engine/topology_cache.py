"""An opt-in topology cache shared by one user's processes (option ``topologyCacheFile``).

After a scan that changed what the file holds (or found it missing or expired), the topology
description is written atomically (temporary file, then ``os.replace``) with wall-clock check
times, as one BSON document: ``bson`` is loaded anyway, so reading the cache loads no module a
cold one-off would not (no ``json``, no ``tempfile``) and costs less than the scan it saves.
A later process reads it at its first operation and, while it is younger than
heartbeatFrequencyMS, selects from it and connects only to the server it selected; that
connection's handshake still checks the server, and any surprise marks the topology stale
and scans.

The cache decides where operations (and SCRAM conversations) go, so it is read only from a
file private to the user (``private_files.py``), and every field is checked: hosts like hosts
in a connection string. A missing, corrupt, foreign, unsafe or unreadable cache is ignored
with a SingleMongoWarning; a cache older than heartbeatFrequencyMS is never used.
"""
import warnings

import bson
from bson import ObjectId

from singlemongo.errors import SingleMongoWarning
from singlemongo.records import replace
from singlemongo.sdam.address import format_address, parse_announced
from singlemongo.sdam.server_description import MAX_MEMBERS, ServerDescription, ServerType, TopologyType
from singlemongo.sdam.topology_description import TopologyDescription
from singlemongo.engine.connection import signals_held
from singlemongo.engine.private_files import UntrustedFile, read_private, resolve, write_private

VERSION = 2  # 1 was JSON
_warned: set = set()  # (path, "read" or "write"): what this process has warned about


def _warn_once(message, path, doing):
    """One SingleMongoWarning per cache file, failure to read or write it, and process, in
    one line: a web server's log gets no source line, and a process that uses the cache many
    times says it once."""
    if (path, doing) not in _warned:
        _warned.add((path, doing))
        warnings.warn_explicit(message, SingleMongoWarning, "singlemongo topology cache", 0,
                               module="singlemongo")


def cache_key(options):
    """What a cache must match: the deployment this client was configured for."""
    return [sorted(format_address(s) for s in options.seeds), options.srv_host,
            options.replica_set, bool(options.direct_connection), bool(options.load_balanced)]


def _server_doc(sd, now_mono, now_wall):
    checked = sd.last_update_time
    return {"address": format_address(sd.address), "type": sd.server_type.value,
            "setName": sd.set_name, "setVersion": sd.set_version,
            "electionId": sd.election_id,
            "hosts": [format_address(a) for a in sd.hosts],
            "passives": [format_address(a) for a in sd.passives],
            "arbiters": [format_address(a) for a in sd.arbiters],
            "primary": format_address(sd.primary) if sd.primary else None,
            "me": format_address(sd.me) if sd.me else None, "tags": dict(sd.tags),
            "rtt": sd.round_trip_time, "minWireVersion": sd.min_wire_version,
            "maxWireVersion": sd.max_wire_version, "lastWriteDate": sd.last_write_date,
            "logicalSessionTimeoutMinutes": sd.logical_session_timeout_minutes,
            "checkedAt": None if checked is None else now_wall - (now_mono - checked)}


def save(name, options, td, clock, held=None):
    """Write ``td`` unless ``held`` says the file already holds the same, still younger than
    heartbeatFrequencyMS: a scan that confirmed a fresh file costs no write, and one that
    found it expired refreshes it. ``held`` is (description, wall time written) of what this
    process last read or wrote; the same comes back for what the file holds now."""
    now = clock.wall()
    if held is not None and 0 <= now - held[1] < options.heartbeat_frequency_ms / 1000.0 \
            and _same(held[0], td):
        return held
    data = {"version": VERSION, "key": cache_key(options), "writtenAt": now,
            "topologyType": td.topology_type.value, "setName": td.set_name,
            "maxSetVersion": td.max_set_version, "maxElectionId": td.max_election_id,
            "servers": [_server_doc(sd, clock.monotonic(), clock.wall())
                        for sd in td.servers.values()]}
    path = resolve(name, suffix=".bson")
    try:
        write_private(path, bson.encode(data), private_directory=path != name)
    except (OSError, UntrustedFile, TypeError, ValueError) as exc:
        _warn_once(f"cannot write topology cache {path!r}: {exc}", path, "write")
        return held
    return td, now


# ----- reading: every field has the type it must have, or the cache is corrupt ----------------

def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v


def _optional(check):
    return lambda v: v is None or check(v)


_SERVER_FIELDS = {
    "address": lambda v: isinstance(v, str), "type": lambda v: v in ServerType._value2member_map_,
    "setName": _optional(lambda v: isinstance(v, str)), "setVersion": _optional(_is_int),
    "electionId": _optional(lambda v: isinstance(v, ObjectId)),
    "hosts": lambda v: isinstance(v, list), "passives": lambda v: isinstance(v, list),
    "arbiters": lambda v: isinstance(v, list),
    "primary": _optional(lambda v: isinstance(v, str)), "me": _optional(lambda v: isinstance(v, str)),
    "tags": lambda v: isinstance(v, dict) and all(
        isinstance(k, str) and isinstance(x, str) for k, x in v.items()),
    "rtt": _optional(lambda v: _is_number(v) and v >= 0),
    "minWireVersion": _optional(_is_int), "maxWireVersion": _optional(_is_int),
    "lastWriteDate": _optional(_is_number), "logicalSessionTimeoutMinutes": _optional(_is_int),
    "checkedAt": _optional(_is_number),
}
_TOP_FIELDS = {
    "writtenAt": _is_number, "topologyType": lambda v: v in TopologyType._value2member_map_,
    "setName": _optional(lambda v: isinstance(v, str)), "maxSetVersion": _optional(_is_int),
    "maxElectionId": _optional(lambda v: isinstance(v, ObjectId)),
    "servers": lambda v: isinstance(v, list) and len(v) <= 2 * MAX_MEMBERS and all(
        isinstance(d, dict) for d in v),
}


def _check_fields(doc, fields, where):
    for name, valid in fields.items():
        if not valid(doc.get(name)):
            raise ValueError(f"{where}{name} is {doc.get(name)!r:.60}")


def _server(doc, options, now_mono, now_wall):
    _check_fields(doc, _SERVER_FIELDS, "server ")
    # Addresses are validated like hosts in a connection string; only a configured seed may
    # be a UNIX domain socket.
    seeds = {format_address(s): s for s in options.seeds}
    address = seeds.get(doc["address"]) or parse_announced(doc["address"])
    addresses = lambda name: tuple(map(parse_announced, doc[name]))
    optional = lambda a: parse_announced(a) if a else None
    checked = doc["checkedAt"]
    return ServerDescription(
        address, ServerType(doc["type"]),
        round_trip_time=doc["rtt"], last_write_date=doc["lastWriteDate"],
        last_update_time=None if checked is None else now_mono - (now_wall - checked),
        min_wire_version=doc["minWireVersion"], max_wire_version=doc["maxWireVersion"],
        me=optional(doc["me"]), hosts=addresses("hosts"), passives=addresses("passives"),
        arbiters=addresses("arbiters"), tags=dict(doc["tags"]), set_name=doc["setName"],
        election_id=doc["electionId"],
        set_version=doc["setVersion"], primary=optional(doc["primary"]),
        logical_session_timeout_minutes=doc["logicalSessionTimeoutMinutes"])


def _read(path):
    """The cache's document; raises for absent, unsafe, unreadable or non-BSON files."""
    try:
        return signals_held(bson.decode, read_private(path))  # a signal keeps its exception
    except bson.errors.BSONError as exc:
        raise ValueError(f"it is not one BSON document: {exc}") from None


def _same(a, b):
    """Whether two descriptions say the same about every server (round trips, last write
    dates and check times aside: they change with every scan and the cache keeps them only
    as hints)."""
    hints = {"rtt": None, "lastWriteDate": None, "checkedAt": None}

    def essence(td):
        return (td.topology_type, td.set_name, td.max_set_version, td.max_election_id,
                {address: _server_doc(sd, 0.0, 0.0) | hints
                 for address, sd in td.servers.items()})
    return essence(a) == essence(b)


def load(name, options, clock):
    """(TopologyDescription, age in seconds) from the cache, or None: silently on a cold
    start (no file yet, the first run's normal case), else with a warning saying why."""
    path = resolve(name, suffix=".bson")

    def ignore(why):
        _warn_once(f"topology cache {path!r} ignored: {why}; scanning instead", path, "read")

    try:
        data = _read(path)
    except (FileNotFoundError, NotADirectoryError):  # no cache there (yet)
        return None
    except UntrustedFile as exc:
        return ignore(f"it is not private to this user: {exc}")
    except (OSError, ValueError) as exc:
        return ignore(f"cannot read it ({exc})")
    if data.get("version") != VERSION or data.get("key") != cache_key(options):
        return ignore("it describes another deployment or format")
    try:
        _check_fields(data, _TOP_FIELDS, "")
        age = clock.wall() - data["writtenAt"]
        if not 0 <= age < options.heartbeat_frequency_ms / 1000.0:
            return None  # too old to trust: an ordinary scan refreshes it
        now_mono, now_wall = clock.monotonic(), clock.wall()
        servers = [_server(d, options, now_mono, now_wall) for d in data["servers"]]
        td = TopologyDescription.from_servers(TopologyType(data["topologyType"]), servers,
                                              data["setName"], options.seeds)
        return replace(td, max_set_version=data["maxSetVersion"],
                       max_election_id=data["maxElectionId"]), age
    except (KeyError, TypeError, ValueError) as exc:
        return ignore(f"it is corrupt ({exc})")
