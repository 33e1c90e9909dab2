"""Each row of the error-code table and of the SDAM transition table, tested on its own."""
import pytest

from singlemongo.sdam import (ApplicationError, ErrorKind, ServerDescription, ServerType,
                              TopologyDescription, TopologyType, classify_code, classify_reply,
                              handle_application_error)
from singlemongo.sdam.error_handling import STATE_CHANGE_CODES
from singlemongo.sdam.topology_description import TRANSITIONS

A = ("a", 27017)


@pytest.mark.parametrize("code,kind", [
    (10107, ErrorKind.NOT_WRITABLE_PRIMARY), (13435, ErrorKind.NOT_WRITABLE_PRIMARY),
    (10058, ErrorKind.NOT_WRITABLE_PRIMARY), (11600, ErrorKind.NODE_IS_SHUTTING_DOWN),
    (91, ErrorKind.NODE_IS_SHUTTING_DOWN), (11602, ErrorKind.NODE_IS_RECOVERING),
    (13436, ErrorKind.NODE_IS_RECOVERING), (189, ErrorKind.NODE_IS_RECOVERING),
    (1, ErrorKind.OTHER), (11000, ErrorKind.OTHER)])
def test_code_table_row(code, kind):
    assert classify_code(code, "not master") is kind  # the code wins over the message


def test_code_table_has_exactly_the_spec_codes():
    assert set(STATE_CHANGE_CODES) == {10107, 13435, 10058, 11600, 91, 11602, 13436, 189}


@pytest.mark.parametrize("message,kind", [
    ("not master", ErrorKind.NOT_WRITABLE_PRIMARY),
    ("not master and slaveOk=false", ErrorKind.NOT_WRITABLE_PRIMARY),
    ("not master or secondary; cannot read", ErrorKind.NODE_IS_RECOVERING),
    ("node is recovering", ErrorKind.NODE_IS_RECOVERING),
    ("something else", ErrorKind.OTHER)])
def test_message_fallback_without_code(message, kind):
    assert classify_code(None, message) is kind


def test_reply_classification_write_concern_and_write_errors():
    assert classify_reply({"ok": 1, "writeConcernError": {"code": 91, "errmsg": "x"}}) \
        is ErrorKind.NODE_IS_SHUTTING_DOWN
    assert classify_reply({"ok": 1, "writeErrors": [{"code": 10107}]}) is None
    assert classify_reply({"$err": "not master", "ok": 0}) is ErrorKind.NOT_WRITABLE_PRIMARY


def _primary_td():
    td = TopologyDescription.initial([A], replica_set="rs")
    return td.update(ServerDescription.from_hello(
        A, {"ok": 1, "isWritablePrimary": True, "setName": "rs", "hosts": ["a:27017"],
            "maxWireVersion": 21}))


@pytest.mark.parametrize("kind,unknown,clear,stale", [
    (ErrorKind.NOT_WRITABLE_PRIMARY, True, False, True),
    (ErrorKind.NODE_IS_SHUTTING_DOWN, True, True, True),
    (ErrorKind.NODE_IS_RECOVERING, True, False, True),
    (ErrorKind.NETWORK, True, True, True),
    (ErrorKind.NETWORK_TIMEOUT, False, False, False),
    (ErrorKind.OTHER, False, False, False)])
def test_decision_per_error_kind(kind, unknown, clear, stale):
    decision = handle_application_error(
        _primary_td(), ApplicationError(A, kind, 0, max_wire_version=21, message="m"), 0)
    assert (decision.new_description is not None, decision.clear_pool, decision.mark_stale) == \
        (unknown, clear, stale)


def test_overload_label_never_marks_unknown():
    err = ApplicationError(A, ErrorKind.NETWORK, 0, labels=("SystemOverloadedError",
                                                            "RetryableError"))
    assert handle_application_error(_primary_td(), err, 0).ignored


def test_stale_generation_ignored():
    err = ApplicationError(A, ErrorKind.NETWORK, 0)
    assert handle_application_error(_primary_td(), err, 1).ignored


def test_transition_table_is_total():
    for topology_type in (TopologyType.UNKNOWN, TopologyType.SHARDED,
                          TopologyType.REPLICA_SET_NO_PRIMARY,
                          TopologyType.REPLICA_SET_WITH_PRIMARY):
        for server_type in ServerType:
            assert (topology_type, server_type) in TRANSITIONS


HELLOS = {
    ServerType.STANDALONE: {"ok": 1},
    ServerType.MONGOS: {"ok": 1, "msg": "isdbgrid"},
    ServerType.RS_PRIMARY: {"ok": 1, "isWritablePrimary": True, "setName": "rs",
                            "hosts": ["a:27017", "b:27017"]},
    ServerType.RS_SECONDARY: {"ok": 1, "secondary": True, "setName": "rs",
                              "hosts": ["a:27017", "b:27017"], "primary": "b:27017"},
    ServerType.RS_ARBITER: {"ok": 1, "arbiterOnly": True, "setName": "rs",
                            "hosts": ["a:27017", "b:27017"]},
    ServerType.RS_OTHER: {"ok": 1, "hidden": True, "setName": "rs", "hosts": ["a:27017", "b:27017"]},
    ServerType.RS_GHOST: {"ok": 1, "isreplicaset": True},
    ServerType.UNKNOWN: {},
}

# (starting topology, server type) -> (topology type after, is "a" still present)
EXPECTED = {
    ("unknown", ServerType.STANDALONE): (TopologyType.UNKNOWN, False),
    ("unknown", ServerType.MONGOS): (TopologyType.SHARDED, True),
    ("unknown", ServerType.RS_PRIMARY): (TopologyType.REPLICA_SET_WITH_PRIMARY, True),
    ("unknown", ServerType.RS_SECONDARY): (TopologyType.REPLICA_SET_NO_PRIMARY, True),
    ("unknown", ServerType.RS_ARBITER): (TopologyType.REPLICA_SET_NO_PRIMARY, True),
    ("unknown", ServerType.RS_OTHER): (TopologyType.REPLICA_SET_NO_PRIMARY, True),
    ("unknown", ServerType.RS_GHOST): (TopologyType.UNKNOWN, True),
    ("unknown", ServerType.UNKNOWN): (TopologyType.UNKNOWN, True),
    ("sharded", ServerType.STANDALONE): (TopologyType.SHARDED, False),
    ("sharded", ServerType.MONGOS): (TopologyType.SHARDED, True),
    ("sharded", ServerType.RS_PRIMARY): (TopologyType.SHARDED, False),
    ("sharded", ServerType.RS_GHOST): (TopologyType.SHARDED, False),
    ("sharded", ServerType.UNKNOWN): (TopologyType.SHARDED, True),
    ("rs", ServerType.STANDALONE): (TopologyType.REPLICA_SET_NO_PRIMARY, False),
    ("rs", ServerType.MONGOS): (TopologyType.REPLICA_SET_NO_PRIMARY, False),
    ("rs", ServerType.RS_PRIMARY): (TopologyType.REPLICA_SET_WITH_PRIMARY, True),
    ("rs", ServerType.RS_SECONDARY): (TopologyType.REPLICA_SET_NO_PRIMARY, True),
    ("rs", ServerType.RS_GHOST): (TopologyType.REPLICA_SET_NO_PRIMARY, True),
    ("rs", ServerType.UNKNOWN): (TopologyType.REPLICA_SET_NO_PRIMARY, True),
}


def _start(kind):
    if kind == "unknown":
        return TopologyDescription.initial([A, ("b", 27017)])
    if kind == "sharded":
        td = TopologyDescription.initial([A, ("b", 27017)])
        return td.update(ServerDescription.from_hello(("b", 27017), HELLOS[ServerType.MONGOS]))
    return TopologyDescription.initial([A, ("b", 27017)], replica_set="rs")


@pytest.mark.parametrize("start,server_type", sorted(EXPECTED, key=str))
def test_transition_row(start, server_type):
    td = _start(start).update(ServerDescription.from_hello(A, HELLOS[server_type]))
    topology_type, present = EXPECTED[(start, server_type)]
    assert td.topology_type is topology_type
    assert (A in td.servers) is present


def test_secondary_marks_possible_primary():
    td = TopologyDescription.initial([A, ("b", 27017)], replica_set="rs")
    td = td.update(ServerDescription.from_hello(A, HELLOS[ServerType.RS_SECONDARY]))
    assert td.servers[("b", 27017)].server_type is ServerType.POSSIBLE_PRIMARY


def test_single_with_wrong_set_name_is_unknown():
    td = TopologyDescription.initial([A], replica_set="other", direct_connection=True)
    td = td.update(ServerDescription.from_hello(A, HELLOS[ServerType.RS_PRIMARY]))
    assert td.topology_type is TopologyType.SINGLE
    assert td.servers[A].server_type is ServerType.UNKNOWN
    assert "'other'" in td.servers[A].error


def test_a_hello_reply_fills_each_field_of_its_description():
    """from_hello makes the description by position, in the class's field order (issue 59:
    half the instructions of keywords, once per member of a scan): each field must get its
    own reply field, which distinct values here show; a field added or moved breaks this."""
    import datetime

    from bson import ObjectId
    process, election = ObjectId(), ObjectId()
    hello = {"ok": 1, "isWritablePrimary": True, "setName": "rs", "setVersion": 7,
             "minWireVersion": 3, "maxWireVersion": 21, "me": "a:27017", "primary": "a:27017",
             "hosts": ["a:27017", "b:1"], "passives": ["p:2"], "arbiters": ["r:3", "bad host"],
             "tags": {"dc": "east"}, "electionId": election,
             "lastWrite": {"lastWriteDate": datetime.datetime(2026, 1, 1,
                                                             tzinfo=datetime.timezone.utc)},
             "logicalSessionTimeoutMinutes": 30, "iscryptd": False,
             "topologyVersion": {"processId": process, "counter": 4}, "serviceId": "svc"}
    sd = ServerDescription.from_hello(A, hello, 0.25, 99.5)
    expected = {
        "address": A, "server_type": ServerType.RS_PRIMARY, "error": None,
        "round_trip_time": 0.25, "last_write_date": 1767225600000.0, "last_update_time": 99.5,
        "min_wire_version": 3, "max_wire_version": 21, "me": A, "hosts": (A, ("b", 1)),
        "passives": (("p", 2),), "arbiters": (("r", 3),), "tags": {"dc": "east"},
        "set_name": "rs", "election_id": election, "set_version": 7, "primary": A,
        "logical_session_timeout_minutes": 30,
        "topology_version": {"processId": process, "counter": 4}, "iscryptd": False,
        "service_id": "svc", "error_is_network": False, "hello": hello}
    assert set(expected) | {"dropped_hosts"} == set(ServerDescription._record_spec_[0])
    assert {name: getattr(sd, name) for name in expected} == expected
    assert len(sd.dropped_hosts) == 1 and "bad host" in sd.dropped_hosts[0]
    # A hello decoded as PyMongo decodes one holds naive UTC datetimes: the same instant.
    for when in (datetime.datetime(2026, 1, 1), datetime.datetime(1969, 7, 20, 20, 17, 40),
                 datetime.datetime(2026, 12, 7, 3, 20, 20, 123456)):
        naive = ServerDescription.from_hello(A, dict(hello, lastWrite={"lastWriteDate": when}))
        aware = ServerDescription.from_hello(A, dict(hello, lastWrite={
            "lastWriteDate": when.replace(tzinfo=datetime.timezone.utc)}))
        assert naive.last_write_date == aware.last_write_date


class _Int(int):
    pass


class _Str(str):
    pass


@pytest.mark.parametrize("field,value,problem", [
    ("maxWireVersion", "21", "maxWireVersion must be an integer"),
    ("minWireVersion", True, "minWireVersion must be an integer"),
    ("setVersion", 1.5, "setVersion must be an integer"),
    ("logicalSessionTimeoutMinutes", [30], "logicalSessionTimeoutMinutes must be an integer"),
    ("maxBsonObjectSize", 0, "maxBsonObjectSize must be a positive integer"),
    ("maxMessageSizeBytes", -1, "maxMessageSizeBytes must be a positive integer"),
    ("maxWriteBatchSize", False, "maxWriteBatchSize must be a positive integer"),
    ("maxWriteBatchSize", "1000", "maxWriteBatchSize must be a positive integer"),
    ("setName", 5, "setName must be a string"),
    ("me", b"a:1", "me must be a string"),
    ("msg", None, None), ("maxWireVersion", _Int(21), None),
    ("maxBsonObjectSize", _Int(16), None), ("setName", _Str("rs"), None)])
def test_each_typed_hello_field_row(field, value, problem):
    """Each row of the hello's field types: the wrong type (or a size limit of 0 or less)
    makes the server Unknown naming the field; a subclass of the right type is accepted.
    The whole-reply test in C (issue 59) must refuse exactly what the field-by-field rules
    refuse."""
    hello = {"ok": 1, "isWritablePrimary": True, "setName": "rs", "hosts": ["a:27017"],
             "minWireVersion": 0, "maxWireVersion": 21, field: value}
    sd = ServerDescription.from_hello(A, hello, 0.01)
    if problem is None:
        assert sd.server_type is ServerType.RS_PRIMARY, sd.error
    else:
        assert sd.server_type is ServerType.UNKNOWN and problem in sd.error


def _topologies():
    """A description of each TopologyType, with four servers: the one checked (A) and three
    others, none of which a reply below lists."""
    seeds = [A, ("b", 27017), ("c", 27017), ("d", 27017)]
    sharded = TopologyDescription.initial(seeds).update(
        ServerDescription.from_hello(("b", 27017), HELLOS[ServerType.MONGOS]))
    no_primary = TopologyDescription.initial(seeds, replica_set="rs")
    with_primary = no_primary.update(ServerDescription.from_hello(
        ("b", 27017), dict(HELLOS[ServerType.RS_PRIMARY], hosts=[f"{h}:27017" for h in "abcd"])))
    single = TopologyDescription.initial([A], replica_set="rs", direct_connection=True)
    return [TopologyDescription.initial(seeds), sharded, no_primary, with_primary, single]


@pytest.mark.parametrize("server_type", sorted(set(ServerType), key=str))
def test_only_the_types_said_to_remove_others_do(server_type):
    """Rule: Topology.apply tests for removed servers other than the one checked only when
    the description's type is in REMOVES_OTHERS (issue 59: a member of a scan of n does not
    walk n servers). So no other type's row of the table may remove another server: each
    is applied, listing none of the others, in every column."""
    from singlemongo.sdam.topology_description import REMOVES_OTHERS
    hello = dict(HELLOS.get(server_type, {}), hosts=["a:27017"], me="a:27017")
    sd = (ServerDescription.from_hello(A, hello) if server_type in HELLOS
          else ServerDescription(A, server_type))
    removed_others = []
    for td in _topologies():
        new = td.update(sd)
        removed_others.append(bool(set(td.servers) - set(new.servers) - {A}))
    assert any(removed_others) is (server_type in REMOVES_OTHERS)
