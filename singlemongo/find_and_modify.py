"""find_one_and_delete, find_one_and_replace and find_one_and_update: the findAndModify
command, retryable as a single-document write (retryable writes spec)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from singlemongo.base_object import Generic
from singlemongo.arguments import (hint_value, index_document, validate_boolean, validate_collation,
                        validate_is_document_type, validate_is_mapping, validate_ok_for_replace,
                        validate_ok_for_update)
from singlemongo.cursor import projection_document
from singlemongo.errors import ConfigurationError
from singlemongo.typings import _DocumentType, _IndexKeyHint, _Pipeline
from singlemongo.replies import check

if TYPE_CHECKING:
    from singlemongo.write_concern import WriteConcern

_VALUE_FIELD = {"value": 1}  # where findAndModify's document is (selective decoding)


class ReturnDocument:
    """Which document find_one_and_update/replace return: BEFORE (default) or AFTER."""
    BEFORE = False
    AFTER = True


class FindAndModifyMethods(Generic[_DocumentType]):
    """The find_one_and_* half of Collection (a mixin: Collection is the class users see)."""

    if TYPE_CHECKING:  # what Collection gives the methods below
        _name: str
        _write_concern: WriteConcern

        def _write_command(self, cmd: dict[str, Any], sequences: tuple[Any, ...] = (),
                           retryable: bool = True, session: Any = None, check: bool = True,
                           user_fields: Any = None) -> Any: ...

        def _acknowledged(self, session: Any) -> bool: ...

    def _find_and_modify(self, filter: Mapping[str, Any], projection: Any, sort: Any,
                         upsert: Optional[bool] = None,
                         return_document: bool = ReturnDocument.BEFORE,
                         array_filters: Any = None, hint: Any = None,
                         let: Optional[Mapping[str, Any]] = None, session: Any = None,
                         **kwargs: Any) -> Any:
        validate_is_mapping("filter", filter)
        if not isinstance(return_document, bool):
            raise TypeError(f"return_document must be ReturnDocument.BEFORE or "
                            f"ReturnDocument.AFTER, not {type(return_document)}")
        cmd: dict[str, Any] = {"findAndModify": self._name, "query": filter,
                               "new": return_document}
        if let is not None:
            validate_is_document_type("let", let)
            cmd["let"] = let
        collation = validate_collation(kwargs.pop("collation", None))
        comment = kwargs.pop("comment", None)
        cmd.update(kwargs)
        if projection is not None:
            cmd["fields"] = projection_document(projection)
        if sort is not None:  # a mapping or (key, direction) pairs, as PyMongo takes it
            cmd["sort"] = index_document(sort)
        if upsert is not None:
            cmd["upsert"] = validate_boolean("upsert", upsert)
        if hint is not None:
            cmd["hint"] = hint_value(hint)
        if array_filters is not None:
            if not self._acknowledged(session):  # PyMongo's refusal: nothing would say
                raise ConfigurationError("arrayFilters is unsupported for unacknowledged "
                                         "writes.")
            cmd["arrayFilters"] = list(array_filters)
        if collation is not None:
            cmd["collation"] = collation
        if comment is not None:
            cmd["comment"] = comment
        reply = self._write_command(cmd, user_fields=_VALUE_FIELD, session=session)
        if not self._acknowledged(session):
            return None
        return check("findAndModify", reply, "findAndModify").get("value")

    def find_one_and_delete(self, filter: Mapping[str, Any], projection: Any = None,
                            sort: Any = None, hint: Optional[_IndexKeyHint] = None,
                            session: Any = None, let: Optional[Mapping[str, Any]] = None,
                            comment: Any = None, **kwargs: Any) -> Optional[_DocumentType]:
        """Delete the first matching document (by ``sort``) and return it, or None."""
        return self._find_and_modify(filter, projection, sort, hint=hint, let=let,
                                     session=session, remove=True, comment=comment, **kwargs)

    def find_one_and_replace(self, filter: Mapping[str, Any], replacement: Mapping[str, Any],
                             projection: Any = None, sort: Any = None, upsert: bool = False,
                             return_document: bool = ReturnDocument.BEFORE,
                             hint: Optional[_IndexKeyHint] = None, session: Any = None,
                             let: Optional[Mapping[str, Any]] = None, comment: Any = None,
                             **kwargs: Any) -> Optional[_DocumentType]:
        """Replace the first matching document; the document before (or after) it."""
        validate_ok_for_replace(replacement)
        return self._find_and_modify(filter, projection, sort, upsert, return_document,
                                     hint=hint, let=let, session=session, update=replacement,
                                     comment=comment, **kwargs)

    def find_one_and_update(self, filter: Mapping[str, Any],
                            update: Union[Mapping[str, Any], _Pipeline], projection: Any = None,
                            sort: Any = None, upsert: bool = False,
                            return_document: bool = ReturnDocument.BEFORE,
                            array_filters: Optional[Sequence[Mapping[str, Any]]] = None,
                            hint: Optional[_IndexKeyHint] = None, session: Any = None,
                            let: Optional[Mapping[str, Any]] = None, comment: Any = None,
                            **kwargs: Any) -> Optional[_DocumentType]:
        """Update the first matching document; the document before (or after) the update."""
        validate_ok_for_update(update)
        if array_filters is not None and not isinstance(array_filters, list):
            raise TypeError(f"array_filters must be a list, not {type(array_filters)}")
        return self._find_and_modify(filter, projection, sort, upsert, return_document,
                                     array_filters, hint=hint, let=let, session=session,
                                     update=update, comment=comment, **kwargs)
