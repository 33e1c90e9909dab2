"""Client bulk write (``MongoClient.bulk_write``, bulk write spec) against the simulated
MongoDB 8.0 deployment, with PyMongo as the oracle where both can run the same call.

Rules guarded here, each test naming its own: batches split by maxWriteBatchSize and by
maxMessageSizeBytes less the 1,000-byte overhead, each batch's nsInfo holding only its own
namespaces; ordered stops at the first write error, unordered runs every batch; write
concern errors are collected and raised at the end; a top-level error stops the bulk write
and is carried, with what succeeded, in ClientBulkWriteException; the results cursor is read
to its end with getMores; what the client refuses is refused before anything is sent; a
reply is used only when its fields are what a bulkWrite reply has."""
import pymongo
import pytest
from bson import ObjectId

import singlemongo
from singlemongo import DeleteMany, InsertOne, MongoClient, ReplaceOne, UpdateOne, errors
from singlemongo.testing import deployments
from singlemongo.testing.query import store as simulated_store

from .util import raw_answer

SESSION_FIELDS = ("lsid", "txnNumber", "$clusterTime", "$db")


@pytest.fixture
def rs(mongo_replica_set):
    return mongo_replica_set


def _models(module):
    """The same mixed models, made by ``module`` (PyMongo's or singlemongo's)."""
    return [module.InsertOne({"_id": 10, "x": 1}, namespace="db.a"),
            module.InsertOne({"_id": 11}, namespace="db.b"),
            module.UpdateOne({"_id": 10}, {"$inc": {"x": 1}}, namespace="db.a"),
            module.UpdateMany({}, {"$set": {"y": 1}}, namespace="db.b"),
            module.ReplaceOne({"_id": 12}, {"z": 1}, upsert=True, namespace="db.a"),
            module.UpdateOne({"_id": 13}, {"$set": {"w": 1}}, upsert=True, sort={"_id": 1},
                             namespace="db.b"),
            module.DeleteOne({"_id": 12}, namespace="db.a"),
            module.DeleteMany({"y": 1}, namespace="db.b")]


def _plain(value):
    """A result's maps with their per-model results as comparable tuples."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if type(value).__name__ in ("InsertOneResult",):
        return ("insert", value.inserted_id)
    if type(value).__name__ in ("UpdateResult", "_ClientUpdateResult"):
        return ("update", value.matched_count, value.modified_count, value.upserted_id)
    if type(value).__name__ == "DeleteResult":
        return ("delete", value.deleted_count)
    return value


def _sent(deployment, name="bulkWrite"):
    """The commands named ``name`` the primary received, without session fields."""
    return [{k: v for k, v in cmd.items() if k not in SESSION_FIELDS}
            for cmd in deployment.servers[0].command_log if next(iter(cmd)) == name]


def _run_both(rs, call):
    """``call(client, module)`` with PyMongo, then with singlemongo, on the same data: their
    outcomes (result or error), the commands each sent, and the data each left."""
    outcomes = []
    for module, make in ((pymongo, pymongo.MongoClient), (singlemongo, MongoClient)):
        rs.store.reset()
        rs.servers[0].command_log.clear()
        rs.store.seed("db", "a", [{"_id": 1, "x": 0}])
        client = make(rs.uri)
        try:
            try:
                outcome = ("result", _plain(call(client, module).bulk_api_result))
            except Exception as exc:  # compared below, whichever the driver
                outcome = (type(exc).__name__, _plain(dict(getattr(exc, "details", {}) or {})))
        finally:
            client.close()
        if outcome[0] == "ClientBulkWriteException":
            outcome[1].pop("error", None)  # each driver's own exception object
        outcomes.append((outcome, _sent(rs), rs.store.documents("db", "a"),
                         rs.store.documents("db", "b")))
    return outcomes


def test_mixed_models_give_pymongos_result_commands_and_data(rs):
    """PyMongo as the oracle: one mixed bulk write across two namespaces, verbose, gives the
    same counts and per-model results, sends the same bulkWrite commands (ops and nsInfo
    document sequences included) and leaves the same documents."""
    theirs, ours = _run_both(rs, lambda c, m: c.bulk_write(_models(m), verbose_results=True))
    assert ours == theirs
    assert ours[0][0] == "result" and ours[0][1]["nInserted"] == 2


@pytest.mark.parametrize("ordered", [True, False])
def test_write_errors_and_partial_results_are_pymongos(rs, ordered):
    """PyMongo as the oracle: a duplicate key error in the middle; ordered stops there,
    unordered runs the rest. Same error details (each error with the index of its model and
    the op sent), same commands, same data."""
    def call(client, module):
        return client.bulk_write([module.InsertOne({"_id": 2}, namespace="db.a"),
                                  module.InsertOne({"_id": 1}, namespace="db.a"),
                                  module.InsertOne({"_id": 3}, namespace="db.a")],
                                 ordered=ordered)
    theirs, ours = _run_both(rs, call)
    assert ours == theirs
    kind, details = ours[0]
    assert kind == "ClientBulkWriteException"
    assert [e["idx"] for e in details["writeErrors"]] == [1]
    assert details["nInserted"] == (1 if ordered else 2)


def test_batches_split_by_count_and_each_holds_only_its_namespaces(rs):
    """"Command Batching": at most maxWriteBatchSize ops a command; a batch's nsInfo lists
    only the namespaces its ops use, and each op's index points into that batch's list."""
    rs.servers[0].limits = {"maxWriteBatchSize": 2}
    try:
        client = MongoClient(rs.uri)
        result = client.bulk_write([InsertOne({"_id": 1}, namespace="db.a"),
                                    InsertOne({"_id": 1}, namespace="db.b"),
                                    InsertOne({"_id": 2}, namespace="db.b"),
                                    InsertOne({"_id": 2}, namespace="db.a"),
                                    InsertOne({"_id": 3}, namespace="db.c")])
    finally:
        rs.servers[0].limits = {}
    sent = _sent(rs)
    assert [len(cmd["ops"]) for cmd in sent] == [2, 2, 1]
    assert [[ns["ns"] for ns in cmd["nsInfo"]] for cmd in sent] == [
        ["db.a", "db.b"], ["db.b", "db.a"], ["db.c"]]
    assert [[op["insert"] for op in cmd["ops"]] for cmd in sent] == [[0, 1], [0, 1], [0]]
    assert result.inserted_count == 5
    assert [d["_id"] for d in rs.store.documents("db", "a")] == [1, 2]


def test_batches_split_by_message_size(rs):
    """"Total Message Size": the ops and nsInfo sequences of a command stay within
    maxMessageSizeBytes less 1,000 bytes and the command; no op is dropped or sent twice."""
    rs.servers[0].limits = {"maxMessageSizeBytes": 5000}
    try:
        client = MongoClient(rs.uri)
        models = [InsertOne({"_id": i, "s": "x" * 1000}, namespace="db.a") for i in range(10)]
        assert client.bulk_write(models).inserted_count == 10
    finally:
        rs.servers[0].limits = {}
    sizes = [len(cmd["ops"]) for cmd in _sent(rs)]
    assert sum(sizes) == 10 and len(sizes) > 2 and max(sizes) <= 3
    assert len(rs.store.documents("db", "a")) == 10


def test_an_op_that_fits_no_command_is_refused_before_anything_is_sent(rs):
    """"Drivers MUST return an error if there is not room to add at least one operation":
    DocumentTooLarge (as PyMongo's), raised as it is, nothing sent."""
    rs.servers[0].limits = {"maxMessageSizeBytes": 2000}
    try:
        client = MongoClient(rs.uri)
        with pytest.raises(errors.DocumentTooLarge):
            client.bulk_write([InsertOne({"s": "x" * 3000}, namespace="db.a")])
    finally:
        rs.servers[0].limits = {}
    assert _sent(rs) == []


def test_a_model_without_namespace_is_refused(rs):
    """Every model names its namespace; InvalidOperation (PyMongo's message), nothing sent.
    A namespace that is not "database.collection" is refused with its value."""
    client = MongoClient(rs.uri)
    with pytest.raises(errors.InvalidOperation, match="namespace"):
        client.bulk_write([InsertOne({"_id": 1})])
    with pytest.raises(errors.InvalidOperation, match="'nodot'"):
        InsertOne({"_id": 1}, namespace="nodot")
    with pytest.raises(errors.InvalidOperation, match="No operations"):
        client.bulk_write([])
    assert _sent(rs) == []


def test_unacknowledged_must_be_unordered_and_not_verbose(rs):
    """"ordered" and "errorsOnly and verboseResults": a w: 0 bulk write that is ordered or
    verbose is refused with the spec's message; an unordered one is sent with w: 0 and its
    result is unacknowledged."""
    client = MongoClient(rs.uri, w=0)
    models = [InsertOne({"_id": 1}, namespace="db.a")]
    with pytest.raises(errors.InvalidOperation, match="ordered writes"):
        client.bulk_write(models)
    with pytest.raises(errors.InvalidOperation, match="verbose results"):
        client.bulk_write(models, ordered=False, verbose_results=True)
    result = client.bulk_write(models, ordered=False)
    assert not result.acknowledged
    with pytest.raises(errors.InvalidOperation):
        result.inserted_count  # noqa: B018 - reading it is the test
    client.admin.command("ping")  # the unacknowledged command has been read by now
    assert _sent(rs)[-1]["writeConcern"] == {"w": 0}
    assert rs.store.documents("db", "a") == [{"_id": 1}]


def test_a_server_older_than_8_0_is_refused(rs, monkeypatch):
    """bulkWrite came in MongoDB 8.0 (wire version 25): before, InvalidOperation (PyMongo's
    message), nothing sent."""
    monkeypatch.setattr(deployments, "MAX_WIRE_VERSION", 21)
    client = MongoClient(rs.uri)
    with pytest.raises(errors.InvalidOperation, match="8.0"):
        client.bulk_write([InsertOne({"_id": 1}, namespace="db.a")])
    assert _sent(rs) == []


def test_write_concern_errors_are_collected_and_raised_at_the_end(rs):
    """"Write Concern Errors": a write concern error does not stop the bulk write; every
    batch runs and all of them are raised together at the end, with the counts."""
    rs.servers[0].limits = {"maxWriteBatchSize": 1}
    rs.servers[0].fail("bulkWrite", action="write-concern-error", times=2,
                       write_concern_error={"code": 64, "errmsg": "waiting for replication"})
    try:
        client = MongoClient(rs.uri, retryWrites=False)
        with pytest.raises(errors.ClientBulkWriteException) as raised:
            client.bulk_write([InsertOne({"_id": i}, namespace="db.a") for i in range(3)])
    finally:
        rs.servers[0].limits = {}
    details = raised.value.details
    assert [e["code"] for e in raised.value.write_concern_errors] == [64, 64]
    assert details["nInserted"] == 3 and raised.value.error is None
    assert raised.value.partial_result.inserted_count == 3


def test_a_top_level_error_stops_the_bulk_write_and_keeps_what_succeeded(rs):
    """"Top-Level Errors": a command error in the second batch stops the bulk write (no
    third batch); ClientBulkWriteException carries it as ``error`` and the first batch's
    counts as ``partial_result``."""
    rs.servers[0].limits = {"maxWriteBatchSize": 1}
    rs.servers[0].fail("bulkWrite", code=8, errmsg="UnknownError", skip=1)
    try:
        client = MongoClient(rs.uri)
        with pytest.raises(errors.ClientBulkWriteException) as raised:
            client.bulk_write([InsertOne({"_id": i}, namespace="db.a") for i in range(3)])
    finally:
        rs.servers[0].limits = {}
    assert raised.value.error.code == 8
    assert raised.value.partial_result.inserted_count == 1
    assert len(_sent(rs)) == 2
    assert raised.value.__cause__ is raised.value.error


def test_the_results_cursor_is_read_to_its_end(rs, monkeypatch):
    """"Drivers MUST attempt to consume the contents of the cursor": verbose results spread
    over several batches are fetched with getMores on admin.$cmd.bulkWrite, in the command's
    session."""
    monkeypatch.setattr(simulated_store, "MAX_BATCH_BYTES", 200)
    client = MongoClient(rs.uri)
    result = client.bulk_write([InsertOne({"_id": i}, namespace="db.a") for i in range(20)],
                               verbose_results=True)
    assert sorted(result.insert_results) == list(range(20))
    get_mores = [c for c in rs.servers[0].command_log if next(iter(c)) == "getMore"]
    bulk = [c for c in rs.servers[0].command_log if next(iter(c)) == "bulkWrite"][0]
    assert get_mores and all(c["collection"] == "$cmd.bulkWrite" for c in get_mores)
    assert all(c["lsid"] == bulk["lsid"] for c in get_mores)


@pytest.mark.parametrize("module, make", [(pymongo, pymongo.MongoClient),
                                          (singlemongo, MongoClient)])
def test_a_failed_getmore_is_the_top_level_error_as_a_failure_document(rs, monkeypatch,
                                                                      module, make):
    """"Top-Level Errors" while the results cursor is read: the getMore's error ends the
    bulk write as PyMongo records it, a failure document (``errmsg``, ``code``, ``errtype``),
    with what the first batch of results said in ``partial_result``, and the cursor is
    killed."""
    monkeypatch.setattr(simulated_store, "MAX_BATCH_BYTES", 200)
    rs.store.reset()
    rs.servers[0].command_log.clear()
    rs.servers[0].fail("getMore", code=8, errmsg="UnknownError")
    client = make(rs.uri)
    try:
        with pytest.raises(module.errors.ClientBulkWriteException) as raised:
            client.bulk_write([module.InsertOne({"_id": i}, namespace="db.a")
                               for i in range(20)], verbose_results=True)
    finally:
        client.close()
    error = raised.value.error
    assert isinstance(error, dict) and error["code"] == 8 and \
        error["errtype"] == "OperationFailure", error
    assert raised.value.partial_result.inserted_count == 20
    assert 0 < len(raised.value.partial_result.insert_results) < 20
    assert any(next(iter(c)) == "killCursors" for c in rs.servers[0].command_log)


def test_a_batch_is_retried_once_unless_it_holds_a_multi_write(rs):
    """Retryable writes: a batch without multi: true ops is retried after a retryable error
    with the same txnNumber; a batch with an UpdateMany or DeleteMany is sent without one and
    not retried."""
    client = MongoClient(rs.uri)
    rs.servers[0].fail("bulkWrite", action="close", times=1)
    assert client.bulk_write([InsertOne({"_id": 1}, namespace="db.a")]).inserted_count == 1
    sent = [c for c in rs.servers[0].command_log if next(iter(c)) == "bulkWrite"]
    assert len(sent) == 2 and sent[0]["txnNumber"] == sent[1]["txnNumber"]
    rs.servers[0].fail("bulkWrite", action="close", times=1)
    with pytest.raises(errors.ClientBulkWriteException) as raised:
        client.bulk_write([DeleteMany({}, namespace="db.a")])
    assert isinstance(raised.value.error, errors.AutoReconnect)
    last = [c for c in rs.servers[0].command_log if next(iter(c)) == "bulkWrite"][-1]
    assert "txnNumber" not in last


COUNTS = {"nErrors": 0, "nInserted": 1, "nUpserted": 0, "nMatched": 0, "nModified": 0,
          "nDeleted": 0}
CURSOR = {"id": 0, "ns": "admin.$cmd.bulkWrite", "firstBatch": []}
MALFORMED = {  # the "bulkWrite" reply shape, field by field (singlemongo/replies.py)
    "cursor": {"ok": 1, **COUNTS},
    "cursor.id": {"ok": 1, "cursor": {**CURSOR, "id": "0"}, **COUNTS},
    "cursor.firstBatch": {"ok": 1, "cursor": {**CURSOR, "firstBatch": "x"}, **COUNTS},
    **{name: {"ok": 1, "cursor": CURSOR, **{k: v for k, v in COUNTS.items() if k != name}}
       for name in COUNTS},
    "idx": {"ok": 1, "cursor": {**CURSOR, "firstBatch": [{"ok": 1, "idx": 7, "n": 1}]},
            **COUNTS},
}


@pytest.mark.parametrize("field", MALFORMED)
def test_a_malformed_reply_is_a_top_level_error_naming_the_field(rs, field):
    """A reply is used only when its fields are what a bulkWrite reply has: else
    MalformedReply naming the field, carried as the bulk write's top-level error, and no
    count taken from it."""
    rs.servers[0].fail("bulkWrite", action="raw-reply", raw=raw_answer(MALFORMED[field]),
                       times=None)
    client = MongoClient(rs.uri, retryWrites=False)
    with pytest.raises(errors.ClientBulkWriteException) as raised:
        client.bulk_write([InsertOne({"_id": ObjectId()}, namespace="db.a")])
    error = raised.value.error
    assert isinstance(error, errors.MalformedReply) and field in str(error)
    assert raised.value.partial_result is None


def test_a_reply_without_ok_is_a_failure(rs):
    """A reply is a success only when it says so: no ``ok`` is a top-level error."""
    rs.servers[0].fail("bulkWrite", action="raw-reply", times=None,
                       raw=raw_answer({"cursor": CURSOR, **COUNTS}))
    client = MongoClient(rs.uri, retryWrites=False)
    with pytest.raises(errors.ClientBulkWriteException) as raised:
        client.bulk_write([InsertOne({"_id": 1}, namespace="db.a")])
    assert isinstance(raised.value.error, errors.OperationFailure)
    assert raised.value.partial_result is None


def test_models_show_and_compare_their_namespace_as_pymongos():
    """A model's repr and equality include its namespace when it has one, as PyMongo's."""
    for ours, theirs in zip(_models(singlemongo), _models(pymongo)):
        assert repr(ours) == repr(theirs)
    assert InsertOne({"a": 1}, namespace="db.a") != InsertOne({"a": 1}, namespace="db.b")
    assert UpdateOne({}, {"$set": {"a": 1}}) == UpdateOne({}, {"$set": {"a": 1}})
    assert ReplaceOne({}, {}) != ReplaceOne({}, {}, namespace="db.a")
