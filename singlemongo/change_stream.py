"""Change streams (as ``pymongo.change_stream``): the classes exist so that code importing them
starts; ``watch()`` and making one raise NotImplementedError saying why (README, "Differences
from PyMongo")."""
from __future__ import annotations

from typing import Any, Generic

from .common import not_offered
from .typings import _DocumentType


class ChangeStream(Generic[_DocumentType]):
    """A change stream (not offered yet: making one raises NotImplementedError)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        not_offered("change streams")


class CollectionChangeStream(ChangeStream[_DocumentType]):
    """A change stream on a collection (not offered yet)."""


class DatabaseChangeStream(ChangeStream[_DocumentType]):
    """A change stream on a database (not offered yet)."""


class ClusterChangeStream(DatabaseChangeStream[_DocumentType]):
    """A change stream on a whole deployment (not offered yet)."""
