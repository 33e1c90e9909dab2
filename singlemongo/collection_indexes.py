"""A collection's index helpers (as ``pymongo.collection``): plain and Atlas Search indexes.
The work is in ``indexes.py``, loaded by the first index call, not by import."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence
from singlemongo.base_object import Generic

from singlemongo.typings import _DocumentType, _IndexKeyHint

if TYPE_CHECKING:
    from singlemongo.command_cursor import CommandCursor
    from singlemongo.operations import IndexModel


def _work() -> Any:
    """``indexes.py``, loaded by the first index call, not by import (a module function, not
    an attribute: subclasses written for PyMongo keep their own ``_indexes``, as Ming's
    in-memory Collection does)."""
    from singlemongo import indexes
    return indexes


class IndexMethods(Generic[_DocumentType]):
    """The index half of Collection (a mixin: Collection is the class users see)."""

    if TYPE_CHECKING:  # what Collection gives the methods below
        _name: str

    def create_index(self, keys: _IndexKeyHint, session: Any = None, comment: Any = None,
                     **kwargs: Any) -> str:
        """Create an index (``"a"``, ``[("a", 1), ("b", -1)]``) with PyMongo's options
        (``unique``, ``sparse``, ``name``, ``expireAfterSeconds``, ...); its name."""
        return _work().create_index(self, keys, comment, kwargs, session)

    def create_indexes(self, indexes: Sequence[IndexModel], session: Any = None,
                       comment: Any = None, **kwargs: Any) -> list[str]:
        """Create several indexes (IndexModel) in one command; their names."""
        return _work().create_indexes(self, indexes, comment, kwargs, session)

    def list_indexes(self, session: Any = None,
                     comment: Any = None) -> CommandCursor[dict[str, Any]]:
        """A cursor over the index documents (empty for a missing collection)."""
        return _work().list_indexes(self, comment, session)

    def index_information(self, session: Any = None, comment: Any = None) -> dict[str, Any]:
        """{index name: {"key": [(field, direction), ...], other options}}."""
        return _work().index_information(self, comment, session)

    def drop_index(self, index_or_name: _IndexKeyHint, session: Any = None,
                   comment: Any = None, **kwargs: Any) -> None:
        """Drop an index by name or by its key specification."""
        _work().drop_index(self, index_or_name, comment, kwargs, session)

    def drop_indexes(self, session: Any = None, comment: Any = None, **kwargs: Any) -> None:
        """Drop every index but ``_id_``."""
        _work().drop_index(self, "*", comment, kwargs, session)

    def create_search_index(self, model: Any, session: Any = None, comment: Any = None,
                            **kwargs: Any) -> str:
        """Create an Atlas Search index (a SearchIndexModel or its fields as a mapping); its
        name."""
        from singlemongo.operations import SearchIndexModel
        if not isinstance(model, SearchIndexModel):
            model = SearchIndexModel(**model)
        return _work().create_search_indexes(  # type: ignore[no-any-return]
            self, [model], comment, kwargs, session)[0]

    def create_search_indexes(self, models: list[Any], session: Any = None,
                              comment: Any = None, **kwargs: Any) -> list[str]:
        """Create several Atlas Search indexes (SearchIndexModel); their names."""
        return _work().create_search_indexes(  # type: ignore[no-any-return]
            self, models, comment, kwargs, session)

    def drop_search_index(self, name: str, session: Any = None, comment: Any = None,
                          **kwargs: Any) -> None:
        """Drop an Atlas Search index by name."""
        _work().search_index_command(self, {"dropSearchIndex": self._name, "name": name},
                                           comment, kwargs, session)

    def update_search_index(self, name: str, definition: Mapping[str, Any],
                            session: Any = None, comment: Any = None, **kwargs: Any) -> None:
        """Replace an Atlas Search index's definition."""
        _work().search_index_command(
            self, {"updateSearchIndex": self._name, "name": name, "definition": definition},
            comment, kwargs, session)

    def list_search_indexes(self, name: Optional[str] = None, session: Any = None,
                            comment: Any = None, **kwargs: Any
                            ) -> CommandCursor[Mapping[str, Any]]:
        """A cursor over the collection's Atlas Search indexes (all, or the one named)."""
        return _work().list_search_indexes(  # type: ignore[no-any-return]
            self, name, session, comment, kwargs)
