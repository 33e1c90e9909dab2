"""An opt-in topology cache shared by processes (option ``topologyCacheFile``).

After a scan the topology description is written atomically (temporary file, then
``os.replace``) with wall-clock check times. A later process reads it at its first operation
and, while it is younger than heartbeatFrequencyMS, selects from it and connects only to the
server it selected; that connection's handshake still checks the server, and any surprise
marks the topology stale and scans. A missing, corrupt, foreign or unreadable cache is
ignored with a SingleMongoWarning; a cache older than heartbeatFrequencyMS is never used.
"""
import json
import os
import tempfile
import warnings

from bson import ObjectId

from ..errors import SingleMongoWarning
from ..records import replace
from ..sdam.server_description import ServerDescription
from ..sdam.address import format_address, parse_address
from ..sdam.server_type import ServerType, TopologyType
from ..sdam.topology_description import TopologyDescription

VERSION = 1


def cache_key(options):
    """What a cache must match: the deployment this client was configured for."""
    return json.dumps([sorted(format_address(s) for s in options.seeds), options.srv_host,
                       options.replica_set, bool(options.direct_connection),
                       bool(options.load_balanced)])


def _server_doc(sd, now_mono, now_wall):
    checked = sd.last_update_time
    return {"address": format_address(sd.address), "type": sd.server_type.value,
            "setName": sd.set_name, "setVersion": sd.set_version,
            "electionId": str(sd.election_id) if sd.election_id is not None else None,
            "hosts": [format_address(a) for a in sd.hosts],
            "passives": [format_address(a) for a in sd.passives],
            "arbiters": [format_address(a) for a in sd.arbiters],
            "primary": format_address(sd.primary) if sd.primary else None,
            "me": format_address(sd.me) if sd.me else None, "tags": dict(sd.tags),
            "rtt": sd.round_trip_time, "minWireVersion": sd.min_wire_version,
            "maxWireVersion": sd.max_wire_version, "lastWriteDate": sd.last_write_date,
            "logicalSessionTimeoutMinutes": sd.logical_session_timeout_minutes,
            "checkedAt": None if checked is None else now_wall - (now_mono - checked)}


def save(path, options, td, clock):
    data = {"version": VERSION, "key": cache_key(options), "writtenAt": clock.wall(),
            "topologyType": td.topology_type.value, "setName": td.set_name,
            "maxSetVersion": td.max_set_version,
            "maxElectionId": str(td.max_election_id) if td.max_election_id else None,
            "servers": [_server_doc(sd, clock.monotonic(), clock.wall())
                        for sd in td.servers.values()]}
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".singlemongo-topology-", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError as exc:
        warnings.warn(f"cannot write topology cache {path!r}: {exc}", SingleMongoWarning,
                      stacklevel=2)


def _server(doc, now_mono, now_wall):
    checked = doc.get("checkedAt")
    addr = lambda a: parse_address(a) if a else None
    return ServerDescription(
        parse_address(doc["address"]), ServerType(doc["type"]),
        round_trip_time=doc.get("rtt"), last_write_date=doc.get("lastWriteDate"),
        last_update_time=None if checked is None else now_mono - (now_wall - checked),
        min_wire_version=doc.get("minWireVersion"), max_wire_version=doc.get("maxWireVersion"),
        me=addr(doc.get("me")), hosts=tuple(map(parse_address, doc.get("hosts", ()))),
        passives=tuple(map(parse_address, doc.get("passives", ()))),
        arbiters=tuple(map(parse_address, doc.get("arbiters", ()))),
        tags=dict(doc.get("tags") or {}), set_name=doc.get("setName"),
        election_id=ObjectId(doc["electionId"]) if doc.get("electionId") else None,
        set_version=doc.get("setVersion"), primary=addr(doc.get("primary")),
        logical_session_timeout_minutes=doc.get("logicalSessionTimeoutMinutes"))


def load(path, options, clock):
    """(TopologyDescription, age in seconds) from the cache, or None (with a warning)."""
    def ignore(why):
        warnings.warn(f"topology cache {path!r} ignored: {why}; scanning instead",
                      SingleMongoWarning, stacklevel=3)

    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return ignore("it does not exist (yet)")
    except (OSError, ValueError) as exc:
        return ignore(f"cannot read it ({exc})")
    try:
        if data.get("version") != VERSION or data.get("key") != cache_key(options):
            return ignore("it describes another deployment or format")
        age = clock.wall() - float(data["writtenAt"])
        if not 0 <= age < options.heartbeat_frequency_ms / 1000.0:
            return None  # too old to trust: an ordinary scan refreshes it
        now_mono, now_wall = clock.monotonic(), clock.wall()
        servers = [_server(d, now_mono, now_wall) for d in data["servers"]]
        td = TopologyDescription.from_servers(TopologyType(data["topologyType"]), servers,
                                              data.get("setName"), options.seeds)
        election = data.get("maxElectionId")
        return replace(td, max_set_version=data.get("maxSetVersion"),
                       max_election_id=ObjectId(election) if election else None), age
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return ignore(f"it is corrupt ({type(exc).__name__}: {exc})")
