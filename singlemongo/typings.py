"""Type aliases and type variables of the public API (as ``pymongo.typings``)."""
from __future__ import annotations

from typing import Any, Mapping, MutableMapping, Sequence, Tuple, TypeVar, Union

_DocumentType = TypeVar("_DocumentType", bound=Mapping[str, Any])
_DocumentTypeArg = TypeVar("_DocumentTypeArg", bound=Mapping[str, Any])
_DocumentOut = MutableMapping[str, Any]
_Pipeline = Sequence[Mapping[str, Any]]
# A sort or index key: "field", [("field", 1), ...] or {"field": 1, ...}.
_Direction = Union[int, str, Mapping[str, Any]]
_IndexList = Union[Sequence[Tuple[str, _Direction]], Mapping[str, Any]]
_IndexKeyHint = Union[str, _IndexList]
_Address = Tuple[str, Union[int, None]]

__all__ = ["_DocumentType", "_DocumentTypeArg", "_DocumentOut", "_Pipeline", "_IndexList",
           "_IndexKeyHint", "_Address"]
