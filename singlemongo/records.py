"""A small stand-in for ``dataclasses``: frozen (or mutable) record classes.

Why not ``dataclasses``: it builds every method with ``exec`` and imports ``inspect``, which
cost 13 ms plus about 1.5 ms per class at import time, over 70 ms for this package: most of a
one-off query's cost. These records are made in microseconds; instances are built by one
generic ``__init__``. Same spelling: ``@dataclass(frozen=True)``, ``field(...)``, ``replace``.

``Constants`` stands in for ``enum.Enum`` where an import-time class is on a one-off's path:
creating an Enum class costs ten times a plain class (150 us for ten members).
"""

import sys
from typing import Any

if sys.version_info >= (3, 11):
    from typing import dataclass_transform  # bson imports typing already: no cost
else:  # Python 3.10 runs without it; type checkers know it from 3.11 on
    def dataclass_transform(**_kwargs):
        return lambda decorator: decorator

_MISSING = object()


class FrozenInstanceError(AttributeError):
    pass


class Field:
    __slots__ = ("default", "default_factory", "repr", "name")

    def __init__(self, default=_MISSING, default_factory=None, repr=True):
        self.default, self.default_factory, self.repr = default, default_factory, repr


def field(default=_MISSING, default_factory=None, repr=True):
    return Field(default, default_factory, repr)


def _collect(cls):
    """The fields of record class ``cls`` in order, as name -> (default, default_factory,
    repr), and the names whose class attribute is a Field (to be removed from the class).
    Tuples, not a Field per field: a one-off makes record classes of 56 fields in all."""
    specs, placed = {}, []
    for klass in reversed(cls.__mro__):
        namespace = klass.__dict__
        if klass is not cls:
            inherited = namespace.get("_record_specs_")
            if inherited is not None:  # a record base: its fields as it collected them
                specs.update(inherited)
                continue
        annotations = namespace.get("__annotations__")
        if not annotations:
            continue
        for name in annotations:
            value = namespace.get(name, _MISSING)
            if isinstance(value, Field):
                specs[name] = (value.default, value.default_factory, value.repr)
                if klass is cls:
                    placed.append(name)
            elif value is not _MISSING or name not in specs:  # else: as a base declared it
                specs[name] = (value, None, True)
    return specs, placed


def _spec(specs):
    """What the shared ``__init__`` needs of a record class, computed once per class."""
    names = tuple(specs)
    plain, factories, required = {}, [], []
    least = 0  # the fewest positional arguments that give every required field
    for name, (default, factory, _) in specs.items():
        if factory is not None:
            factories.append((name, factory))
        elif default is _MISSING:
            required.append(name)
            least = len(plain) + len(factories) + len(required)
        else:
            plain[name] = default
    return names, frozenset(names), plain, tuple(factories), tuple(required), least


# The methods every record class shares: each reads its class's spec, so a class costs a
# tuple, not a closure per method (a one-off makes 16 record classes at import).
def _record_init(self, *args, **kwargs):
    # Filled by dict updates (a scan builds hundreds of records: a per-field Python loop cost
    # most of applying a 50-member scan's replies).
    names, known, plain, factories, required, least = type(self)._record_spec_
    if not kwargs and least <= len(args) <= len(names):  # fields in order: nothing to check
        values = self.__dict__
        if len(args) < len(names):  # the defaults first, the arguments over them
            values.update(plain)
            for name, factory in factories:
                values[name] = factory()
        values.update(zip(names, args))
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()
        return
    if args:
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}() takes {len(names)} arguments")
        positional = dict(zip(names, args))
        if kwargs:
            twice = positional.keys() & kwargs.keys()
            if twice:
                raise TypeError(f"{type(self).__name__}() got multiple values for "
                                f"argument {min(twice)!r}")
            positional.update(kwargs)
        kwargs = positional
    if not known.issuperset(kwargs):
        raise TypeError(f"{type(self).__name__}() got unexpected "
                        f"{sorted(set(kwargs) - known)}")
    for name in required:  # a loop: issubset() would build a set of the keyword names
        if name not in kwargs:
            raise TypeError(f"{type(self).__name__}() missing argument {name!r}")
    values = self.__dict__
    values.update(plain)
    for name, factory in factories:
        if name not in kwargs:
            values[name] = factory()
    values.update(kwargs)
    post = getattr(self, "__post_init__", None)
    if post is not None:
        post()


def _record_repr(self):
    return f"{type(self).__name__}(" + ", ".join(
        f"{n}={getattr(self, n)!r}" for n in type(self)._record_shown_) + ")"


def _record_values(self):
    return tuple(getattr(self, n) for n in type(self)._record_spec_[0])


def _record_eq(self, other):
    return _record_values(self) == _record_values(other) if type(other) is type(self) \
        else NotImplemented


def _record_hash(self):
    return hash(_record_values(self))


def _frozen_setattr(self, name, value):
    raise FrozenInstanceError(f"cannot assign to field {name!r} of a frozen "
                              f"{type(self).__name__}")


@dataclass_transform(field_specifiers=(field, Field))
def dataclass(cls: Any = None, *, frozen: bool = False, eq: bool = True,
              kw_only: bool = False) -> Any:
    def wrap(cls):
        # Names without double underscores: setting a dunder on a class makes Python look
        # for a slot to update (0.2 M instructions over a one-off's records).
        specs, placed = _collect(cls)
        namespace = cls.__dict__
        cls._record_specs_ = specs
        for name in placed:
            delattr(cls, name)
        cls._record_spec_ = _spec(specs)
        cls.__init__ = _record_init
        if "__repr__" not in namespace:
            cls._record_shown_ = tuple([name for name, spec in specs.items() if spec[2]])
            cls.__repr__ = _record_repr
        if eq and "__eq__" not in namespace:
            cls.__eq__ = _record_eq
            cls.__hash__ = _record_hash if frozen else None
        if frozen:
            cls.__setattr__ = _frozen_setattr
            cls.__delattr__ = _frozen_setattr
        return cls
    return wrap if cls is None else wrap(cls)


def fields(obj):
    """The record's fields, in order: a Field each, with its name."""
    out = []
    for name, (default, factory, shown) in obj._record_specs_.items():
        spec = Field(default, factory, shown)
        spec.name = name
        out.append(spec)
    return tuple(out)


def replace(obj, **changes):
    values = {name: getattr(obj, name) for name in obj._record_spec_[0]}
    values.update(changes)
    return type(obj)(**values)


class _ConstantsType(type):
    """Makes each upper-case string attribute of the class body a member (an instance)."""

    def __new__(meta, name, bases, namespace):
        cls = super().__new__(meta, name, bases, namespace)
        members = {}
        for key, value in namespace.items():
            if key.isupper() and isinstance(value, str):
                member = object.__new__(cls)
                member._name_, member._value_ = key, value
                members[key] = member
                type.__setattr__(cls, key, member)
        cls._member_map_ = members
        cls._value2member_map_ = {m._value_: m for m in members.values()}
        return cls

    def __iter__(cls):
        return iter(cls._member_map_.values())

    def __len__(cls):
        return len(cls._member_map_)

    def __call__(cls, value):
        try:
            return cls._value2member_map_[value]
        except (KeyError, TypeError):
            raise ValueError(f"{value!r} is not a valid {cls.__name__}") from None


class Constants(metaclass=_ConstantsType):
    """Enum's surface for a set of string constants: members by name (``Kind.A``), by value
    (``Kind("a")``), in order (iteration), with ``name`` and ``value``; singletons through
    copy and pickle."""

    __slots__ = ("_name_", "_value_")

    @property
    def name(self):
        return self._name_

    @property
    def value(self):
        return self._value_

    def __repr__(self):
        return f"<{type(self).__name__}.{self._name_}: {self._value_!r}>"

    def __reduce__(self):
        return type(self), (self._value_,)
