"""A pytest suite for code that stores naive UTC datetimes, under frozen time.

It uses singlemongo's pytest plugin (the ``testing`` extra): ``mongo_replica_set`` is a
simulated 3-member replica set, reset for each test; ``make_client`` gives a client on a fake
clock. freezegun freezes the application's clock; the driver never sleeps or spins on it.

    python3 -m pytest examples/test_with_freezegun.py
"""
from __future__ import annotations

import datetime
from typing import Any, Callable

from freezegun import freeze_time

from singlemongo.collection import Collection


def start_trial(users: Collection[dict[str, Any]], name: str) -> None:
    """The application code under test: a 14-day trial from now (naive UTC, as PyMongo)."""
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    users.insert_one({"name": name, "trial_ends": now + datetime.timedelta(days=14)})


def expired_trials(users: Collection[dict[str, Any]]) -> list[str]:
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    return [u["name"] for u in users.find({"trial_ends": {"$lt": now}}).sort("name")]


def test_trial_expires_after_fourteen_days(mongo_replica_set: Any,
                                           make_client: Callable[..., Any]) -> None:
    users = make_client(mongo_replica_set).app.users
    with freeze_time("2026-01-01 12:00:00") as frozen:
        start_trial(users, "ada")
        frozen.tick(datetime.timedelta(days=13))
        assert expired_trials(users) == []
        frozen.tick(datetime.timedelta(days=2))
        assert expired_trials(users) == ["ada"]


def test_datetimes_come_back_naive_as_stored(mongo_replica_set: Any,
                                             make_client: Callable[..., Any]) -> None:
    users = make_client(mongo_replica_set).app.users
    with freeze_time("2026-03-01"):
        start_trial(users, "grace")
        doc = users.find_one({"name": "grace"})
        assert doc is not None
        # tz_aware=False by default, as PyMongo: comparing with a naive utcnow() works.
        assert doc["trial_ends"] == datetime.datetime(2026, 3, 15)
