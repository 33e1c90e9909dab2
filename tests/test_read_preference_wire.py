"""Read preference on the wire, per topology and server type (server selection spec)."""
import pytest

from singlemongo.sdam import ServerType as S, TopologyType as T
from singlemongo.selection import ReadPreference
from singlemongo.selection import op_query_read_preference, read_preference_for_op_msg

P = ReadPreference()
SEC = ReadPreference("secondary")
SP = ReadPreference("secondaryPreferred")
SP_TAGS = ReadPreference("secondaryPreferred", ({"dc": "ny"},))


@pytest.mark.parametrize("topology,server,rp,expected", [
    (T.SINGLE, S.STANDALONE, SEC, None),
    (T.SINGLE, S.RS_SECONDARY, P, {"mode": "primaryPreferred"}),
    (T.SINGLE, S.RS_SECONDARY, SEC, {"mode": "secondary"}),
    (T.SINGLE, S.MONGOS, P, None),
    (T.SINGLE, S.MONGOS, SEC, {"mode": "secondary"}),
    (T.SHARDED, S.MONGOS, P, None),
    (T.SHARDED, S.MONGOS, SP, {"mode": "secondaryPreferred"}),
    (T.LOAD_BALANCED, S.LOAD_BALANCER, SEC, {"mode": "secondary"}),
    (T.REPLICA_SET_WITH_PRIMARY, S.RS_PRIMARY, P, None),
    (T.REPLICA_SET_WITH_PRIMARY, S.RS_SECONDARY, SEC, {"mode": "secondary"}),
])
def test_op_msg(topology, server, rp, expected):
    assert read_preference_for_op_msg(topology, server, rp) == expected


def test_writes_never_carry_read_preference():
    assert read_preference_for_op_msg(T.SHARDED, S.MONGOS, SEC, is_read=False) is None


@pytest.mark.parametrize("rp,expected", [
    (P, (False, None)), (SP, (True, None)),
    (SP_TAGS, (True, {"mode": "secondaryPreferred", "tags": [{"dc": "ny"}]})),
    (SEC, (True, {"mode": "secondary"}))])
def test_op_query_to_mongos(rp, expected):
    assert op_query_read_preference(T.SHARDED, S.MONGOS, rp) == expected


def test_op_query_direct_to_member_sets_secondary_ok():
    assert op_query_read_preference(T.SINGLE, S.RS_SECONDARY, P) == (True, None)
