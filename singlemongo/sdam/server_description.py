"""ServerDescription: one server as the last check saw it (SDAM, "Parsing a hello response"),
and the ServerType and TopologyType enums (SDAM, "Enums").

Each enum member is named by its SDAM spelling (``str()``, ``.value``) and also stands for
PyMongo's number for it (``pymongo.server_type.SERVER_TYPE``,
``pymongo.topology_description.TOPOLOGY_TYPE``): it compares equal to that integer and
indexes with it, so code written against PyMongo's integers reads these as it reads PyMongo's.
"""
from __future__ import annotations

import datetime

from bson.datetime_ms import EPOCH_NAIVE
from singlemongo.records import dataclass, field, replace
TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Any, Mapping, Optional, Tuple

from singlemongo.sdam.address import Address, format_address, parse_announced
from singlemongo.replies import is_ok


if TYPE_CHECKING:  # type checkers know the members as Enum members
    from enum import Enum as _Constants
else:
    from singlemongo.records import Constants as _Constants


class _PyMongoNumbered(_Constants):
    """An SDAM enum whose members also are PyMongo's integers."""

    __slots__ = ()

    def __str__(self):
        return self.value

    def __index__(self):
        return self._numbers()[self.value]

    __int__ = __index__

    def __eq__(self, other):
        if isinstance(other, int) and not isinstance(other, bool):
            return self.__index__() == other
        return self is other

    # By identity, in C: a member is its own only equal (an int equal to it hashes apart, as
    # before), and SDAM looks members up in tables and sets several times a server.
    __hash__ = object.__hash__

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


# The weight of a new sample in the average round trip time (server selection,
# "Calculation of Average Round Trip Times").
RTT_ALPHA = 0.2

def average_rtt(previous, sample):
    """Exponentially weighted moving average (server selection, alpha 0.2)."""
    if previous is None:
        return sample
    return RTT_ALPHA * sample + (1 - RTT_ALPHA) * previous


def compare_topology_version(current, new):
    """-1 if ``current`` is older than ``new`` (or either is unknown), 0 if equal, 1 if newer."""
    if not current or not new:
        return -1
    if current.get("processId") != new.get("processId"):
        return -1
    c1, c2 = current.get("counter"), new.get("counter")
    return 0 if c1 == c2 else (-1 if c1 < c2 else 1)


def _server_type(hello, load_balanced):
    if not is_ok(hello):
        return ServerType.UNKNOWN
    if load_balanced:
        return ServerType.LOAD_BALANCER
    if hello.get("isreplicaset"):
        return ServerType.RS_GHOST
    if hello.get("msg") == "isdbgrid":
        return ServerType.MONGOS
    if hello.get("setName") is None:
        return ServerType.STANDALONE
    primary = hello.get("isWritablePrimary", hello.get("ismaster"))
    if primary:
        return ServerType.RS_PRIMARY
    if hello.get("hidden"):
        return ServerType.RS_OTHER
    if hello.get("secondary"):
        return ServerType.RS_SECONDARY
    if hello.get("arbiterOnly"):
        return ServerType.RS_ARBITER
    return ServerType.RS_OTHER


_INT_FIELDS = ("minWireVersion", "maxWireVersion", "setVersion", "logicalSessionTimeoutMinutes")
# Size limits a connection obeys: positive integers, or the server is not to be trusted.
_LIMIT_FIELDS = ("maxBsonObjectSize", "maxMessageSizeBytes", "maxWriteBatchSize")
_STR_FIELDS = ("setName", "me", "primary", "msg")
_LIST_FIELDS = ("hosts", "passives", "arbiters")
MAX_MEMBERS = 50  # MongoDB's limit on replica set members


def _shown(value, limit=120):
    """A server's value in an error, at most ``limit`` characters of its repr: a hostile
    reply's megabytes never reach a message."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _check_types(hello):
    """Reject field types the SDAM rules cannot compare, naming the field."""
    if not isinstance(hello, dict):
        raise TypeError(f"the reply is a {type(hello).__name__}, not a document")
    # type() first: a scan checks every member's reply, and the values are exact ints and
    # strs (an int subclass still takes the general test).
    get = hello.get
    for name in _INT_FIELDS:
        value = get(name)
        if value is not None and type(value) is not int and (
                isinstance(value, bool) or not isinstance(value, int)):
            raise TypeError(f"{name} must be an integer, not {_shown(value)}")
    for name in _LIMIT_FIELDS:
        value = get(name)
        if value is not None and (type(value) is not int and (
                isinstance(value, bool) or not isinstance(value, int)) or value <= 0):
            raise TypeError(f"{name} must be a positive integer, not {_shown(value)}")
    for name in _STR_FIELDS:
        value = get(name)
        if value is not None and type(value) is not str and not isinstance(value, str):
            raise TypeError(f"{name} must be a string, not {_shown(value)}")
    announced = 0
    for name in _LIST_FIELDS:  # their entries' types: where they are read (_addresses)
        value = get(name)
        if value is not None:
            if not isinstance(value, list):
                raise TypeError(f"{name} must be a list of host strings")
            announced += len(value)
    if announced > MAX_MEMBERS:
        raise TypeError(f"it announces {announced} hosts; a replica set has at most "
                        f"{MAX_MEMBERS} members")
    tags = hello.get("tags")
    if tags is not None and (not isinstance(tags, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in tags.items())):
        raise TypeError("tags must map strings to strings")
    election_id = hello.get("electionId")
    if election_id is not None and type(election_id).__name__ != "ObjectId":
        raise TypeError(f"electionId must be an ObjectId, not {election_id!r}")
    tv = hello.get("topologyVersion")
    if tv is not None and (not isinstance(tv, dict) or type(tv.get("processId")).__name__
                           != "ObjectId" or not isinstance(tv.get("counter"), int)):
        raise TypeError("topologyVersion must be {processId: ObjectId, counter: int}")
    last_write = hello.get("lastWrite")
    if last_write is not None and not isinstance(last_write, dict):
        raise TypeError("lastWrite must be a document")


_LISTS: dict = {}  # a hosts list -> (addresses, dropped): every member announces the same one
_LISTS_LIMIT = 256
# The latest list read and its (addresses, dropped), one tuple (rebound whole: a thread
# reads both halves of the same). Compared as a list, before the table: equal strings
# compare in C without the hashing a table key needs, and a list equal to one already read
# holds only strings (a value of another type never equals a string).
_last_list: tuple = (None, None)


def _all_strings(values):
    # The types first, in C: a 50-member scan's replies hold 2,500 host strings.
    return set(map(type, values)) <= {str} or all(isinstance(v, str) for v in values)


def _addresses(values, dropped, name):
    """The valid announced addresses of the reply's list ``name``; each invalid one is left
    out, and said in ``dropped`` (one bad entry must not make the server unusable), but an
    entry that is not a string makes the reply invalid (TypeError). Each distinct list is
    read once: the replies of an n-member scan hold n copies of one list, compared once."""
    global _last_list
    if not values:
        return ()
    last = _last_list
    if values == last[0]:  # equal to a list of strings: strings
        dropped.extend(last[1][1])
        return last[1][0]
    if not _all_strings(values):
        raise TypeError(f"{name} must be a list of host strings")
    key = tuple(values)
    known = _LISTS.get(key)
    if known is None:
        addresses, bad = [], []
        for value in values:
            address = _announced(value, bad)
            if address is not None:
                addresses.append(address)
        if len(_LISTS) >= _LISTS_LIMIT:
            _LISTS.clear()
        known = _LISTS[key] = (tuple(addresses), tuple(bad))
    _last_list = (list(values), known)
    dropped.extend(known[1])
    return known[0]


def _announced(value, dropped):
    try:
        return parse_announced(value)
    except ValueError as exc:
        dropped.append(str(exc))
        return None


def _millis(value):
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:  # a hello's, decoded as PyMongo decodes one: naive UTC
            # By the difference's fields, not replace(tzinfo=...): a fifth of the calls
            delta = value - EPOCH_NAIVE
            return (delta.days * 86400 + delta.seconds) * 1000.0 + delta.microseconds / 1000.0
        return value.timestamp() * 1000.0
    if isinstance(value, dict) and "$numberLong" in value:
        return float(value["$numberLong"])
    return float(value) if value is not None else None


# Fields compared for "Server Description Equality".
_EQUALITY_FIELDS = ("address", "server_type", "error", "min_wire_version", "max_wire_version",
                    "me", "hosts", "passives", "arbiters", "tags", "set_name", "election_id",
                    "set_version", "primary", "logical_session_timeout_minutes",
                    "topology_version", "iscryptd")


_WRITABLE = frozenset({ServerType.RS_PRIMARY, ServerType.STANDALONE, ServerType.MONGOS,
                       ServerType.LOAD_BALANCER})


@dataclass(frozen=True, eq=False)
class ServerDescription:
    address: Address
    server_type: ServerType = ServerType.UNKNOWN
    error: Optional[str] = None
    round_trip_time: Optional[float] = None  # seconds, moving average
    last_write_date: Optional[float] = None  # milliseconds since the epoch
    last_update_time: Optional[float] = None  # monotonic seconds of the check
    min_wire_version: Optional[int] = None  # null until a hello reports it
    max_wire_version: Optional[int] = None
    me: Optional[Address] = None
    hosts: Tuple[Address, ...] = ()
    passives: Tuple[Address, ...] = ()
    arbiters: Tuple[Address, ...] = ()
    tags: Mapping[str, str] = field(default_factory=dict)
    set_name: Optional[str] = None
    election_id: Any = None
    set_version: Optional[int] = None
    primary: Optional[Address] = None
    logical_session_timeout_minutes: Optional[int] = None
    topology_version: Optional[Mapping[str, Any]] = None
    iscryptd: Optional[bool] = None
    service_id: Any = None
    error_is_network: bool = False
    hello: Optional[Mapping[str, Any]] = field(default=None, repr=False)
    # Invalid entries of the reply's hosts, passives, arbiters, me or primary, left out.
    dropped_hosts: Tuple[str, ...] = field(default=(), repr=False)

    @classmethod
    def from_hello(cls, address, hello, round_trip_time=None, now=None, load_balanced=False):
        """Build from a hello or legacy hello reply; an empty reply stands for a failed check.
        A reply with fields of the wrong type gives an Unknown description saying which."""
        try:
            _check_types(hello)
            return cls._from_hello(address, hello, round_trip_time, now, load_balanced)
        except (TypeError, ValueError, AttributeError) as exc:
            return cls(address, error=f"invalid hello reply: {exc}", last_update_time=now)

    @classmethod
    def _from_hello(cls, address, hello, round_trip_time, now, load_balanced):
        server_type = _server_type(hello, load_balanced)
        if server_type is ServerType.UNKNOWN:
            return cls(address, error=hello.get("errmsg") or "hello failed",
                       topology_version=hello.get("topologyVersion"), last_update_time=now)
        last_write = hello.get("lastWrite") or {}
        me, primary, dropped = hello.get("me"), hello.get("primary"), []
        get = hello.get
        # Every field, in the class's order (each member of a scan makes one).
        sd = (cls if cls is not ServerDescription else _Unsealed)(
            address, server_type, None, round_trip_time,  # address .. round_trip_time
            _millis(last_write.get("lastWriteDate")), now,  # last_write_date, last_update_time
            get("minWireVersion", 0), get("maxWireVersion", 0),
            _announced(me, dropped) if me else None,  # me
            _addresses(get("hosts"), dropped, "hosts"),
            _addresses(get("passives"), dropped, "passives"),
            _addresses(get("arbiters"), dropped, "arbiters"),
            dict(get("tags") or {}), get("setName"), get("electionId"),  # tags .. election_id
            get("setVersion"), _announced(primary, dropped) if primary else None,
            get("logicalSessionTimeoutMinutes"), get("topologyVersion"),
            get("iscryptd"), get("serviceId"), False, hello,  # .. error_is_network, hello
            tuple(dropped))
        if cls is ServerDescription:
            _seal(sd, "__class__", cls)
        return sd

    @classmethod
    def unknown(cls, address, error=None, topology_version=None, network=False):
        """An Unknown description of ``address`` (each server of a new description is one)."""
        if cls is not ServerDescription:
            return cls(address, error=error, topology_version=topology_version,
                       error_is_network=network)
        sd = _Unsealed(address, ServerType.UNKNOWN, error)
        sd.topology_version, sd.error_is_network = topology_version, network
        _seal(sd, "__class__", ServerDescription)
        return sd

    def with_type(self, server_type):
        return replace(self, server_type=server_type)

    @property
    def is_known(self):
        return self.server_type not in (ServerType.UNKNOWN, ServerType.POSSIBLE_PRIMARY)

    @property
    def is_data_bearing(self):
        return self.server_type in DATA_BEARING

    @property
    def all_hosts(self):
        return self.hosts + self.passives + self.arbiters

    @property
    def address_text(self):
        return format_address(self.address)

    # PyMongo's read accessors (pymongo.server_description), for code that inspects them.

    @property
    def server_type_name(self):
        return self.server_type.value

    @property
    def is_writable(self):
        return self.server_type in _WRITABLE

    @property
    def is_readable(self):
        return self.server_type is ServerType.RS_SECONDARY or self.is_writable

    @property
    def is_server_type_known(self):
        return self.server_type is not ServerType.UNKNOWN

    @property
    def replica_set_name(self):
        return self.set_name

    def __eq__(self, other):
        if not isinstance(other, ServerDescription):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in _EQUALITY_FIELDS)

    def __hash__(self):
        return hash((self.address, self.server_type))


class _Unsealed:
    """A ServerDescription while it is made: its fields stored by attribute (stores Python
    specializes: a third of the generic record __init__'s instructions), then sealed, its
    class set to ServerDescription (``_seal``). A plain class of the same layout, not a
    subclass: the record's class attributes would keep 3.12 from specializing the stores.
    Each member of a scan makes two descriptions. Its parameters are the record's fields
    in order (a test compares them); ``tags`` None is a new dict."""

    def __init__(self, address, server_type=ServerType.UNKNOWN, error=None,
                 round_trip_time=None, last_write_date=None, last_update_time=None,
                 min_wire_version=None, max_wire_version=None, me=None, hosts=(),
                 passives=(), arbiters=(), tags=None, set_name=None, election_id=None,
                 set_version=None, primary=None, logical_session_timeout_minutes=None,
                 topology_version=None, iscryptd=None, service_id=None,
                 error_is_network=False, hello=None, dropped_hosts=()):
        self.address = address
        self.server_type = server_type
        self.error = error
        self.round_trip_time = round_trip_time
        self.last_write_date = last_write_date
        self.last_update_time = last_update_time
        self.min_wire_version = min_wire_version
        self.max_wire_version = max_wire_version
        self.me = me
        self.hosts = hosts
        self.passives = passives
        self.arbiters = arbiters
        self.tags = {} if tags is None else tags
        self.set_name = set_name
        self.election_id = election_id
        self.set_version = set_version
        self.primary = primary
        self.logical_session_timeout_minutes = logical_session_timeout_minutes
        self.topology_version = topology_version
        self.iscryptd = iscryptd
        self.service_id = service_id
        self.error_is_network = error_is_network
        self.hello = hello
        self.dropped_hosts = dropped_hosts


# Makes an _Unsealed a ServerDescription (the record's own __setattr__ refuses every field).
_seal = object.__setattr__

