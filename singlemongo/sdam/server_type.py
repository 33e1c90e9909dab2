"""ServerType and TopologyType (SDAM, "Enums")."""
import enum


class ServerType(enum.Enum):
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

    def __str__(self):
        return self.value


class TopologyType(enum.Enum):
    SINGLE = "Single"
    REPLICA_SET_NO_PRIMARY = "ReplicaSetNoPrimary"
    REPLICA_SET_WITH_PRIMARY = "ReplicaSetWithPrimary"
    SHARDED = "Sharded"
    LOAD_BALANCED = "LoadBalanced"
    UNKNOWN = "Unknown"

    def __str__(self):
        return self.value


# "Data-Bearing Server Type".
DATA_BEARING = frozenset({ServerType.STANDALONE, ServerType.MONGOS, ServerType.RS_PRIMARY,
                          ServerType.RS_SECONDARY, ServerType.LOAD_BALANCER})
RS_MEMBER_NON_PRIMARY = frozenset({ServerType.RS_SECONDARY, ServerType.RS_ARBITER,
                                   ServerType.RS_OTHER})
