"""Explicit sessions and causal consistency (driver sessions and causal consistency specs),
through MongoClient against the simulated replica set, with PyMongo's names."""
import pytest
from bson.timestamp import Timestamp

from singlemongo import MongoClient
from singlemongo.errors import OperationFailure, ConfigurationError, InvalidOperation
from singlemongo.clock import FakeClock

from .conftest import Commands


@pytest.fixture
def rs(mongo_replica_set):
    return mongo_replica_set


def client_for(rs, **options):
    commands = Commands()
    client = MongoClient(rs.uri, clock=FakeClock(), event_listeners=[commands], **options)
    return client, commands


def test_every_command_of_a_session_carries_its_lsid(rs):
    """Driver sessions spec: an explicit session's lsid on each command run with it, the
    same lsid across operations, another for operations without it."""
    client, commands = client_for(rs)
    with client.start_session() as session:
        coll = client.app.c
        coll.insert_one({"_id": 1}, session=session)
        coll.find_one({"_id": 1}, session=session)
        coll.update_one({"_id": 1}, {"$set": {"x": 1}}, session=session)
        coll.count_documents({}, session=session)
        list(coll.aggregate([{"$match": {}}], session=session))
        coll.find_one_and_update({"_id": 1}, {"$inc": {"x": 1}}, session=session)
        coll.delete_one({"_id": 2}, session=session)
        client.app.command("ping", session=session)
        coll.find_one({"_id": 1})
        lsid = session.session_id
    ops = [c for c in commands.started if next(iter(c)) not in ("hello", "ismaster")]
    assert all(c["lsid"] == lsid for c in ops[:-1]) and len(ops) == 9
    assert ops[-1]["lsid"] != lsid
    client.close()


def test_causal_consistency_reads_after_the_sessions_operation_time(rs):
    """Causal consistency spec: the first operation has no afterClusterTime; every later
    read and (since the 2026-05 revision) write carries the operationTime of the session's
    last operation."""
    client, commands = client_for(rs)
    coll = client.app.c
    with client.start_session() as session:
        assert session.operation_time is None
        coll.find_one({}, session=session)
        first = commands.started[-1]
        assert "readConcern" not in first
        read_time = session.operation_time
        coll.insert_one({"a": 1}, session=session)
        op_time = session.operation_time
        assert isinstance(op_time, Timestamp)
        assert commands.started[-1]["readConcern"] == {"afterClusterTime": read_time}
        coll.find_one({}, session=session)
        assert commands.started[-1]["readConcern"] == {"afterClusterTime": op_time}
        coll.distinct("a", session=session)
        assert "afterClusterTime" in commands.started[-1]["readConcern"]
    with client.start_session(causal_consistency=False) as plain:
        coll.insert_one({"a": 2}, session=plain)
        coll.find_one({}, session=plain)
        assert "readConcern" not in commands.started[-1]
    client.close()


def test_cursor_of_a_session_keeps_its_lsid_and_does_not_free_it(rs):
    """A cursor's getMore runs in the session of its find; exhausting it does not return the
    server session to the pool while the ClientSession holds it."""
    client, commands = client_for(rs)
    coll = client.app.c
    coll.insert_many([{"i": i} for i in range(5)])
    with client.start_session() as session:
        docs = list(coll.find({}, session=session, batch_size=2))
        assert len(docs) == 5
        getmores = [c for c in commands.started if "getMore" in c]
        assert getmores and all(c["lsid"] == session.session_id for c in getmores)
        coll.find_one({}, session=session)
        assert commands.started[-1]["lsid"] == session.session_id
        assert session.session_id not in [s.lsid for s in client._topology.sessions._pool]
    assert session.has_ended
    client.close()


def test_ended_foreign_and_unacknowledged_uses_are_refused(rs):
    """Sessions spec: an ended session, a session of another client and an explicit session
    with an unacknowledged write raise InvalidOperation, before anything is sent."""
    client, _ = client_for(rs)
    other, _ = client_for(rs)
    session = client.start_session()
    with pytest.raises(InvalidOperation, match="MongoClient that started it"):
        other.app.c.find_one({}, session=session)
    with pytest.raises(InvalidOperation, match="unacknowledged"):
        client.app.get_collection("c").with_options(
            write_concern=__import__("singlemongo").WriteConcern(w=0)).insert_one(
            {"a": 1}, session=session)
    session.end_session()
    session.end_session()  # idempotent
    with pytest.raises(InvalidOperation, match="ended session"):
        client.app.c.find_one({}, session=session)
    with pytest.raises(ConfigurationError):
        client.start_session(causal_consistency=True, snapshot=True)
    client.close()
    other.close()


def test_snapshot_session_reads_one_point_in_time(rs):
    """Sessions spec, "Snapshot reads": the first read sends readConcern level snapshot and
    the server's atClusterTime is sent with every later read, which sees the data as it was
    then; a write in a snapshot session is the server's error; no transactions in one."""
    client, commands = client_for(rs)
    coll = client.app.c
    coll.insert_one({"_id": 1, "x": 1})
    with client.start_session(snapshot=True) as snapshot:
        assert coll.find_one({"_id": 1}, session=snapshot)["x"] == 1
        first = commands.started[-1]["readConcern"]
        assert first == {"level": "snapshot"}
        coll.update_one({"_id": 1}, {"$set": {"x": 2}})
        assert coll.find_one({"_id": 1}, session=snapshot)["x"] == 1
        again = commands.started[-1]["readConcern"]
        assert again["level"] == "snapshot" and isinstance(again["atClusterTime"], Timestamp)
        assert coll.distinct("x", session=snapshot) == [1]
        assert coll.find_one({"_id": 1})["x"] == 2
        with pytest.raises(OperationFailure):
            coll.insert_one({"_id": 2}, session=snapshot)
        with pytest.raises(InvalidOperation, match="snapshot sessions"):
            snapshot.start_transaction()
    client.close()


def test_advance_times_only_forward_and_check_types(rs):
    """advance_cluster_time and advance_operation_time never go back; wrong types raise."""
    client, _ = client_for(rs)
    session = client.start_session()
    session.advance_operation_time(Timestamp(10, 1))
    session.advance_operation_time(Timestamp(5, 1))
    assert session.operation_time == Timestamp(10, 1)
    session.advance_cluster_time({"clusterTime": Timestamp(7, 0)})
    session.advance_cluster_time({"clusterTime": Timestamp(3, 0)})
    assert session.cluster_time == {"clusterTime": Timestamp(7, 0)}
    with pytest.raises(TypeError):
        session.advance_operation_time(10)
    with pytest.raises(TypeError):  # PyMongo 4.20's class for it (its test_session)
        session.advance_cluster_time({"clusterTime": 1})
    session.end_session()
    client.close()


def test_session_returns_to_the_pool_and_is_reused(rs):
    """end_session gives the server session back: the next session reuses it (LIFO pool)."""
    client, _ = client_for(rs)
    with client.start_session() as first:
        client.app.c.find_one({}, session=first)
        lsid = first.session_id
    with client.start_session() as second:
        client.app.c.find_one({}, session=second)
        assert second.session_id == lsid
    client.close()


def test_every_helper_sends_the_sessions_lsid(rs):
    """Every operation takes session=: the catalog, index, rename and drop helpers too run
    in the session (its lsid on each of their commands)."""
    client, commands = client_for(rs)
    db = client.app
    with client.start_session() as session:
        coll = db.create_collection("h", session=session)
        coll.create_index("a", session=session)
        coll.index_information(session=session)
        db.list_collection_names(session=session)
        coll.drop_index("a_1", session=session)
        coll.rename("h2", session=session)
        db.drop_collection("h2", session=session)
        client.list_database_names(session=session)
        lsid = session.session_id
    names = ["listCollections", "create", "createIndexes", "listIndexes", "listCollections",
             "dropIndexes", "renameCollection", "drop", "listDatabases"]
    sent = [c for c in commands.started if next(iter(c)) in names]
    assert [next(iter(c)) for c in sent] == names  # create_collection checks it exists first
    assert all(c["lsid"] == lsid for c in sent)
    client.close()


@pytest.mark.parametrize("call", [
    lambda coll, bad: coll.aggregate([], bad),
    lambda coll, bad: coll.insert_one({}, session=bad),
    lambda coll, bad: coll.find_one({}, session=bad),
    lambda coll, bad: coll.count_documents({}, session=bad),
])
def test_a_session_that_is_not_a_client_session_is_refused_clearly(rs, call):
    """Rule (bad input gets a clear error naming the value): a session argument that is not
    a ClientSession is ValueError in PyMongo's words, and nothing is sent; before, a dict
    passed as aggregate's session (PyMongo's test_invalid_session_parameter) raised
    AttributeError '_for_operation' from inside the engine."""
    commands = Commands()
    client = MongoClient(rs.uri, event_listeners=[commands])
    with pytest.raises(ValueError, match="'session' argument must be a ClientSession or None, "
                                         "not <class 'dict'>"):
        call(client.app.c, {})
    assert commands.started == []
    client.close()
