"""SDAM stays linear in the member count (issue 20): applying one scan's hellos parses each
announced host once and walks the servers for derived facts only when they are read."""
from bson import ObjectId

from singlemongo.sdam import address, topology_description
from singlemongo.sdam.address import parse_announced
from singlemongo.sdam.server_description import ServerDescription
from singlemongo.sdam.server_description import ServerType, TopologyType
from singlemongo.sdam.topology_description import TopologyDescription

N = 50
HOSTS = [f"h{i}.example.com:27017" for i in range(N)]


def _hello(i):
    reply = {"ok": 1, "isWritablePrimary": i == 0, "secondary": i != 0, "setName": "rs",
             "hosts": HOSTS, "me": HOSTS[i], "primary": HOSTS[0], "maxWireVersion": 21,
             "logicalSessionTimeoutMinutes": 30, "setVersion": 1}
    if i == 0:
        reply["electionId"] = ObjectId("000000000000000000000001")
    return reply


def _scan():
    td = TopologyDescription.initial([parse_announced(HOSTS[0])], "rs")
    for i in range(N):
        td = td.update(ServerDescription.from_hello(parse_announced(HOSTS[i]), _hello(i), 0.001))
    return td


def _counting(monkeypatch, module, name):
    calls = []
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *a: calls.append(a) or real(*a))
    return calls


def test_each_announced_host_is_parsed_once_per_scan(monkeypatch):
    """Rule: the hosts every member announces are validated once each, not once per reply.
    Before: 50 replies x 50 hosts = 2,500 validations, most of a 50-member scan's 14 ms."""
    monkeypatch.setattr(address, "_ANNOUNCED", {})
    parses = _counting(monkeypatch, address, "_parse_announced")
    td = _scan()
    assert td.topology_type is TopologyType.REPLICA_SET_WITH_PRIMARY and len(td.servers) == N
    assert len(parses) == N


def test_each_announced_list_is_read_once_per_scan(monkeypatch):
    """Rule: the hosts list every member announces is read once, not once per reply (a list
    of n hosts read n times is n squared steps, even with each host's parse kept).
    Before: 50 replies x 50 hosts = 2,500 lookups."""
    from singlemongo.sdam import server_description
    monkeypatch.setattr(server_description, "_LISTS", {})
    monkeypatch.setattr(server_description, "_last_list", (None, None))
    lookups = _counting(monkeypatch, server_description, "_announced")
    td = _scan()
    assert td.topology_type is TopologyType.REPLICA_SET_WITH_PRIMARY and len(td.servers) == N
    # the list once; each reply's own "me" and "primary"
    assert len(lookups) == N + 2 * N


def test_an_invalid_announced_host_is_dropped_from_every_reply_that_lists_it(monkeypatch):
    """Rule: a list read once still says its bad entries for every reply that holds it."""
    from singlemongo.sdam import server_description
    monkeypatch.setattr(server_description, "_LISTS", {})
    hello = dict(_hello(1), hosts=HOSTS[:2] + ["bad host:1"])
    for _ in range(2):
        sd = ServerDescription.from_hello(parse_announced(HOSTS[1]), hello, 0.001)
        assert sd.hosts == tuple(parse_announced(h) for h in HOSTS[:2])
        assert len(sd.dropped_hosts) == 1 and "bad host" in sd.dropped_hosts[0]


def test_derived_facts_are_computed_when_read_not_at_every_update(monkeypatch):
    """Rule: wire compatibility and the session timeout walk all servers once, when read.
    Before: every one of a scan's 50 updates walked all 50 servers for both."""
    walks = _counting(monkeypatch, topology_description, "_compatibility")
    td = _scan()
    assert walks == []
    assert td.compatible and td.logical_session_timeout_minutes == 30
    assert td.compatible and len(walks) == 1


def test_a_list_like_the_last_one_read_but_for_a_non_string_is_refused():
    """Rule: a hosts list equal to the last one read skips the per-entry type test (issue
    59), so only an equal list may skip it: one that differs by a value of another type
    (5, b"h:1", a document) still makes the server Unknown, naming the field."""
    good = _hello(1)
    ServerDescription.from_hello(parse_announced(HOSTS[1]), good, 0.001)
    for odd in (5, HOSTS[0].encode(), {"h": HOSTS[0]}):
        hostile = dict(good, hosts=[odd] + good["hosts"][1:])
        sd = ServerDescription.from_hello(parse_announced(HOSTS[1]), hostile, 0.001)
        assert sd.server_type is ServerType.UNKNOWN
        assert "hosts must be a list of host strings" in sd.error


class _Text(str):
    """A str subclass: parse_announced's fast path takes exact strs only, so this one always
    goes through the whole rules."""


_EDGES = ["a.:1", ".a:1", "a..b:1", "a:0", "a:65535", "a:65536", "a:99999", "a:027017", "a:",
          "A-B_c.Example:27017", "x" * 63 + ":1", "x" * 64 + ":1", "é:1", "a b:1", "a:²",
          "a:１", "1.2.3.4:5", "[::1]:1", "a/b:1", "a.sock", "host", ":1", "a:b:1", "a@b:1"]


def test_the_fast_host_rule_agrees_with_the_whole_rules():
    """Rule: the fast path for an everyday 'name:port' accepts exactly what the whole host
    rules accept, and gives the same address; anything else is left to them (edge cases,
    then 20,000 seeded random texts)."""
    import random
    rng = random.Random(20261207)
    alphabet = "abcXYZ019.-_:[]/%@ é²\t"
    texts = _EDGES + ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
                      + (f":{rng.randint(-2, 70000)}" if rng.random() < 0.6 else "")
                      for _ in range(20000)]

    def outcome(text):
        try:
            return address._parse_announced(text)
        except ValueError as exc:
            return str(exc)

    fast = 0
    for text in texts:
        assert outcome(text) == outcome(_Text(text)), text
        fast += isinstance(outcome(text), tuple)
    assert fast > 1000  # the comparison covered accepted texts, not only refusals


def test_a_description_made_fast_is_the_record_made_by_name():
    """Rule: the descriptions a scan makes by the fast path (from_hello, unknown) are
    ServerDescriptions field for field as the record's own constructor makes them, and as
    frozen; the fast maker's parameters are the record's fields in order, with its
    defaults."""
    import inspect
    from singlemongo.records import FrozenInstanceError, fields
    from singlemongo.sdam.server_description import _Unsealed
    names = [f.name for f in fields(ServerDescription(("a", 1)))]
    parameters = list(inspect.signature(_Unsealed).parameters.values())
    assert [p.name for p in parameters] == names
    for p, f in zip(parameters, fields(ServerDescription(("a", 1)))):
        assert p.default == (f.default if f.default_factory is None else None) or \
            p.name == "address"
    class ByName(ServerDescription):
        """from_hello and unknown make a subclass by the record's own constructor."""

    def both(make):
        return make(ServerDescription), make(ByName)

    made = [both(lambda cls: cls.unknown(("a", 1))),
            both(lambda cls: cls.unknown(("a", 1), "down", {"counter": 1}, True))]
    made += [both(lambda cls: cls.from_hello(parse_announced(HOSTS[i]), dict(
        _hello(i), tags={"dc": "x"}), 0.001, 5.0)) for i in (0, 1)]
    for sd, by_name in made:
        assert type(sd) is ServerDescription and type(by_name) is ByName
        assert [getattr(sd, n) for n in names] == [getattr(by_name, n) for n in names]
        try:
            sd.error = "changed"
        except FrozenInstanceError:
            pass
        else:
            raise AssertionError("a description made fast is not frozen")
    assert made[0][0].tags == {} and made[0][0].tags is not made[1][0].tags
    assert made[1][0].error_is_network and made[1][0].topology_version == {"counter": 1}
    assert made[2][0].server_type is ServerType.RS_PRIMARY and made[3][0].tags == {"dc": "x"}


def test_an_updated_description_is_the_record_made_by_name():
    """Rule: the working copy an update seals into the new TopologyDescription has the
    record's fields in order, and the description it becomes is frozen, reads its servers
    through a read-only view, and equals the one the record's constructor makes."""
    import inspect
    from types import MappingProxyType
    from singlemongo.records import FrozenInstanceError, fields
    td = _scan()
    names = [f.name for f in fields(td)]
    assert list(inspect.signature(topology_description.Working).parameters) == names
    assert type(td) is TopologyDescription and type(td.servers) is MappingProxyType
    assert td == TopologyDescription(*(getattr(td, n) for n in names))
    try:
        td.set_name = "other"
    except FrozenInstanceError:
        pass
    else:
        raise AssertionError("an updated description is not frozen")


def test_a_seed_is_the_address_a_reply_announcing_it_is_read_as():
    """Rule: a connection string's host is the very address tuple parse_announced keeps for
    the same text, so that tables keyed by seeds find a reply's hosts by identity; with
    another default port it is its own tuple, of that port."""
    from singlemongo.options.uri import parse_uri
    hosts = parse_uri("mongodb://h1.example.com:27018,H2.example.com").hosts
    assert hosts[0].address() is parse_announced("h1.example.com:27018")
    assert hosts[1].address() is parse_announced("H2.example.com")
    assert hosts[1].address(27019) == ("h2.example.com", 27019)
