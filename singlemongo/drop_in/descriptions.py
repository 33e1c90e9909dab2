"""``pymongo.server_type``, ``pymongo.server_description`` and ``pymongo.topology_description``:
PyMongo's enumerations (``SERVER_TYPE.RSPrimary``, ``TOPOLOGY_TYPE.Sharded``, with its numbers)
and singlemongo's description records, which ``MongoClient.topology_description`` returns."""
from __future__ import annotations

from collections import namedtuple

from singlemongo.sdam.server_description import ServerDescription  # noqa: F401
from singlemongo.sdam.topology_description import TopologyDescription  # noqa: F401

_SERVER_TYPES = ("Unknown", "Mongos", "RSPrimary", "RSSecondary", "RSArbiter", "RSOther",
                 "RSGhost", "Standalone", "LoadBalancer")
_TOPOLOGY_TYPES = ("Single", "ReplicaSetNoPrimary", "ReplicaSetWithPrimary", "Sharded",
                   "Unknown", "LoadBalanced")

SERVER_TYPE = namedtuple("_ServerType", _SERVER_TYPES)(*range(len(_SERVER_TYPES)))
TOPOLOGY_TYPE = namedtuple("_TopologyType", _TOPOLOGY_TYPES)(*range(len(_TOPOLOGY_TYPES)))
