"""ServerType and TopologyType (SDAM, "Enums").

Each member is named by its SDAM spelling (``str()``, ``.value``) and also stands for
PyMongo's number for it (``pymongo.server_type.SERVER_TYPE``,
``pymongo.topology_description.TOPOLOGY_TYPE``): it compares equal to that integer and
indexes with it, so code written against PyMongo's integers reads these as it reads PyMongo's.
"""
import enum


class _PyMongoNumbered(enum.Enum):
    """An SDAM enum whose members also are PyMongo's integers."""

    def __str__(self):
        return self.value

    def __index__(self):
        return self._numbers()[self.value]

    __int__ = __index__

    def __eq__(self, other):
        if isinstance(other, int) and not isinstance(other, bool):
            return self.__index__() == other
        return self is other

    def __hash__(self):
        return hash(self._name_)

    @classmethod
    def _numbers(cls):
        raise NotImplementedError


class ServerType(_PyMongoNumbered):
    UNKNOWN = "Unknown"
    STANDALONE = "Standalone"
    MONGOS = "Mongos"
    POSSIBLE_PRIMARY = "PossiblePrimary"
    RS_PRIMARY = "RSPrimary"
    RS_SECONDARY = "RSSecondary"
    RS_ARBITER = "RSArbiter"
    RS_OTHER = "RSOther"
    RS_GHOST = "RSGhost"
    LOAD_BALANCER = "LoadBalancer"

    @classmethod
    def _numbers(cls):
        return _SERVER_NUMBERS


class TopologyType(_PyMongoNumbered):
    SINGLE = "Single"
    REPLICA_SET_NO_PRIMARY = "ReplicaSetNoPrimary"
    REPLICA_SET_WITH_PRIMARY = "ReplicaSetWithPrimary"
    SHARDED = "Sharded"
    LOAD_BALANCED = "LoadBalanced"
    UNKNOWN = "Unknown"

    @classmethod
    def _numbers(cls):
        return _TOPOLOGY_NUMBERS


# PyMongo's numbering (PossiblePrimary, which PyMongo does not have, comes after its types).
_SERVER_NUMBERS = {name: number for number, name in enumerate(
    ("Unknown", "Mongos", "RSPrimary", "RSSecondary", "RSArbiter", "RSOther", "RSGhost",
     "Standalone", "LoadBalancer", "PossiblePrimary"))}
_TOPOLOGY_NUMBERS = {name: number for number, name in enumerate(
    ("Single", "ReplicaSetNoPrimary", "ReplicaSetWithPrimary", "Sharded", "Unknown",
     "LoadBalanced"))}

# "Data-Bearing Server Type".
DATA_BEARING = frozenset({ServerType.STANDALONE, ServerType.MONGOS, ServerType.RS_PRIMARY,
                          ServerType.RS_SECONDARY, ServerType.LOAD_BALANCER})
RS_MEMBER_NON_PRIMARY = frozenset({ServerType.RS_SECONDARY, ServerType.RS_ARBITER,
                                   ServerType.RS_OTHER})
