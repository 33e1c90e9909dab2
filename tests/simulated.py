"""Fixtures of the simulator's own tests (tests/test_simulator_*.py), which use PyMongo as
the client so that a difference is the simulator's: one one-member replica set per module,
emptied before each test."""
import pymongo
import pytest

from singlemongo.testing import ReplicaSet


@pytest.fixture(scope="module")
def rs():
    with ReplicaSet(1) as deployment:
        yield deployment


@pytest.fixture()
def client(rs):
    rs.store.reset()
    client = pymongo.MongoClient(rs.uri, serverSelectionTimeoutMS=5000)
    yield client
    client.close()


@pytest.fixture()
def db(client):
    return client.sim
