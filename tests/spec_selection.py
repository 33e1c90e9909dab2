"""Runner for the server selection, max staleness and RTT suites."""
import pytest

from singlemongo.errors import SingleMongoError
from singlemongo.sdam import ServerDescription, ServerType, TopologyDescription, TopologyType
from singlemongo.sdam import average_rtt, parse_address
from singlemongo.selection import Criteria, ReadPreference, SelectionSettings, select

# A modern wire version for servers that do not state one (the suites leave it out).
DEFAULT_MAX_WIRE_VERSION = 21


def server(doc):
    last_write = (doc.get("lastWrite") or {}).get("lastWriteDate")
    rtt = doc.get("avg_rtt_ms")
    last_update = doc.get("lastUpdateTime")
    return ServerDescription(
        parse_address(doc["address"]), ServerType(doc["type"]),
        round_trip_time=rtt / 1000.0 if rtt is not None else None,
        last_write_date=float(last_write) if last_write is not None else None,
        last_update_time=last_update / 1000.0 if last_update is not None else None,
        max_wire_version=doc.get("maxWireVersion", DEFAULT_MAX_WIRE_VERSION),
        tags=dict(doc.get("tags") or {}))


def topology(doc):
    return TopologyDescription.from_servers(TopologyType(doc["type"]),
                                            [server(s) for s in doc["servers"]])


def addresses(docs):
    return sorted(parse_address(d["address"]) for d in docs)


def run_selection(doc):
    td = topology(doc["topology_description"])
    settings = SelectionSettings()
    if "heartbeatFrequencyMS" in doc:
        settings = SelectionSettings(heartbeat_frequency_ms=doc["heartbeatFrequencyMS"])
    deprioritized = [parse_address(d["address"]) for d in doc.get("deprioritized_servers", ())]
    if doc.get("error"):
        with pytest.raises(SingleMongoError):
            criteria = Criteria(doc.get("operation", "read"),
                                ReadPreference.from_document(doc.get("read_preference")))
            select(td, criteria, settings, deprioritized)
        return
    criteria = Criteria(doc.get("operation", "read"),
                        ReadPreference.from_document(doc.get("read_preference")))
    result = select(td, criteria, settings, deprioritized)
    assert sorted(s.address for s in result.suitable) == addresses(doc["suitable_servers"])
    assert sorted(s.address for s in result.in_window) == addresses(doc["in_latency_window"])


def run_rtt(doc):
    previous = None if doc["avg_rtt_ms"] == "NULL" else doc["avg_rtt_ms"]
    assert average_rtt(previous, doc["new_rtt_ms"]) == pytest.approx(doc["new_avg_rtt"])
