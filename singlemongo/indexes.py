"""Index management for Collection (as PyMongo's create_index, create_indexes, list_indexes,
index_information, drop_index and drop_indexes): commands on the primary, with the
collection's write concern."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from bson.codec_options import CodecOptions
from bson.son import SON

from singlemongo.command_cursor import CommandCursor
from singlemongo.errors import OperationFailure
from singlemongo.arguments import gen_index_name, index_list
from singlemongo.operations import IndexModel
from singlemongo.selection import ReadPreference as _Core
from singlemongo.typings import _IndexKeyHint
from singlemongo.replies import check

if TYPE_CHECKING:
    from singlemongo.collection import Collection

_PRIMARY = _Core()
_SON_CODEC: CodecOptions[Any] = CodecOptions(SON)
NAMESPACE_NOT_FOUND = 26


def _with_options(coll: Collection[Any], cmd: dict[str, Any], comment: Any,
                  kwargs: dict[str, Any]) -> dict[str, Any]:
    cmd.update(kwargs)
    if comment is not None:
        cmd["comment"] = comment
    return cmd


def create_indexes(coll: Collection[Any], indexes: Sequence[IndexModel], comment: Any,
                   kwargs: dict[str, Any], session: Any = None) -> list[str]:
    if not isinstance(indexes, list):
        raise TypeError(f"indexes must be a list, not {type(indexes).__name__}")
    names, documents = [], []
    for index in indexes:
        if not isinstance(index, IndexModel):
            raise TypeError(f"{index!r} is not an instance of singlemongo.operations.IndexModel")
        documents.append(index.document)
        names.append(index.document["name"])
    cmd = _with_options(coll, {"createIndexes": coll.name, "indexes": documents}, comment,
                        kwargs)
    coll._write_command(cmd, retryable=False, session=session)
    return names


def create_index(coll: Collection[Any], keys: _IndexKeyHint, comment: Any,
                 kwargs: dict[str, Any], session: Any = None) -> str:
    command_options: dict[str, Any] = {k: kwargs.pop(k) for k in ("maxTimeMS", "commitQuorum")
                                       if k in kwargs}
    return create_indexes(coll, [IndexModel(keys, **kwargs)], comment, command_options,
                          session)[0]


def list_indexes(coll: Collection[Any], comment: Any, session: Any = None
                 ) -> CommandCursor[Any]:
    cmd: dict[str, Any] = {"listIndexes": coll.name, "cursor": {}}
    if comment is not None:
        cmd["comment"] = comment
    # PyMongo decodes index documents with CodecOptions(SON), whatever the collection's.
    plain = coll.with_options(codec_options=_SON_CODEC)
    try:
        outcome = plain._read_command(cmd, _PRIMARY, keep_session=True, session=session)
    except OperationFailure as exc:
        if exc.code != NAMESPACE_NOT_FOUND:
            raise
        return CommandCursor(plain, None, documents=[])
    return CommandCursor(plain, outcome, comment=comment, session=session)


def index_information(coll: Collection[Any], comment: Any, session: Any = None
                      ) -> dict[str, Any]:
    info: dict[str, Any] = {}
    for index in list_indexes(coll, comment, session):
        index = dict(index)
        index["key"] = list(index["key"].items())
        info[index.pop("name")] = index
    return info


def drop_index(coll: Collection[Any], index_or_name: _IndexKeyHint, comment: Any,
               kwargs: dict[str, Any], session: Any = None) -> None:
    name = index_or_name
    if not isinstance(name, str):
        name = gen_index_name(index_list(index_or_name))
    cmd = _with_options(coll, {"dropIndexes": coll.name, "index": name}, comment, kwargs)
    try:
        coll._write_command(cmd, retryable=False, session=session)
    except OperationFailure as exc:
        if exc.code != NAMESPACE_NOT_FOUND:
            raise


# ----- Atlas Search indexes (index management spec, "Search Index Management") -------------

def create_search_indexes(coll: Collection[Any], models: Sequence[Any], comment: Any,
                          kwargs: dict[str, Any], session: Any = None) -> list[str]:
    from singlemongo.operations import SearchIndexModel
    documents = []
    for model in models:
        if not isinstance(model, SearchIndexModel):
            raise TypeError(f"{model!r} is not an instance of "
                            f"singlemongo.operations.SearchIndexModel")
        documents.append(model.document)
    cmd = _with_options(coll, {"createSearchIndexes": coll.name, "indexes": documents},
                        comment, kwargs)
    reply = _concern_free(coll)._write_command(cmd, retryable=False, session=session)
    return [index["name"] for index in check("createSearchIndexes", reply,
                                             "createSearchIndexes")["indexesCreated"]]


def _concern_free(coll: Collection[Any]) -> Collection[Any]:
    """The collection without its read and write concerns: the search index commands and
    $listSearchIndexes take neither (index management spec, "Search Index Management")."""
    from singlemongo.read_concern import ReadConcern
    from singlemongo.write_concern import WriteConcern
    return coll.with_options(write_concern=WriteConcern(), read_concern=ReadConcern())


def search_index_command(coll: Collection[Any], cmd: dict[str, Any], comment: Any,
                         kwargs: dict[str, Any], session: Any = None) -> None:
    """dropSearchIndex or updateSearchIndex; a missing collection is not an error."""
    _with_options(coll, cmd, comment, kwargs)
    try:
        _concern_free(coll)._write_command(cmd, retryable=False, session=session)
    except OperationFailure as exc:
        if exc.code != NAMESPACE_NOT_FOUND:
            raise


def list_search_indexes(coll: Collection[Any], name: Any, session: Any, comment: Any,
                        kwargs: dict[str, Any]) -> CommandCursor[Any]:
    stage = {"$listSearchIndexes": {} if name is None else {"name": name}}
    plain: Collection[Any] = _concern_free(coll).with_options(codec_options=CodecOptions(),
                                                              read_preference=_PRIMARY)
    # The options as aggregate's own (not as keywords: "pipeline" is refused, not a clash).
    from singlemongo.collection_queries import _aggregate
    options = dict(kwargs)
    return _aggregate(plain, plain.name, [stage], options.pop("let", None), comment, options,
                      session)
