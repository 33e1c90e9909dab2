"""``DriverInfo`` (as ``pymongo.driver_info``): a library built on the driver adds its name,
version and platform to the handshake's client metadata, which servers log
(``MongoClient(driver=DriverInfo("Flask-PyMongo", "3.0.1"))``)."""
from __future__ import annotations

from collections import namedtuple
from typing import Optional


class DriverInfo(namedtuple("DriverInfo", ["name", "version", "platform"])):
    """Info about a library wrapping the driver: ``name``, ``version`` and ``platform``
    (strings or None, without the ``|`` that joins them to the driver's own)."""

    def __new__(cls, name: str, version: Optional[str] = None,
                platform: Optional[str] = None) -> DriverInfo:
        self = super().__new__(cls, name, version, platform)
        for key, value in self._asdict().items():
            if value is not None and not isinstance(value, str):
                raise TypeError(f"Wrong type for DriverInfo {key} option, value must be an "
                                f"instance of str, not {type(value)}")
            if value and "|" in value:
                raise ValueError(f"DriverInfo {key} must not contain the '|' delimiter")
        return self
