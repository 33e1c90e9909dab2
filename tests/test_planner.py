"""The scanner's pure planner: scan order and cooldown, row by row."""
from singlemongo.engine.scanner import in_cooldown, plan_next_check
from singlemongo.sdam import ServerDescription, ServerType as S, TopologyDescription, TopologyType


def td(*servers):
    return TopologyDescription.from_servers(TopologyType.REPLICA_SET_NO_PRIMARY, servers, "rs")


def sd(name, server_type=S.UNKNOWN, checked=None, network=False):
    return ServerDescription((name, 1), server_type, last_update_time=checked,
                             error_is_network=network, max_wire_version=21)


def test_primary_first_then_possible_primary():
    t = td(sd("a", S.RS_SECONDARY, 1.0), sd("b", S.POSSIBLE_PRIMARY), sd("c", S.RS_PRIMARY, 5.0))
    assert plan_next_check(t, set(), 10.0) == ("c", 1)
    assert plan_next_check(t, {("c", 1)}, 10.0) == ("b", 1)


def test_known_servers_oldest_first_before_unknown():
    t = td(sd("a", S.RS_SECONDARY, 3.0), sd("b", S.RS_ARBITER, 2.0), sd("c"), sd("g", S.RS_GHOST))
    assert plan_next_check(t, set(), 10.0) == ("b", 1)
    assert plan_next_check(t, {("b", 1)}, 10.0) == ("a", 1)
    assert plan_next_check(t, {("a", 1), ("b", 1)}, 10.0) in (("c", 1), ("g", 1))


def test_ties_are_broken_by_the_chooser():
    t = td(sd("a"), sd("b"), sd("c"))
    assert plan_next_check(t, set(), 0.0, choose=lambda xs: xs[-1]) == ("c", 1)


def test_cooldown_skips_unknowns_that_failed_on_the_network_for_5_s():
    down = sd("a", checked=10.0, network=True)
    assert in_cooldown(down, 14.9) and not in_cooldown(down, 15.0)
    assert not in_cooldown(sd("b", checked=10.0), 11.0)  # not a network failure
    t = td(down)
    assert plan_next_check(t, set(), 12.0) is None
    assert plan_next_check(t, set(), 15.0) == ("a", 1)


def test_scan_ends_on_checked_set_even_if_time_is_frozen():
    t = td(sd("a", S.RS_SECONDARY, 10.0), sd("b", S.RS_SECONDARY, 10.0))
    assert plan_next_check(t, {("a", 1), ("b", 1)}, 10.0) is None
