"""The operation and transaction lifecycle table (engine/lifecycle.py), cell by cell: each
operation cell is taken by a real operation against the simulator, whose steps are recorded
and compared with the steps the scenario expects; together the scenarios take every cell.
The transaction cells are checked against the spec's own table (tests/test_transactions.py)."""
import pytest

from singlemongo import MongoClient
from singlemongo.engine import lifecycle, operation
from singlemongo.errors import AutoReconnect, OperationFailure, PyMongoError
from singlemongo.transaction import TRANSITIONS, TxnState, transition

from .test_auth_oidc import Callback, client_for, issuer, oidc_rs, rs, server_side  # noqa: F401
from .test_transactions import SPEC_TABLE

START = [("selecting", "connection"), ("checked out", "sent")]
OK = [("awaiting reply", "ok reply"), ("succeeded", "end")]


@pytest.fixture
def steps(monkeypatch):
    recorded = []
    monkeypatch.setattr(operation, "STEPS", recorded)
    return recorded


@pytest.fixture
def client(mongo_replica_set, fake_clock):
    client = MongoClient(mongo_replica_set.uri, clock=fake_clock)
    client.admin.command("ping")  # the scan and the handshakes are done before the scenario
    yield client
    client.close()


class Interrupt(KeyboardInterrupt):
    """What a signal handler raises in the middle of a step."""


def _raise(*args, **kwargs):
    raise Interrupt()


def test_a_read_that_succeeds(client, steps):
    client.app.c.find_one()
    assert steps == START + OK


def test_a_retryable_read_after_a_network_error(client, steps, mongo_replica_set):
    """The network error's actions: the session is marked dirty and SDAM's rules applied;
    then the retry, on a new connection."""
    with client.start_session() as session:
        mongo_replica_set.primary.fail("find", action="close")
        client.app.c.find_one(session=session)
        assert session._server_session.dirty
    assert steps == START + [("awaiting reply", "network error"),
                             ("between attempts", "retry")] + START + OK


def test_a_server_error_no_retry_can_fix(client, steps, mongo_replica_set):
    mongo_replica_set.primary.fail("find", code=2, errmsg="bad value")
    with pytest.raises(OperationFailure, match="bad value"):
        client.app.c.find_one()
    assert steps == START + [("awaiting reply", "error reply"), ("between attempts", "give up"),
                             ("failed", "end")]


def test_an_unacknowledged_write(client, steps):
    client.app.get_collection("c", write_concern=_w0()).insert_one({"x": 1})
    assert steps == [("selecting", "connection"), ("checked out", "sent unacknowledged"),
                     ("succeeded", "end")]


def test_an_unacknowledged_write_the_network_loses(client, steps, monkeypatch):
    """w: 0 is never retried: the network error fails the operation."""
    from singlemongo.engine.connection import Connection

    def lost(self, *args, **kwargs):
        raise AutoReconnect("connection lost sending a command")
    monkeypatch.setattr(Connection, "send_only", lost)
    with pytest.raises(AutoReconnect):
        client.app.get_collection("c", write_concern=_w0()).insert_one({"x": 1})
    assert steps == [("selecting", "connection"), ("checked out", "network error"),
                     ("failed", "end")]


def test_no_server_to_select(fake_clock, steps):
    client = MongoClient("mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=50", clock=fake_clock)
    with pytest.raises(PyMongoError):
        client.app.c.find_one()
    assert steps == [("selecting", "no server"), ("failed", "end")]
    client.close()


def test_a_handshake_the_server_closes_is_retried(mongo_load_balanced, fake_clock, steps):
    """Client backpressure: the handshake budget is spent, and the retry goes on."""
    client = MongoClient(mongo_load_balanced.uri, clock=fake_clock)
    mongo_load_balanced.lb.fail("hello", action="close")
    client.app.c.insert_one({"x": 1})
    assert steps == [("selecting", "handshake error"), ("between attempts", "retry")] + \
        START + OK
    client.close()


def test_a_handshake_the_client_refuses(mongo_load_balanced, fake_clock, steps):
    """A load balancer's handshake without a serviceId: the client's ConfigurationError,
    not retried."""
    from singlemongo.errors import ConfigurationError
    client = MongoClient(mongo_load_balanced.uri, clock=fake_clock)
    mongo_load_balanced.lb.fail("hello", code=8000, errmsg="refused")
    with pytest.raises(ConfigurationError, match="load balancing mode"):
        client.app.c.insert_one({"x": 1})
    assert steps == [("selecting", "error"), ("failed", "end")]
    client.close()


def test_a_deployment_that_refuses_transaction_numbers(client, steps, mongo_replica_set):
    """Retryable writes, "Determining Retryable Support": PyMongo's actionable error."""
    mongo_replica_set.primary.fail("insert", code=20,
                                   errmsg="Transaction numbers are only allowed on a replica set")
    with pytest.raises(OperationFailure, match="retryWrites=false"):
        client.app.c.insert_one({"x": 1})
    assert steps == START + [("awaiting reply", "no retryable writes"), ("failed", "end")]


def test_reauthentication_then_the_same_command_again(rs, issuer, steps):  # noqa: F811
    client = client_for(rs, OIDC_CALLBACK=Callback(issuer))
    client.admin.command("ping")
    rs.primary.fail("find", code=391)
    client.app.c.find_one()
    assert steps[-6:] == START + [("awaiting reply", "reauthentication required"),
                                  ("reauthenticating", "sent")] + OK
    client.close()


def test_a_reauthentication_that_fails(rs, issuer, steps, monkeypatch):  # noqa: F811
    client = client_for(rs, OIDC_CALLBACK=Callback(issuer))
    client.admin.command("ping")
    del steps[:]
    monkeypatch.setattr(operation, "reauthenticate", _raise)
    rs.primary.fail("find", code=391)
    with pytest.raises(Interrupt):
        client.app.c.find_one()
    assert steps == START + [("awaiting reply", "reauthentication required"),
                             ("reauthenticating", "error"), ("failed", "end")]
    client.close()


@pytest.mark.parametrize("where, expected", [
    ("checkout", [("selecting", "error")]),
    ("build_command", [("selecting", "connection"), ("checked out", "error")]),
    ("_send", START + [("awaiting reply", "error")]),
    ("Outcome", START + [("awaiting reply", "ok reply"), ("succeeded", "error")]),
])
def test_an_interrupt_in_each_state(client, steps, monkeypatch, where, expected):
    """A signal's exception in any state fails the operation; the connection is checked in
    as after any attempt, and the next operation runs. After the reply too: the soak test
    met an interrupt there, which the table lacked (an AssertionError)."""
    original = getattr(operation, where)
    monkeypatch.setattr(operation, where, _raise)
    with pytest.raises(Interrupt):
        client.app.c.find_one()
    assert steps == expected + [("failed", "end")]
    monkeypatch.setattr(operation, where, original)
    del steps[:]
    client.app.c.find_one()  # the client still works, on a connection in step
    assert steps == START + OK


def test_an_interrupt_between_attempts(client, steps, mongo_replica_set, monkeypatch):
    from singlemongo.engine import retry
    monkeypatch.setattr(retry, "after_failure", _raise)
    mongo_replica_set.primary.fail("find", action="close")
    with pytest.raises(Interrupt):
        client.app.c.find_one()
    assert steps == START + [("awaiting reply", "network error"),
                             ("between attempts", "error"), ("failed", "end")]


SCENARIO_CELLS = {
    ("selecting", "connection"), ("selecting", "no server"), ("selecting", "handshake error"),
    ("checked out", "sent"), ("checked out", "sent unacknowledged"),
    ("checked out", "network error"), ("awaiting reply", "ok reply"),
    ("awaiting reply", "error reply"), ("awaiting reply", "network error"),
    ("awaiting reply", "reauthentication required"), ("awaiting reply", "no retryable writes"),
    ("reauthenticating", "sent"), ("between attempts", "retry"),
    ("between attempts", "give up"), ("selecting", "error"), ("checked out", "error"),
    ("succeeded", "error"),
    ("awaiting reply", "error"), ("reauthenticating", "error"), ("between attempts", "error"),
    ("succeeded", "end"), ("failed", "end"),
}


def test_the_scenarios_take_every_operation_cell():
    """The scenarios above, together, take each cell of the operation table: a new cell
    without a scenario fails here."""
    assert SCENARIO_CELLS == set(lifecycle.OPERATION)


def test_a_step_the_table_lacks_is_a_defect_not_a_guess():
    with pytest.raises(AssertionError, match="no lifecycle step for 'ok reply' in state "
                                             "'selecting'"):
        lifecycle.advance("selecting", "ok reply")


@pytest.mark.parametrize("cell", sorted(SPEC_TABLE, key=lambda c: (c[0].value, c[1])),
                         ids=lambda c: f"{c[0].value}-{c[1]}")
def test_each_transaction_cell_against_the_spec(cell):
    """The transaction rows, each against the spec's table ("ClientSession changes"); an
    operation leaves "starting" for "in progress" once sent (the "sent" row)."""
    expected = SPEC_TABLE[cell]
    if isinstance(expected, str):
        with pytest.raises(Exception, match=expected):
            transition(*cell)
        return
    state, _ = transition(*cell)
    if cell == (TxnState.STARTING, "operation"):
        state, _ = transition(state, "sent")
    assert state is expected


def test_the_transaction_rows_are_the_spec_table_and_the_sent_row():
    assert set(TRANSITIONS) == set(SPEC_TABLE) | {(TxnState.STARTING, "sent")}


def test_commit_and_abort_send_only_from_a_transaction_that_sent():
    """A commit or abort of a transaction that sent nothing sends nothing; a commit may be
    run again."""
    sends = {cell for cell, outcome in TRANSITIONS.items()
             if not isinstance(outcome, str) and outcome[1] and cell[1] != "operation"}
    assert sends == {(TxnState.IN_PROGRESS, "commit"), (TxnState.COMMITTED, "commit"),
                     (TxnState.IN_PROGRESS, "abort")}


def _w0():
    from singlemongo.write_concern import WriteConcern
    return WriteConcern(w=0)
