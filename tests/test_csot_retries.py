"""Client-side operations timeout, "Retryability": with timeoutMS in force, 0 included, a
retryable read or write is retried as many times as the deadline allows, not once. PyMongo is
the oracle: the same fail point, both drivers, the same number of attempts and the same result.
The attempts are also bounded by a count (engine/operation.py MAX_TIMEOUT_RETRIES), so a
deadline that never comes (timeoutMS=0, a frozen clock) cannot make a retry loop endless."""
import pymongo
import pytest

import singlemongo
from singlemongo import errors
from singlemongo.clock import FakeClock
from singlemongo.engine.retry import MAX_TIMEOUT_RETRIES


def _fail(uri, command, times, code, label):
    """A failCommand fail point (set through PyMongo, the control) on ``command``."""
    with pymongo.MongoClient(uri) as admin:
        admin.admin.command({"configureFailPoint": "failCommand", "mode": times, "data": {
            "failCommands": [command], "errorCode": code,
            "errorLabels": [label] if label else []}})


def _attempts(rs, command):
    return sum(command in c for c in rs.servers[0].command_log)


# A write fails with code 7 labelled RetryableWriteError (as the CSOT spec tests do); a read
# with HostUnreachable (6), a retryable read error by its code.
FAILURES = {"insert": (7, "RetryableWriteError"), "find": (6, "")}


def _run(driver, rs, operation, command, fail_times, **client_options):
    """(attempts the server saw, result or the error's code) for one driver."""
    client = driver.MongoClient(rs.uri, **client_options)
    client.test.c.drop()
    client.test.c.insert_one({"_id": 0})
    rs.servers[0].command_log.clear()
    code, label = FAILURES[command]
    _fail(rs.uri, command, {"times": fail_times}, code, label)
    try:
        outcome = operation(client.test.c)
    except driver.errors.PyMongoError as exc:
        outcome = getattr(exc, "code", type(exc).__name__)
    finally:
        client.close()
    return _attempts(rs, command), outcome


WRITE = ("insert", lambda c: c.insert_one({"_id": 1}).inserted_id)
READ = ("find", lambda c: c.find_one({"_id": 0}))


@pytest.mark.parametrize("command,operation", [WRITE, READ], ids=["write", "read"])
@pytest.mark.parametrize("client_options", [{"timeoutMS": 10000}, {"timeoutMS": 0}, {}],
                         ids=["timeoutMS", "timeoutMS=0", "no timeoutMS"])
def test_retries_under_timeout_ms_match_pymongo(mongo_replica_set, command, operation,
                                                  client_options):
    """CSOT "Retryability": three failures in a row. Under timeoutMS (0 included) the fourth
    attempt succeeds; without it the one retry is spent and the error is raised. Both drivers
    agree on the attempts and the outcome. Before the fix singlemongo stopped after 2
    attempts under timeoutMS too."""
    ours, theirs = (_run(driver, mongo_replica_set, operation, command, 3, **client_options)
                    for driver in (singlemongo, pymongo))
    assert ours == theirs
    success = 1 if command == "insert" else {"_id": 0}
    assert ours == ((4, success) if client_options else (2, FAILURES[command][0]))


def test_a_timeout_block_of_zero_also_retries_until_success(mongo_replica_set):
    """CSOT: ``timeout(0)`` is timeoutMS in force with no deadline: retried as often as the
    count bound allows, as PyMongo's ``timeout(0)`` is."""
    def operation(collection):
        with singlemongo.timeout(0):
            return collection.insert_one({"_id": 1}).inserted_id
    assert _run(singlemongo, mongo_replica_set, operation, "insert", 5) == (6, 1)


def test_a_deadline_that_never_comes_still_ends_the_retries(mongo_replica_set):
    """"Every wait has a deadline and a count bound": a failure on every attempt under a frozen
    clock (timeoutMS never expires) ends after MAX_TIMEOUT_RETRIES retries with the server's
    error, which says why retrying stopped. PyMongo would loop for ever here."""
    client = singlemongo.MongoClient(mongo_replica_set.uri, timeoutMS=1000, clock=FakeClock())
    client.test.c.insert_one({"_id": 0})
    mongo_replica_set.servers[0].command_log.clear()
    _fail(mongo_replica_set.uri, "insert", "alwaysOn", *FAILURES["insert"])
    try:
        with pytest.raises(errors.OperationFailure) as caught:
            client.test.c.insert_one({"_id": 1})
    finally:
        _fail(mongo_replica_set.uri, "insert", "off", *FAILURES["insert"])
        client.close()
    assert caught.value.code == 7
    assert _attempts(mongo_replica_set, "insert") == MAX_TIMEOUT_RETRIES + 1
    assert f"the {MAX_TIMEOUT_RETRIES} retries" in str(caught.value)
