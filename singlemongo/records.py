"""A small stand-in for ``dataclasses``: frozen (or mutable) record classes.

Why not ``dataclasses``: it builds every method with ``exec`` and imports ``inspect``, which
cost 13 ms plus about 1.5 ms per class at import time, over 70 ms for this package: most of a
one-off query's cost. These records are made in microseconds; instances are built by one
generic ``__init__``. Same spelling: ``@dataclass(frozen=True)``, ``field(...)``, ``replace``.
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
    specs = {}
    for klass in reversed(cls.__mro__):
        for name in klass.__dict__.get("__annotations__", {}):
            value = klass.__dict__.get(name, _MISSING)
            spec = value if isinstance(value, Field) else Field(value)
            if not isinstance(value, Field) and name in specs and value is _MISSING:
                spec = specs[name]
            spec.name = name
            specs[name] = spec
    return tuple(specs.values())


def _make_init(specs, frozen):
    names = tuple(s.name for s in specs)
    setter = object.__setattr__

    def __init__(self, *args, **kwargs):
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}() takes {len(names)} arguments")
        for spec, value in zip(specs, args):
            setter(self, spec.name, value)
        for spec in specs[len(args):]:
            if spec.name in kwargs:
                value = kwargs.pop(spec.name)
            elif spec.default_factory is not None:
                value = spec.default_factory()
            elif spec.default is not _MISSING:
                value = spec.default
            else:
                raise TypeError(f"{type(self).__name__}() missing argument {spec.name!r}")
            setter(self, spec.name, value)
        if kwargs:
            raise TypeError(f"{type(self).__name__}() got unexpected {sorted(kwargs)}")
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()
    return __init__


def _frozen_setattr(self, name, value):
    raise FrozenInstanceError(f"cannot assign to field {name!r} of a frozen "
                              f"{type(self).__name__}")


@dataclass_transform(field_specifiers=(field, Field))
def dataclass(cls: Any = None, *, frozen: bool = False, eq: bool = True,
              kw_only: bool = False) -> Any:
    def wrap(cls):
        specs = _collect(cls)
        cls.__record_fields__ = specs
        for spec in specs:
            if isinstance(cls.__dict__.get(spec.name), Field):
                delattr(cls, spec.name)
        cls.__init__ = _make_init(specs, frozen)
        shown = tuple(s.name for s in specs if s.repr)
        if "__repr__" not in cls.__dict__:
            cls.__repr__ = lambda self: f"{type(self).__name__}(" + ", ".join(
                f"{n}={getattr(self, n)!r}" for n in shown) + ")"
        if eq and "__eq__" not in cls.__dict__:
            names = tuple(s.name for s in specs)
            values = lambda self: tuple(getattr(self, n) for n in names)
            cls.__eq__ = lambda self, other: values(self) == values(other) \
                if type(other) is type(self) else NotImplemented
            cls.__hash__ = (lambda self: hash(values(self))) if frozen else None
        if frozen:
            cls.__setattr__ = _frozen_setattr
            cls.__delattr__ = _frozen_setattr
        return cls
    return wrap if cls is None else wrap(cls)


def fields(obj):
    return obj.__record_fields__


def replace(obj, **changes):
    values = {s.name: getattr(obj, s.name) for s in obj.__record_fields__}
    values.update(changes)
    return type(obj)(**values)
