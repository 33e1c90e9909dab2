"""records.py, the stand-in for ``dataclasses``: what the driver's records rely on, each rule
checked against ``dataclasses`` itself where they should agree."""
import dataclasses

import pytest

from singlemongo.records import FrozenInstanceError, dataclass, field, fields, replace


@dataclass(frozen=True)
class Point:
    x: int
    y: int = 0
    tags: tuple = field(default_factory=tuple, repr=False)


@dataclass(frozen=True)
class Labelled(Point):
    label: str = "p"


@dataclasses.dataclass(frozen=True)
class StdPoint:
    x: int
    y: int = 0
    tags: tuple = dataclasses.field(default_factory=tuple, repr=False)


def test_init_repr_eq_and_hash_agree_with_dataclasses():
    """Rule: positional and keyword arguments, defaults, factories, repr=False, equality
    and hashing behave as dataclasses' do."""
    for args, kwargs in (((1,), {}), ((1, 2), {}), ((), {"x": 1, "tags": ("a",)})):
        ours, std = Point(*args, **kwargs), StdPoint(*args, **kwargs)
        assert repr(ours).replace("Point", "X") == repr(std).replace("StdPoint", "X")
        assert (ours.x, ours.y, ours.tags) == (std.x, std.y, std.tags)
        assert ours == Point(*args, **kwargs) and hash(ours) == hash(Point(*args, **kwargs))
    assert Point(1) != Point(2) and Point(1) != StdPoint(1)


@pytest.mark.parametrize("make,message", [
    (lambda: Point(), "missing argument 'x'"),
    (lambda: Point(1, 2, (), 4), "takes 3 arguments"),
    (lambda: Point(1, x=2), "multiple values for argument 'x'"),
    (lambda: Point(1, z=2), "unexpected ['z']"),
])
def test_bad_arguments_name_the_problem(make, message):
    """Rule: a wrong call raises TypeError naming the argument, as a hand-written __init__."""
    with pytest.raises(TypeError, match=message.replace("[", r"\[").replace("]", r"\]")):
        make()


@dataclass
class Bag:
    name: str
    items: list = field(default_factory=list)
    size: int = 0


def test_fields_given_in_order_and_the_rest_defaulted_agree_with_by_name():
    """Rule: a record given its first fields by position (the fast path a scan's Unknown
    descriptions take) gets the same values as by name, a fresh factory value each, and the
    defaults a subclass inherits."""
    first, second = Bag("a"), Bag("b", None)
    assert (first.name, first.items, first.size) == ("a", [], 0)
    assert first == Bag(name="a") and second == Bag(name="b", items=None)
    assert Bag("c").items is not Bag("c").items
    assert (Labelled(1, 2).tags, Labelled(1, 2).label) == ((), "p")


def test_frozen_records_refuse_assignment_and_replace_makes_a_copy():
    point = Point(1, 2)
    with pytest.raises(FrozenInstanceError, match="field 'x' of a frozen Point"):
        point.x = 3
    assert replace(point, y=5) == Point(1, 5) and point.y == 2


def test_a_record_subclass_inherits_its_bases_fields_with_their_defaults():
    """Rule: a record based on a record keeps the base's defaults and factories. Before, the
    base's field() defaults were gone from its namespace and the subclass took them for
    required arguments (``Labelled(1)``: missing argument 'tags')."""
    labelled = Labelled(1, label="q")
    assert (labelled.x, labelled.y, labelled.tags, labelled.label) == (1, 0, (), "q")
    assert [f.name for f in fields(labelled)] == ["x", "y", "tags", "label"]


def test_record_classes_share_their_methods():
    """Rule (issue 20): a record class costs a tuple of its fields, not a closure per method:
    the one-off makes 16 of them at import."""
    assert Point.__init__ is Labelled.__init__
    assert Point.__repr__ is Labelled.__repr__ and Point.__eq__ is Labelled.__eq__


def test_fields_agree_with_dataclasses_and_no_field_object_stays_on_the_class():
    """Rule: ``fields()`` gives each field's name, default, factory and repr flag as
    dataclasses' does (built when asked: the class keeps plain tuples), and a ``field()``
    default is not left on the class for an instance to find."""
    ours = [(f.name, f.default_factory, f.repr) for f in fields(Point(1))]
    std = [(f.name, None if f.default_factory is dataclasses.MISSING else f.default_factory,
            f.repr) for f in dataclasses.fields(StdPoint(1))]
    assert ours == std
    assert [f.default for f in fields(Point(1))][1] == 0
    assert "tags" not in vars(Point) and vars(Point)["y"] == 0
