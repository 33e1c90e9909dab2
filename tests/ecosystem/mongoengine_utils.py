"""Stand-in for mongoengine's tests/utils.py, which its sdist does not ship: the base test
case its test files import (a fresh ``mongoenginetest`` database per test class) and the
server-version decorators, as mongoengine's repository has them."""
import functools
import operator
import unittest

import pymongo
import pytest

from mongoengine import connect
from mongoengine.connection import disconnect_all, get_db
from mongoengine.mongodb_support import get_mongodb_version

PYMONGO_VERSION = tuple(pymongo.version_tuple[:2])
MONGO_TEST_DB = "mongoenginetest"


class MongoDBTestCase(unittest.TestCase):
    """A test case with a clean ``mongoenginetest`` database, dropped afterwards."""

    @classmethod
    def setUpClass(cls):
        disconnect_all()
        cls._connection = connect(db=MONGO_TEST_DB)
        cls._connection.drop_database(MONGO_TEST_DB)
        cls.db = get_db()

    @classmethod
    def tearDownClass(cls):
        cls._connection.drop_database(MONGO_TEST_DB)
        disconnect_all()


def get_as_pymongo(doc):
    return doc.__class__.objects.as_pymongo().get(id=doc.id)


def _requires(version, oper):
    def decorator(func):
        @functools.wraps(func)
        def inner(*args, **kwargs):
            if oper(get_mongodb_version(), version):
                return func(*args, **kwargs)
            pytest.skip(f"Needs MongoDB {oper.__name__} v{'.'.join(map(str, version))}")
        return inner
    return decorator


requires_mongodb_lt_42 = _requires((4, 2), operator.lt)
requires_mongodb_gte_44 = _requires((4, 4), operator.ge)
requires_mongodb_gte_50 = _requires((5, 0), operator.ge)
requires_mongodb_gte_60 = _requires((6, 0), operator.ge)
requires_mongodb_gte_70 = _requires((7, 0), operator.ge)
