"""Type aliases and type variables of the public API (as ``pymongo.typings``).

The aliases exist for type checkers only: at run time they are ``object`` (annotations are
never evaluated here), which keeps them out of a one-off query's import time."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional, TypeVar

from singlemongo.base_object import _DocumentType, _DocumentTypeArg

if TYPE_CHECKING:
    from typing import MutableMapping, Sequence, Tuple, Union

    _DocumentOut = MutableMapping[str, Any]
    _Pipeline = Sequence[Mapping[str, Any]]
    # A sort or index key: "field", [("field", 1), ...] or {"field": 1, ...}.
    _Direction = Union[int, str, Mapping[str, Any]]
    _IndexList = Union[Sequence[Tuple[str, _Direction]], Mapping[str, Any]]
    _IndexKeyHint = Union[str, _IndexList]
    _Address = Tuple[str, Union[int, None]]
else:
    _DocumentOut = _Pipeline = _Direction = _IndexList = _IndexKeyHint = _Address = object

# A $clusterTime document (PyMongo's alias).
ClusterTime = Mapping[str, Any]

__all__ = ["ClusterTime", "_DocumentType", "_DocumentTypeArg", "_DocumentOut", "_Pipeline",
           "_IndexList", "_IndexKeyHint", "_Address", "strip_optional"]

_T = TypeVar("_T")


def strip_optional(elem: Optional[_T]) -> _T:
    """``elem``, which must not be None, typed without Optional (PyMongo's helper)."""
    assert elem is not None
    return elem
