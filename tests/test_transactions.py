"""Transactions (transactions spec and the convenient with_transaction API) through
MongoClient against the simulated deployments: what goes on the wire, the state table, the
labels on errors, pinning, the simulator's isolation and conflicts, and with_transaction's
retry loops on the fake clock and under freezegun."""
import os
import time

import freezegun
import pytest

from singlemongo import MongoClient, ReadConcern, TransactionOptions, WriteConcern
from singlemongo.clock import DEFAULT_CLOCK, FakeClock
from singlemongo.errors import (ConnectionFailure, InvalidOperation, NetworkTimeout,
                                OperationFailure, PyMongoError)
from singlemongo.transaction import TxnState

from .conftest import Commands


def client_for(deployment, clock=None, **options):
    commands = Commands()
    client = MongoClient(deployment.uri, clock=clock or FakeClock(),
                         event_listeners=[commands], **options)
    return client, commands


def fail_point(client, **data):
    mode = data.pop("mode", {"times": 1})
    client.admin.command({"configureFailPoint": "failCommand", "mode": mode, "data": data})


@pytest.fixture
def rs(mongo_replica_set):
    return mongo_replica_set


def test_a_transfer_is_atomic_and_invisible_until_commit(rs):
    """Transactions on the simulator: uncommitted writes are seen by their own session only
    (snapshot isolation); commit makes both visible at once; abort discards them."""
    client, _ = client_for(rs)
    accounts = client.bank.accounts
    accounts.insert_many([{"_id": "a", "balance": 100}, {"_id": "b", "balance": 0}])
    with client.start_session() as session:
        session.start_transaction()
        accounts.update_one({"_id": "a"}, {"$inc": {"balance": -30}}, session=session)
        accounts.update_one({"_id": "b"}, {"$inc": {"balance": 30}}, session=session)
        assert accounts.find_one({"_id": "b"}, session=session)["balance"] == 30
        assert accounts.find_one({"_id": "b"})["balance"] == 0  # outside: not yet
        session.commit_transaction()
        assert {d["_id"]: d["balance"] for d in accounts.find()} == {"a": 70, "b": 30}
        with session.start_transaction():
            accounts.delete_many({}, session=session)
            session.abort_transaction()
    assert accounts.count_documents({}) == 2
    client.close()


def test_wire_fields_of_a_transaction(rs):
    """"Constructing commands within a transaction": the first command carries
    startTransaction, autocommit false, the transaction's readConcern and txnNumber; later
    ones only autocommit and the same txnNumber; no command but commit carries a
    writeConcern, and a w: 0 collection's write is acknowledged in a transaction."""
    client, commands = client_for(rs)
    coll = client.app.get_collection("c", write_concern=WriteConcern(w=0))
    with client.start_session(causal_consistency=False) as session:
        session.start_transaction(read_concern=ReadConcern("majority"),
                                  write_concern=WriteConcern(w="majority"),
                                  max_commit_time_ms=500)
        assert coll.insert_one({"_id": 1}, session=session).acknowledged
        coll.find_one({"_id": 1}, session=session)
        session.commit_transaction()
    first, second, commit = commands.started[-3:]
    assert first["startTransaction"] is True and first["autocommit"] is False
    assert first["readConcern"] == {"level": "majority"} and "writeConcern" not in first
    assert "startTransaction" not in second and "readConcern" not in second
    assert second["autocommit"] is False
    assert first["txnNumber"] == second["txnNumber"] == commit["txnNumber"]
    assert commit["writeConcern"] == {"w": "majority"} and commit["maxTimeMS"] == 500
    assert commit["autocommit"] is False and "startTransaction" not in commit
    assert client.app.c.find_one({"_id": 1}) == {"_id": 1}
    client.close()


def test_write_conflict_is_transient_and_aborts_the_second_writer(rs):
    """Two transactions writing one document: the second gets WriteConflict (112) labelled
    TransientTransactionError and is aborted on the server (its commit: NoSuchTransaction);
    the first commits."""
    client, _ = client_for(rs)
    coll = client.app.c
    coll.insert_one({"_id": 1, "n": 0})
    first, second = client.start_session(), client.start_session()
    first.start_transaction()
    second.start_transaction()
    coll.update_one({"_id": 1}, {"$inc": {"n": 1}}, session=first)
    with pytest.raises(OperationFailure) as conflict:
        coll.update_one({"_id": 1}, {"$inc": {"n": 10}}, session=second)
    assert conflict.value.code == 112
    assert conflict.value.has_error_label("TransientTransactionError")
    with pytest.raises(OperationFailure) as gone:
        second.commit_transaction()
    assert gone.value.code == 251 and gone.value.has_error_label("TransientTransactionError")
    first.commit_transaction()
    assert coll.find_one({"_id": 1})["n"] == 1
    client.close()


S = TxnState
# The spec's table ("ClientSession changes"), written out here from the text, not imported:
# (state, action) -> the state after it, or the message of the error it raises.
SPEC_TABLE = {
    (S.NONE, "start"): S.STARTING, (S.NONE, "commit"): "No transaction started",
    (S.NONE, "abort"): "No transaction started", (S.NONE, "operation"): S.NONE,
    (S.STARTING, "start"): "Transaction already in progress",
    (S.STARTING, "commit"): S.COMMITTED_EMPTY, (S.STARTING, "abort"): S.ABORTED,
    (S.STARTING, "operation"): S.IN_PROGRESS,
    (S.IN_PROGRESS, "start"): "Transaction already in progress",
    (S.IN_PROGRESS, "commit"): S.COMMITTED, (S.IN_PROGRESS, "abort"): S.ABORTED,
    (S.IN_PROGRESS, "operation"): S.IN_PROGRESS,
    (S.COMMITTED, "start"): S.STARTING, (S.COMMITTED, "commit"): S.COMMITTED,
    (S.COMMITTED, "abort"): "Cannot call abortTransaction after calling commitTransaction",
    (S.COMMITTED, "operation"): S.NONE,
    (S.COMMITTED_EMPTY, "start"): S.STARTING, (S.COMMITTED_EMPTY, "commit"): S.COMMITTED_EMPTY,
    (S.COMMITTED_EMPTY, "abort"):
        "Cannot call abortTransaction after calling commitTransaction",
    (S.COMMITTED_EMPTY, "operation"): S.NONE,
    (S.ABORTED, "start"): S.STARTING,
    (S.ABORTED, "commit"): "Cannot call commitTransaction after calling abortTransaction",
    (S.ABORTED, "abort"): "Cannot call abortTransaction twice", (S.ABORTED, "operation"): S.NONE,
}
REACH = {S.NONE: (), S.STARTING: ("start",), S.IN_PROGRESS: ("start", "operation"),
         S.COMMITTED: ("start", "operation", "commit"), S.COMMITTED_EMPTY: ("start", "commit"),
         S.ABORTED: ("start", "operation", "abort")}


def _act(session, coll, action):
    {"start": session.start_transaction, "commit": session.commit_transaction,
     "abort": session.abort_transaction,
     "operation": lambda: coll.insert_one({}, session=session)}[action]()


@pytest.mark.parametrize("state,action", sorted(SPEC_TABLE, key=lambda k: (k[0].value, k[1])))
def test_each_row_of_the_state_table(rs, state, action):
    """Each (state, action) row of the spec's transaction state table, driven through the
    public API against the simulator; an error leaves the state unchanged."""
    client, _ = client_for(rs)
    with client.start_session() as session:
        for step in REACH[state]:
            _act(session, client.app.c, step)
        assert session._transaction.state is state
        expected = SPEC_TABLE[(state, action)]
        if isinstance(expected, str):
            with pytest.raises(InvalidOperation, match=expected):
                _act(session, client.app.c, action)
            assert session._transaction.state is state
        else:
            _act(session, client.app.c, action)
            assert session._transaction.state is expected
    client.close()


def test_network_errors_get_the_transaction_labels(rs):
    """Error Reporting: a network error in a transaction is TransientTransactionError; a
    commit whose retry also fails on the network is UnknownTransactionCommitResult (and
    RetryableWriteError), never TransientTransactionError."""
    client, _ = client_for(rs)
    coll = client.app.c
    with client.start_session() as session:
        session.start_transaction()
        fail_point(client, failCommands=["insert"], closeConnection=True)
        with pytest.raises(ConnectionFailure) as during:
            coll.insert_one({"_id": 1}, session=session)
        assert during.value.has_error_label("TransientTransactionError")
        session.abort_transaction()
        session.start_transaction()
        coll.insert_one({"_id": 2}, session=session)
        fail_point(client, failCommands=["commitTransaction"], closeConnection=True,
                   mode={"times": 2})
        with pytest.raises(ConnectionFailure) as commit:
            session.commit_transaction()
        labels = commit.value.error_labels
        assert "UnknownTransactionCommitResult" in labels and "RetryableWriteError" in labels
        assert "TransientTransactionError" not in labels
        session.commit_transaction()  # the user's retry: it commits
    assert coll.find_one({"_id": 2}) == {"_id": 2}
    client.close()


def test_read_preference_in_a_transaction_must_be_primary(rs):
    """transactions spec, "readPreference": a read with a transaction read preference other
    than primary is refused before anything is sent; a write is not checked."""
    client, commands = client_for(rs)
    with client.start_session() as session:
        from singlemongo import ReadPreference  # an object: a name is a TypeError, as PyMongo
        session.start_transaction(read_preference=ReadPreference.SECONDARY)
        client.app.c.insert_one({"_id": 1}, session=session)
        sent = len(commands.started)
        with pytest.raises(InvalidOperation, match="must be primary"):
            client.app.c.find_one({}, session=session)
        assert len(commands.started) == sent
    client.close()


def test_a_sharded_transaction_is_pinned_to_one_mongos(mongo_sharded):
    """Mongos Pinning: every command of a transaction goes to the mongos of its first; commit
    keeps the pin, a new transaction after it may select again; the recoveryToken of the
    last reply goes with the commit."""
    client, commands = client_for(mongo_sharded, localThresholdMS=1000)
    servers = []
    client._topology.events.listeners.append(
        lambda e: servers.append(e.connection_id)
        if type(e).__name__ == "CommandStartedEvent" and e.command_name == "insert" else None)
    with client.start_session() as session:
        for _ in range(3):
            session.start_transaction()
            start = len(servers)
            for _ in range(6):
                client.app.c.insert_one({}, session=session)
            session.commit_transaction()
            assert len(set(servers[start:])) == 1 and session._transaction.pinned is not None
            assert tuple(session._transaction.pinned) == tuple(servers[-1])
            assert commands.named("commitTransaction")[-1]["recoveryToken"]
    client.close()


@pytest.mark.parametrize("kind", ["fake clock", "freezegun"])
def test_with_transaction_stops_retrying_after_120_seconds(rs, kind):
    """Convenient API: a callback that always fails with TransientTransactionError is run
    again until 120 s of the client's clock have passed, then a timeout error carrying the
    last error is raised (PyMongo 4.20's NetworkTimeout, the labels kept). The fake clock's
    backoffs advance it; under freezegun the callback moves frozen time. Neither really
    sleeps for the limit."""
    frozen = freezegun.freeze_time("2030-01-01") if kind == "freezegun" else None
    ticker = frozen.start() if frozen else None
    try:
        clock = FakeClock() if kind == "fake clock" else None
        client, commands = client_for(rs, clock=clock or DEFAULT_CLOCK)
        fail_point(client, failCommands=["insert"], errorCode=112, mode="alwaysOn")
        calls = []

        def callback(session):
            calls.append(1)
            if ticker is not None:
                ticker.tick(45)
            client.app.c.insert_one({"_id": len(calls)}, session=session)

        started = time.clock_gettime(time.CLOCK_MONOTONIC)  # freezegun leaves this one
        with client.start_session() as session:
            with pytest.raises(NetworkTimeout) as failure:
                session.with_transaction(callback)
        real = time.clock_gettime(time.CLOCK_MONOTONIC) - started
        assert failure.value.__cause__.code == 112
        assert failure.value.has_error_label("TransientTransactionError")
        if clock is not None:
            assert clock.now - 1000.0 >= 119.0 and sum(clock.sleeps) < 121.0
            assert len(calls) > 10
        else:
            assert len(calls) == 3  # 45 s, 90 s, then 135 s is past the limit
        assert real < 60.0  # never slept the limit (the loop is bounded by the clock)
        assert len(commands.named("abortTransaction")) == len(calls)
    finally:
        if frozen:
            frozen.stop()
    client.close()


@pytest.mark.parametrize("kind", ["fake clock", "freezegun"])
def test_a_commit_whose_reply_is_lost_is_retried_exactly_once(rs, kind):
    """commitTransaction is a retryable write: the server commits but the reply is lost;
    the driver retries once, with w: majority and wtimeout 10000, the server answers from
    its committed transaction, and the document is written once."""
    frozen = freezegun.freeze_time("2030-01-01") if kind == "freezegun" else None
    if frozen:
        frozen.start()
    try:
        client, commands = client_for(rs, clock=FakeClock() if kind == "fake clock"
                                      else DEFAULT_CLOCK)
        client.admin.command("ping")
        server = rs.primary
        server.fail("commitTransaction", action="run-then-close")
        with client.start_session() as session:
            result = session.with_transaction(
                lambda s: client.app.c.insert_one({"_id": "once"}, session=s).inserted_id)
        assert result == "once"
        commits = commands.named("commitTransaction")
        assert len(commits) == 2
        assert "writeConcern" not in commits[0]
        assert commits[1]["writeConcern"] == {"w": "majority", "wtimeout": 10000}
        assert client.app.c.count_documents({}) == 1
        assert server.commands["commitTransaction"] == 2
    finally:
        if frozen:
            frozen.stop()
    client.close()


def test_with_transaction_returns_what_the_callback_returns_and_respects_its_choice(rs):
    """The callback's value is returned; a callback that aborts itself is not committed; an
    error that is not transient is raised at once, after the transaction is aborted."""
    client, commands = client_for(rs)
    with client.start_session() as session:
        assert session.with_transaction(lambda s: 42) == 42
        assert session.with_transaction(lambda s: s.abort_transaction()) is None
        with pytest.raises(ZeroDivisionError):
            session.with_transaction(lambda s: (client.app.c.insert_one({}, session=s), 1 / 0))
        assert not session.in_transaction
    assert not commands.named("commitTransaction")
    assert len(commands.named("abortTransaction")) == 1
    assert client.app.c.count_documents({}) == 0
    client.close()


def test_end_session_aborts_an_open_transaction(rs):
    """endSession changes: a transaction in progress is aborted when the session ends."""
    client, commands = client_for(rs)
    with client.start_session() as session:
        session.start_transaction()
        client.app.c.insert_one({"_id": 1}, session=session)
    assert len(commands.named("abortTransaction")) == 1
    assert client.app.c.count_documents({}) == 0
    client.close()


def test_transaction_options_are_inherited(rs):
    """TransactionOptions: call, then default_transaction_options, then the client; an
    unacknowledged write concern is refused by name."""
    client, commands = client_for(rs, w=2, readConcernLevel="local")
    defaults = TransactionOptions(read_concern=ReadConcern("majority"))
    with client.start_session(default_transaction_options=defaults) as session:
        session.start_transaction()
        client.app.c.insert_one({}, session=session)
        session.commit_transaction()
    first = commands.named("insert")[-1]
    assert first["readConcern"]["level"] == "majority"
    assert commands.named("commitTransaction")[-1]["writeConcern"] == {"w": 2}
    with pytest.raises(PyMongoError, match="unacknowledged"):
        TransactionOptions(write_concern=WriteConcern(w=0))
    client.close()


def test_a_forked_child_never_uses_the_parents_session(rs):
    """Driver sessions spec: after fork, the child refuses a session started by the parent
    (its lsid belongs to the parent) instead of sending it."""
    client, commands = client_for(rs)
    session = client.start_session()
    client.app.c.insert_one({"_id": 1}, session=session)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            client.app.c.find_one({}, session=session)
        except InvalidOperation:
            code = 0
        except BaseException:
            code = 2
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    session.end_session()
    client.close()


def _abandoned_transaction(rs):
    """A transaction that wrote {_id: 1} and was never ended (its client still open), and a
    second client whose transaction writes the same document."""
    owner, _ = client_for(rs)
    owner.app.c.insert_one({"_id": 1, "n": 0})
    abandoned = owner.start_session()
    abandoned.start_transaction()
    owner.app.c.update_one({"_id": 1}, {"$inc": {"n": 1}}, session=abandoned)
    other, _ = client_for(rs)
    return owner, abandoned, other


def _write_in_a_transaction(client):
    with client.start_session() as session:
        session.start_transaction()
        client.app.c.update_one({"_id": 1}, {"$inc": {"n": 10}}, session=session)
        session.commit_transaction()


def _the_other_writes_and_the_abandoned_one_is_gone(owner, abandoned, other):
    _write_in_a_transaction(other)
    assert other.app.c.find_one({"_id": 1})["n"] == 10
    with pytest.raises(OperationFailure) as gone:
        abandoned.commit_transaction()
    assert gone.value.code == 251
    owner.close()
    other.close()


@pytest.mark.parametrize("kill", ["killAllSessions", "killSessions", "endSessions"])
def test_killing_sessions_aborts_their_transactions(rs, kill):
    """Simulator rule (a real server's): killAllSessions, killSessions and endSessions abort
    the open transactions of the sessions they end, so a test runner's clean-up (PyMongo's unified
    runner sends killAllSessions before every test) frees the documents an abandoned
    transaction wrote; before, a later transaction got WriteConflict for ever."""
    owner, abandoned, other = _abandoned_transaction(rs)
    with pytest.raises(OperationFailure) as conflict:
        _write_in_a_transaction(other)
    assert conflict.value.code == 112
    argument = [] if kill == "killAllSessions" else [abandoned.session_id]
    assert other.admin.command(kill, argument)["ok"] == 1
    _the_other_writes_and_the_abandoned_one_is_gone(owner, abandoned, other)


def test_kill_sessions_spares_the_others_and_checks_its_argument(rs):
    """Simulator rule: killSessions aborts only the sessions it names, and refuses an
    argument that is not an array (TypeMismatch, naming the type)."""
    owner, abandoned, other = _abandoned_transaction(rs)
    stranger = other.start_session()
    assert other.admin.command("killSessions", [stranger.session_id])["ok"] == 1
    with pytest.raises(OperationFailure) as conflict:
        _write_in_a_transaction(other)
    assert conflict.value.code == 112
    with pytest.raises(OperationFailure) as refused:
        other.admin.command("killSessions", 5)
    assert refused.value.code == 14 and "'int'" in str(refused.value)
    owner.close()
    other.close()


def test_a_transaction_past_its_lifetime_limit_is_aborted(rs, monkeypatch):
    """Simulator rule (mongod's transactionLifetimeLimitSeconds, 60): a transaction open
    longer than that no longer holds its documents, and its commit is NoSuchTransaction."""
    from singlemongo.testing.query import transactions
    owner, abandoned, other = _abandoned_transaction(rs)
    started = time.monotonic()
    monkeypatch.setattr(transactions.time, "monotonic",
                        lambda: started + transactions.TRANSACTION_LIFETIME_LIMIT + 1)
    _the_other_writes_and_the_abandoned_one_is_gone(owner, abandoned, other)
