"""``pymongo.event_loggers`` under ``install_as_pymongo()`` logs what PyMongo's does: the same
texts at the same levels (a program's log filters and alerts match them). Each logger method
gets an event built with the same arguments for both drivers; the records must be equal."""
import datetime
import logging

import pymongo.event_loggers as theirs_module
import pymongo.monitoring as pm
import pytest
from bson import ObjectId

from singlemongo import monitoring as sm
from singlemongo.drop_in import event_loggers as ours_module
from singlemongo.testing import Standalone

ADDRESS, TID = ("localhost", 27017), ObjectId("000000000000000000000001")
DELTA = datetime.timedelta(milliseconds=3)
CASES = [
    ("CommandLogger", "started", "CommandStartedEvent", ({"ping": 1}, "admin", 7, ADDRESS, 2)),
    ("CommandLogger", "succeeded", "CommandSucceededEvent",
     (DELTA, {"ok": 1}, "ping", 7, ADDRESS, 2)),
    ("CommandLogger", "failed", "CommandFailedEvent", (DELTA, {"ok": 0}, "ping", 7, ADDRESS, 2)),
    ("ServerLogger", "opened", "ServerOpeningEvent", (ADDRESS, TID)),
    ("ServerLogger", "closed", "ServerClosedEvent", (ADDRESS, TID)),
    ("HeartbeatLogger", "started", "ServerHeartbeatStartedEvent", (ADDRESS,)),
    ("HeartbeatLogger", "failed", "ServerHeartbeatFailedEvent", (0.1, "refused", ADDRESS)),
    ("TopologyLogger", "opened", "TopologyOpenedEvent", (TID,)),
    ("TopologyLogger", "closed", "TopologyClosedEvent", (TID,)),
    ("ConnectionPoolLogger", "pool_created", "PoolCreatedEvent", (ADDRESS, {})),
    ("ConnectionPoolLogger", "pool_ready", "PoolReadyEvent", (ADDRESS,)),
    ("ConnectionPoolLogger", "pool_cleared", "PoolClearedEvent", (ADDRESS,)),
    ("ConnectionPoolLogger", "pool_closed", "PoolClosedEvent", (ADDRESS,)),
    ("ConnectionPoolLogger", "connection_created", "ConnectionCreatedEvent", (ADDRESS, 4)),
    ("ConnectionPoolLogger", "connection_ready", "ConnectionReadyEvent", (ADDRESS, 4, 0.01)),
    ("ConnectionPoolLogger", "connection_closed", "ConnectionClosedEvent",
     (ADDRESS, 4, "stale")),
    ("ConnectionPoolLogger", "connection_check_out_started",
     "ConnectionCheckOutStartedEvent", (ADDRESS,)),
    ("ConnectionPoolLogger", "connection_check_out_failed", "ConnectionCheckOutFailedEvent",
     (ADDRESS, "timeout", 0.01)),
    ("ConnectionPoolLogger", "connection_checked_out", "ConnectionCheckedOutEvent",
     (ADDRESS, 4, 0.01)),
    ("ConnectionPoolLogger", "connection_checked_in", "ConnectionCheckedInEvent", (ADDRESS, 4)),
]


def _records(caplog, module, events, logger, method, name, args):
    caplog.clear()
    with caplog.at_level(logging.INFO):
        getattr(getattr(module, logger)(), method)(getattr(events, name)(*args))
    return [(r.levelname, r.getMessage()) for r in caplog.records]


@pytest.mark.parametrize("logger, method, name, args", CASES,
                         ids=[f"{c[0]}.{c[1]}" for c in CASES])
def test_each_logger_method_logs_pymongos_text_at_its_level(caplog, logger, method, name, args):
    """Before, every method logged "<Kind> <what>: <repr>" at INFO, and the pool logger only
    pool_cleared (28 tests of PyMongo's suite read these texts)."""
    theirs = _records(caplog, theirs_module, pm, logger, method, name, args)
    ours = _records(caplog, ours_module, sm, logger, method, name, args)
    assert ours == theirs and theirs


def test_the_topology_logger_warns_when_no_server_is_writable(caplog):
    """The topology logger warns "No writable servers available." on a change that leaves
    none (it never warned)."""
    from singlemongo import MongoClient
    with Standalone() as standalone:
        client = MongoClient(standalone.uri, event_listeners=[ours_module.TopologyLogger()],
                             serverSelectionTimeoutMS=100)
        client.admin.command("ping")
        standalone.servers[0].stop()
        with caplog.at_level(logging.INFO):
            client._topology.close_connection(standalone.servers[0].address)
            try:
                client.admin.command("ping")
            except Exception:
                pass
        client.close()
    messages = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert ("WARNING", "No writable servers available.") in messages
