"""Error texts PyMongo's users grep for (issue 56): "(configured timeouts: ...)" after a
timeout's message, the same words as PyMongo's on the same simulated server, and a server
error's labels in its message."""
import re

import pymongo
import pytest

import singlemongo
from singlemongo.errors import (AutoReconnect, ExecutionTimeout, NetworkTimeout,
                                with_configured_timeouts)
from singlemongo.testing import Standalone

BLOCK_FIND = {"configureFailPoint": "failCommand", "mode": "alwaysOn",
              "data": {"blockConnection": True, "blockTimeMS": 1000, "failCommands": ["find"],
                       "appName": "configuredTimeouts"}}
SUFFIX = re.compile(r"\(configured timeouts: [^)]*\)")


@pytest.mark.parametrize("args, expected", [
    ((None, 500, 20000), " (configured timeouts: socketTimeoutMS: 500.0ms, "
                         "connectTimeoutMS: 20000.0ms)"),
    ((0.5, 500, 20000), " (configured timeouts: timeoutMS: 500.0ms, connectTimeoutMS: 20000.0ms)"),
    ((0.4999, None, 10000), " (configured timeouts: timeoutMS: 500.0ms, "
                            "connectTimeoutMS: 10000.0ms)"),
    ((None, None, 0), ""),
])
def test_the_words_name_each_timeout_set(args, expected):
    """Rule: timeoutMS in force replaces socketTimeoutMS; connectTimeoutMS follows; an unset
    one is not named (PyMongo's helpers_shared.format_timeout_details)."""
    error = with_configured_timeouts(NetworkTimeout("timed out"), *args)
    assert str(error) == "timed out" + expected


def test_only_timeouts_get_the_words():
    """Rule: a network error that is not a timeout, and a server error other than
    MaxTimeMSExpired, keep their message."""
    assert str(with_configured_timeouts(AutoReconnect("refused"), None, 500, 500)) == "refused"
    timeout = ExecutionTimeout("operation exceeded time limit", 50, {}, address=None)
    assert "(configured timeouts: socketTimeoutMS: 500.0ms" in str(
        with_configured_timeouts(timeout, None, 500, 500))


def test_the_words_are_added_once():
    """Rule: an error passing two layers (the check, then server selection) is not
    suffixed twice."""
    error = NetworkTimeout("timed out")
    for _ in range(2):
        with_configured_timeouts(error, None, 500, 500)
    assert str(error).count("configured timeouts") == 1


def _timeout_text(driver, uri, csot):
    client = driver.MongoClient(uri, socketTimeoutMS=500, connectTimeoutMS=20000,
                                appName="configuredTimeouts", retryReads=False)
    try:
        client.db.coll.insert_one({"x": 1})
        client.admin.command(BLOCK_FIND)
        try:
            with pytest.raises(Exception) as info:
                if csot:
                    with driver.timeout(0.5):
                        client.db.coll.find_one({})
                else:
                    client.db.coll.find_one({})
        finally:
            client.admin.command({"configureFailPoint": "failCommand", "mode": "off"})
        return type(info.value).__name__, SUFFIX.search(str(info.value)).group(0)
    finally:
        client.close()


@pytest.mark.parametrize("csot", [False, True], ids=["socketTimeoutMS", "timeoutMS"])
def test_same_words_as_pymongo(csot):
    """Rule: the same error class and the same "(configured timeouts: ...)" as PyMongo
    (the oracle) for a reply that does not come in time."""
    with Standalone() as deployment:
        ours = _timeout_text(singlemongo, deployment.uri, csot)
        theirs = _timeout_text(pymongo, deployment.uri, csot)
    assert ours == theirs


def test_a_server_error_names_its_labels():
    """Issue 56: PyMongo's str(OperationFailure) shows the reply's errorLabels (its "full
    error"), and programs look for RetryableError or SystemOverloadedError in it;
    singlemongo's message left them out."""
    from singlemongo.reply_errors import error_from_reply
    error = error_from_reply({"ok": 0, "code": 462, "codeName": "IngressRequestRateLimitExceeded",
                              "errmsg": "slow down",
                              "errorLabels": ["RetryableError", "SystemOverloadedError"]},
                             ("db", 27017))
    assert "labels RetryableError, SystemOverloadedError" in str(error)
    assert "labels" not in str(error_from_reply({"ok": 0, "code": 2, "errmsg": "bad"},
                                                ("db", 27017)))
