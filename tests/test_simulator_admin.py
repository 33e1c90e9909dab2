"""The simulated server's administration does what MongoDB 7.0 does (issue 21), checked with
PyMongo as the client so that a difference is the simulator's: the profiler and
``system.profile``, users created by command logging in with SCRAM, the name members announce,
a hidden member serving reads sent to it, dates outside Python's range, ``explain`` and the
awaitable hello of 4.4+ servers."""
import datetime
import socket
import threading
import time

import pymongo
import pytest
from bson import DatetimeMS
from bson.codec_options import DatetimeConversion
from pymongo.errors import OperationFailure

import singlemongo
from singlemongo.testing import ReplicaSet
from singlemongo.wire import messages as wire





def test_profile_level_two_records_each_operation(client):
    """The profile command and system.profile (mongoengine's query_counter counts entries
    there): before, 'no such command: profile'. Level 2 records every operation with its
    op, ns and command; update statements one by one; reads of system.profile count too."""
    db = client.shop
    assert db.command("profile", 0)["was"] == 0
    db.system.profile.drop()
    assert db.command("profile", 2)["was"] == 0
    db.items.insert_one({"_id": 1})
    db.items.find_one({"_id": 1})
    db.items.update_one({"_id": 1}, {"$set": {"n": 1}})
    db.items.delete_one({"_id": 1})
    entries = list(db.system.profile.find({}, {"op": 1, "ns": 1, "command": 1}))
    assert [e["op"] for e in entries] == ["insert", "query", "update", "remove"]
    assert {e["ns"] for e in entries} == {"shop.items"}
    assert entries[2]["command"]["u"] == {"$set": {"n": 1}}
    assert db.system.profile.count_documents({}) == 5  # the find just above is one more
    assert db.command("profile", -1)["was"] == 2  # -1 reads the level, changes nothing
    assert db.command("profile", 0)["was"] == 2
    db.items.find_one()
    assert db.system.profile.count_documents({}) == 6  # the count above; nothing since
    assert "system.profile" in db.list_collection_names()


def test_profile_level_one_keeps_only_slow_operations(client):
    """Level 1 records what takes longer than slowms; a bad level is BadValue."""
    db = client.shop
    db.command("profile", 1, slowms=10_000)
    db.items.insert_one({"_id": 1})
    assert db.command("profile", 0)["slowms"] == 10_000
    assert db.system.profile.count_documents({}) == 0
    with pytest.raises(OperationFailure) as caught:
        db.command("profile", 3)
    assert caught.value.code == 2 and "3" in str(caught.value)


def test_created_user_logs_in_and_a_deleted_one_does_not(rs, client):
    """createUser/usersInfo/dropUser feed the SCRAM users (before, 'no such command:
    createUser'); the users live in admin.system.users, where a test may delete them."""
    client.shop.command("createUser", "bob", pwd="secret", roles=["readWrite"])
    info = client.shop.command("usersInfo", "bob")["users"]
    assert [(u["user"], u["db"], u["roles"]) for u in info] == [
        ("bob", "shop", [{"role": "readWrite", "db": "shop"}])]
    assert sorted(info[0]["mechanisms"]) == ["SCRAM-SHA-1", "SCRAM-SHA-256"]
    assert "credentials" not in info[0]
    for driver in (pymongo, singlemongo):
        bob = driver.MongoClient(rs.uri, username="bob", password="secret", authSource="shop")
        assert bob.shop.items.find_one() is None
        bob.close()
    wrong = singlemongo.MongoClient(rs.uri, username="bob", password="nope", authSource="shop")
    with pytest.raises(singlemongo.errors.OperationFailure) as caught:
        wrong.shop.items.find_one()
    assert "bob" in str(caught.value) and "nope" not in str(caught.value)
    client.admin.system.users.delete_many({})
    gone = singlemongo.MongoClient(rs.uri, username="bob", password="secret", authSource="shop")
    with pytest.raises(singlemongo.errors.OperationFailure):
        gone.shop.items.find_one()


def test_user_management_errors_are_the_servers(client):
    """Duplicate user 51003, unknown user 11, a missing password BadValue; updateUser
    changes the password; dropAllUsersFromDatabase counts what it removed."""
    db = client.shop
    db.command("createUser", "ann", pwd="a", roles=[])
    for command, code in ((lambda: db.command("createUser", "ann", pwd="a", roles=[]), 51003),
                          (lambda: db.command("dropUser", "nobody"), 11),
                          (lambda: db.command("updateUser", "nobody", pwd="x"), 11),
                          (lambda: db.command("createUser", "x", roles=[]), 2)):
        with pytest.raises(OperationFailure) as caught:
            command()
        assert caught.value.code == code
    db.command("updateUser", "ann", pwd="b", customData={"team": 1})
    assert db.command("usersInfo", 1)["users"][0]["customData"] == {"team": 1}
    assert db.command("dropAllUsersFromDatabase")["n"] == 1
    assert db.command("usersInfo", 1)["users"] == []


def test_members_announce_the_name_they_are_given():
    """A replica set configured by name (mongoengine's suite checks client.address is
    'localhost'): host="localhost" makes the members announce it."""
    with ReplicaSet(1, host="localhost") as named:
        assert named.uri.startswith("mongodb://localhost:")
        client = pymongo.MongoClient(named.uri, serverSelectionTimeoutMS=5000)
        client.admin.command("ping")
        assert client.address[0] == "localhost"
        client.close()


def test_a_date_outside_pythons_range_is_stored_compared_and_sorted(rs, client):
    """An out-of-range datetime is a BSON value (before, the simulated server could not read
    the request and dropped the connection): stored, matched by range, sorted among dates."""
    auto = pymongo.MongoClient(rs.uri, datetime_conversion=DatetimeConversion.DATETIME_AUTO)
    coll = auto.shop.dates
    coll.insert_many([{"_id": 1, "d": DatetimeMS(2 ** 62)}, {"_id": 2, "d": DatetimeMS(-2 ** 62)},
                      {"_id": 3, "d": datetime.datetime(2020, 1, 1)}])
    assert [d["_id"] for d in coll.find().sort("d", 1)] == [2, 3, 1]
    assert [d["_id"] for d in coll.find({"d": {"$gt": datetime.datetime(2021, 1, 1)}})] == [1]
    assert [d["_id"] for d in coll.find({"d": {"$type": "date"}})] == [1, 2, 3]
    auto.close()


@pytest.mark.parametrize("driver", [pymongo, singlemongo])
def test_a_hidden_member_serves_a_read_sent_to_it_directly(driver):
    """A hidden member is a secondary nobody discovers: a read sent to it directly is
    served (before, NotPrimaryNoSecondaryOk). Drivers send primaryPreferred on a direct
    connection to a non-mongos ("Topology type: Single"), so either preference reads."""
    with ReplicaSet(1, hidden=1) as deployment:
        hidden = deployment.servers[-1]
        deployment.store.seed("shop", "items", [{"_id": 1}])
        uri = f"mongodb://{hidden.address_text}/?directConnection=true"
        for preference in ("secondaryPreferred", "primary"):
            client = driver.MongoClient(uri, readPreference=preference)
            assert client.shop.items.find_one() == {"_id": 1}
            client.close()
        assert hidden.commands["find"] == 2


def _hello(sock, request_id, cmd, flags=0):
    """Send one OP_MSG hello on a raw socket; the first reply (flags, document)."""
    sock.sendall(wire.encode_op_msg(request_id, cmd, flags=flags))
    return _read_reply(sock)


def _read_reply(sock):
    header = b""
    while len(header) < 16:
        header += sock.recv(16 - len(header))
    length = wire.HEADER.unpack(header)[0]
    body = b""
    while len(body) < length - 16:
        body += sock.recv(length - 16 - len(body))
    return wire.decode_op_msg(body)[:2]


def test_awaitable_hello_waits_for_a_change_or_its_time():
    """Awaitable hello ("Streaming Protocol"): a hello with the current topologyVersion and
    maxAwaitTimeMS is answered when that time is up, or at once when the topology changes
    (an election); a stale version is answered at once. Before, every hello was answered at
    once, so PyMongo's streaming monitors asked about a thousand times a second."""
    with ReplicaSet(2) as deployment:
        member = deployment.servers[1]
        with socket.create_connection(member.address, timeout=10) as sock:
            _, first = _hello(sock, 1, {"hello": 1, "$db": "admin"})
            version = first["topologyVersion"]
            started = time.monotonic()
            _, same = _hello(sock, 2, {"hello": 1, "$db": "admin", "topologyVersion": version,
                                       "maxAwaitTimeMS": 300})
            assert 0.25 <= time.monotonic() - started < 5
            assert same["topologyVersion"] == version
            started = time.monotonic()
            _, stale = _hello(sock, 3, {"hello": 1, "$db": "admin", "maxAwaitTimeMS": 5000,
                                        "topologyVersion": dict(version, counter=-1)})
            assert time.monotonic() - started < 0.25
            threading.Timer(0.2, deployment.elect, (1,)).start()
            started = time.monotonic()
            _, changed = _hello(sock, 4, {"hello": 1, "$db": "admin", "topologyVersion": version,
                                          "maxAwaitTimeMS": 10_000})
            assert 0.15 <= time.monotonic() - started < 5
            assert changed["isWritablePrimary"] is True
            assert changed["topologyVersion"]["counter"] > version["counter"]


def test_exhaust_hello_streams_one_reply_per_change():
    """With exhaustAllowed the server goes on answering (moreToCome), one reply per change
    or per maxAwaitTimeMS, without further requests, as a 4.4+ server streams to PyMongo's
    monitors."""
    with ReplicaSet(2) as deployment:
        member = deployment.servers[0]
        with socket.create_connection(member.address, timeout=10) as sock:
            _, first = _hello(sock, 1, {"hello": 1, "$db": "admin"})
            flags, reply = _hello(sock, 2, {
                "hello": 1, "$db": "admin", "topologyVersion": first["topologyVersion"],
                "maxAwaitTimeMS": 200}, flags=wire.EXHAUST_ALLOWED)
            assert flags & wire.MORE_TO_COME
            deployment.step_down()
            flags, streamed = _read_reply(sock)
            assert flags & wire.MORE_TO_COME and streamed["isWritablePrimary"] is False
            assert member.streamed >= 1  # sent unasked


def test_pymongo_monitors_wait_as_in_production():
    """PyMongo's streaming monitors against the simulator: a handful of hellos per member in
    a second, not one per millisecond, and an election still seen at once."""
    with ReplicaSet(3) as deployment:
        client = pymongo.MongoClient(deployment.uri)
        client.admin.command("ping")
        time.sleep(1.0)
        assert max(s.commands["hello"] for s in deployment.servers) < 20
        deployment.elect(2)
        deadline = time.monotonic() + 5
        while client.primary != deployment.servers[2].address and time.monotonic() < deadline:
            time.sleep(0.02)
        assert client.primary == deployment.servers[2].address
        client.close()


def test_explain_names_the_plan_and_counts_what_it_examined(client):
    """explain (the README listed it; the server answered 'no such command'): the winning
    plan uses the index the filter constrains, IDHACK for _id equality, COLLSCAN and SORT
    otherwise; executionStats count returned and examined documents; a write is planned,
    never run."""
    coll = client.shop.items
    coll.insert_many([{"_id": i, "x": i, "y": i % 3} for i in range(10)])
    coll.create_index("x")
    found = coll.find({"x": {"$gt": 3}, "y": 1}).explain()
    assert found["queryPlanner"]["winningPlan"]["inputStage"]["indexName"] == "x_1"
    assert found["executionStats"]["nReturned"] == 2
    scan = coll.find({"y": 1}).sort("y", -1).limit(2).explain()["queryPlanner"]["winningPlan"]
    assert (scan["stage"], scan["inputStage"]["stage"],
            scan["inputStage"]["inputStage"]["stage"]) == ("LIMIT", "SORT", "COLLSCAN")
    assert coll.find({"_id": 3}).explain()["queryPlanner"]["winningPlan"]["stage"] == "IDHACK"
    assert client.shop.command("aggregate", "items", pipeline=[{"$match": {"x": 1}}],
                               explain=True)["queryPlanner"]["winningPlan"]["stage"] == "FETCH"
    planned = client.shop.command("explain", {"delete": "items", "deletes": [
        {"q": {"x": 1}, "limit": 1}]})
    assert planned["queryPlanner"]["winningPlan"]["stage"] == "DELETE"
    assert coll.count_documents({}) == 10
    with pytest.raises(OperationFailure) as caught:
        client.shop.command("explain", {"find": "items"}, verbosity="loud")
    assert caught.value.code == 2 and "loud" in str(caught.value)


def test_a_dropped_collection_loses_its_validator():
    """MongoDB (the "drop" command: it removes the collection and its options): a collection
    created again after a drop has no validator. Issue 48: the simulator kept the validator
    with the name, and 14 of PyMongo's own tests then failed with "Document failed
    validation"; checked with PyMongo as the client."""
    with ReplicaSet(3) as rs:
        client = pymongo.MongoClient(rs.uri, serverMonitoringMode="poll")
        db = client.validated
        db.create_collection("t", validator={"a": {"$type": "int"}})
        with pytest.raises(OperationFailure) as refused:
            db.t.insert_one({"a": "text"})
        assert refused.value.code == 121
        db.drop_collection("t")
        db.t.insert_one({"a": "text"})  # a new collection: no validator
        assert db.t.find_one({}, {"_id": 0}) == {"a": "text"}
        assert db.command("listCollections", filter={"name": "t"})["cursor"]["firstBatch"][0][
            "options"] == {}
        client.close()
