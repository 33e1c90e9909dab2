"""Runner for the SDAM suites (outcome and monitoring formats), on the pure core."""
import warnings
from collections import defaultdict

from singlemongo.options.client_options import client_options
from singlemongo.sdam import (ApplicationError, ErrorKind, ServerDescription, ServerType,
                              TopologyDescription, TopologyType, classify_reply, format_address,
                              handle_application_error, parse_address)
from singlemongo.monitoring import sdam_events as m

TOPOLOGY_ID = "42"
_KINDS = {"network": ErrorKind.NETWORK, "timeout": ErrorKind.NETWORK_TIMEOUT}


class SdamHarness:
    """A topology description fed responses and application errors, recording events."""

    def __init__(self, uri):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.options = client_options(uri)
        self.td = TopologyDescription.from_options(self.options)
        self.generations = defaultdict(int)
        self.events = m.opening_events(TOPOLOGY_ID, self.td)
        if self.options.load_balanced:
            for address in self.td.servers:
                self.apply(ServerDescription(address, ServerType.LOAD_BALANCER))

    def apply(self, sd):
        new = self.td.update(sd)
        self.events.extend(m.change_events(TOPOLOGY_ID, self.td, new, sd.address))
        self.td = new

    def respond(self, address, hello):
        self.apply(ServerDescription.from_hello(parse_address(address), hello, 0.0, 0.0,
                                                self.options.load_balanced))

    def application_error(self, err):
        address = parse_address(err["address"])
        response = err.get("response") or {}
        kind = _KINDS.get(err["type"]) or classify_reply(response) or ErrorKind.OTHER
        error = ApplicationError(
            address, kind, err.get("generation", self.generations[address]),
            completed_handshake=err["when"] == "afterHandshakeCompletes",
            max_wire_version=err.get("maxWireVersion", 0),
            message=response.get("errmsg", err["type"]),
            topology_version=response.get("topologyVersion"),
            labels=tuple(response.get("errorLabels", ())))
        decision = handle_application_error(self.td, error, self.generations[address])
        if decision.clear_pool:
            self.generations[address] += 1
        if decision.new_description is not None:
            self.apply(decision.new_description)


def check_outcome(h, outcome):
    td = h.td
    assert td.topology_type is TopologyType(outcome["topologyType"])
    for key, actual in (("setName", td.set_name), ("compatible", td.compatible),
                        ("logicalSessionTimeoutMinutes", td.logical_session_timeout_minutes),
                        ("maxSetVersion", td.max_set_version),
                        ("maxElectionId", td.max_election_id)):
        if key in outcome:
            assert actual == outcome[key], f"{key}: expected {outcome[key]!r}, got {actual!r}"
    expected = {parse_address(a): s for a, s in outcome["servers"].items()}
    assert sorted(td.servers) == sorted(expected), f"servers: {sorted(td.servers)}"
    for address, want in expected.items():
        check_server(h, td.servers[address], want)


_SERVER_FIELDS = {"setName": "set_name", "setVersion": "set_version", "electionId": "election_id",
                  "logicalSessionTimeoutMinutes": "logical_session_timeout_minutes",
                  "minWireVersion": "min_wire_version", "maxWireVersion": "max_wire_version",
                  "topologyVersion": "topology_version"}


def check_server(h, sd, want):
    where = format_address(sd.address)
    assert sd.server_type is ServerType(want["type"]), f"{where}: type {sd.server_type}"
    for key, attr in _SERVER_FIELDS.items():
        if key in want:
            assert getattr(sd, attr) == want[key], f"{where}: {key} {getattr(sd, attr)!r}"
    if "error" in want:
        assert want["error"] in (sd.error or ""), f"{where}: error {sd.error!r}"
    if "pool" in want:
        assert h.generations[sd.address] == want["pool"]["generation"], f"{where}: generation"


def server_doc(sd):
    doc = {"address": format_address(sd.address), "type": sd.server_type.value,
           "arbiters": [format_address(a) for a in sd.arbiters],
           "hosts": [format_address(a) for a in sd.hosts],
           "passives": [format_address(a) for a in sd.passives]}
    if sd.primary is not None:
        doc["primary"] = format_address(sd.primary)
    if sd.set_name is not None:
        doc["setName"] = sd.set_name
    return doc


def topology_doc(td):
    doc = {"topologyType": td.topology_type.value,
           "servers": [server_doc(s) for s in td.servers.values()]}
    if td.set_name is not None:
        doc["setName"] = td.set_name
    return doc


_EVENT_NAMES = {
    m.TopologyOpeningEvent: "topology_opening_event",
    m.TopologyClosedEvent: "topology_closed_event",
    m.TopologyDescriptionChangedEvent: "topology_description_changed_event",
    m.ServerOpeningEvent: "server_opening_event",
    m.ServerClosedEvent: "server_closed_event",
    m.ServerDescriptionChangedEvent: "server_description_changed_event",
}


def event_doc(event):
    doc = {"topologyId": TOPOLOGY_ID}
    if hasattr(event, "address"):
        doc["address"] = format_address(event.address)
    if isinstance(event, m.TopologyDescriptionChangedEvent):
        doc["previousDescription"] = topology_doc(event.previous_description)
        doc["newDescription"] = topology_doc(event.new_description)
    elif isinstance(event, m.ServerDescriptionChangedEvent):
        doc["previousDescription"] = server_doc(event.previous_description)
        doc["newDescription"] = server_doc(event.new_description)
    return {_EVENT_NAMES[type(event)]: doc}


def matches(expected, actual):
    """``expected`` is contained in ``actual``; lists of servers compare by address."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and matches(v, actual[k]) for k, v in expected.items())
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(expected) != len(actual):
            return False
        key = (lambda d: d.get("address", "")) if expected and isinstance(expected[0], dict) else None
        if key is None:
            return sorted(expected) == sorted(actual)
        return all(matches(e, a) for e, a in zip(sorted(expected, key=key), sorted(actual, key=key)))
    return expected == actual


def run_file(doc):
    h = SdamHarness(doc["uri"])
    for i, phase in enumerate(doc["phases"]):
        for address, hello in phase.get("responses", ()):
            h.respond(address, hello)
        for err in phase.get("applicationErrors", ()):
            h.application_error(err)
        outcome = phase["outcome"]
        if "events" in outcome:
            got = [event_doc(e) for e in h.events]
            assert len(got) == len(outcome["events"]) and all(
                matches(e, a) for e, a in zip(outcome["events"], got)), (
                f"phase {i}: events differ:\nexpected {outcome['events']}\ngot {got}")
            h.events = []
        else:
            check_outcome(h, outcome)
