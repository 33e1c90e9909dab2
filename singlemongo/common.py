"""Split in two (issue 61: the name said nothing): ``base_object`` (the settings the client,
database and collection inherit, and the class machinery they share) and ``arguments`` (the
checks and normal forms of their arguments). The old import path serves both modules' names."""
from typing import Any


def __getattr__(name: str) -> Any:
    from singlemongo import arguments, base_object
    for module in (base_object, arguments):
        if name in vars(module):
            return vars(module)[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
