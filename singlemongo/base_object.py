"""What MongoClient, Database and Collection are made of (PyMongo's ``common.BaseObject``):
codec options, read preference, write concern and read concern, each inherited from the level
above unless given; the run-time ``Generic`` and the lazy loading their classes share; and
``watch``. The checks on the arguments they take are ``arguments.py``'s."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional, Sequence, TypeVar

from bson.codec_options import CodecOptions

from singlemongo.arguments import _instance_of
from singlemongo.selection import ReadPreference as _CoreReadPreference

if TYPE_CHECKING:
    from singlemongo.read_concern import ReadConcern
    from singlemongo.read_preferences import _ServerMode
    from singlemongo.write_concern import WriteConcern

if TYPE_CHECKING:
    from typing import Generic as Generic
else:
    class Generic:
        """What the face's generic classes need of ``typing.Generic`` at run time:
        ``Collection[dict]`` is the class itself (type checkers see ``typing.Generic``).
        Each class with a subscripted ``typing.Generic`` base costs 15 us more to create,
        and a one-off creates a dozen."""

        __slots__ = ()

        def __class_getitem__(cls, item: Any) -> Any:
            return cls

        def __init_subclass__(cls, **kwargs: Any) -> None:
            super().__init_subclass__(**kwargs)
            _install_deferred(cls)


# The document type of a client, database, collection or cursor (``pymongo.typings``; here so
# the face's modules need not load typings.py at run time).
_DocumentType = TypeVar("_DocumentType", bound=Mapping[str, Any])
_DocumentTypeArg = TypeVar("_DocumentTypeArg", bound=Mapping[str, Any])


class _Deferred(tuple):
    """A method of a mixin whose module loads at the method's first use, as (module, mixin,
    name); the first lookup puts the real function in the descriptor's place, so later calls
    cost nothing. A tuple: a one-off makes about 90 of these, each without a Python
    ``__init__``."""

    __slots__ = ()

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        import importlib
        module, mixin, name = self
        real = getattr(importlib.import_module(module, __package__), mixin)
        function = real.__dict__[name]
        for klass in (owner or type(obj)).__mro__:
            if klass.__dict__.get(name) is self:
                setattr(klass, name, function)
        return function.__get__(obj, owner) if obj is not None else function


def lazy_attributes(module: str, names: Mapping[str, str]) -> Any:
    """A module ``__getattr__`` serving ``names`` (attribute -> the face module defining it,
    as ``".raw_batches"``), each imported at first use: PyMongo's modules offer classes a
    one-off read must not load (``pymongo.cursor.RawBatchCursor``)."""
    def __getattr__(name: str) -> Any:
        if name in names:
            import importlib
            return getattr(importlib.import_module(names[name], __package__), name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    __getattr__.names = tuple(names)  # type: ignore[attr-defined]  # for tests/test_typing.py
    return __getattr__


class _DeferredMixin:
    """The stand-in for a mixin class whose module loads at first use: not a class (a one-off
    would make six, each with the longer method resolution order of the class using it),
    but a base that leaves the class's bases (``__mro_entries__``) and puts a ``_Deferred``
    for each of its names into the class itself (``Generic.__init_subclass__``)."""

    __slots__ = ("module", "mixin", "names")

    def __init__(self, module: str, mixin: str, names: Sequence[str]) -> None:
        self.module, self.mixin, self.names = module, mixin, names

    def __getitem__(self, item: Any) -> Any:  # QueryMethods[_DocumentType]
        return self

    def __mro_entries__(self, bases: tuple[Any, ...]) -> tuple[()]:
        return ()

    def __repr__(self) -> str:
        return f"<deferred mixin {self.mixin} of {self.module}>"


def _install_deferred(cls: type) -> None:
    """Each deferred mixin's names, where the class statement of ``cls`` listed it, resolved
    as a real base in its place would give them: a name the class itself or a base listed
    earlier defines stays theirs."""
    listed = cls.__dict__.get("__orig_bases__")
    if listed is None:  # no stand-in among its bases (Python sets it only then)
        return
    taken = set(cls.__dict__)  # and, as the loop goes, what the bases before a mixin hold
    for base in listed:
        if type(base) is not _DeferredMixin:
            for klass in getattr(base, "__mro__", ()):  # not hasattr(): a miss makes an error
                taken.update(klass.__dict__)
            continue
        for name in base.names:
            if name not in taken:
                setattr(cls, name, _Deferred((base.module, base.mixin, name)))
        taken.update(base.names)


def deferred_mixin(module: str, mixin: str, names: Sequence[str]) -> Any:
    """A stand-in for the mixin class ``module.mixin`` whose attributes ``names`` load that
    module on first use (type checkers see the real class: import it under
    ``TYPE_CHECKING``). A one-off read does not load the code for writes, indexes or
    findAndModify; tests/test_import_budget.py checks ``names`` against the real class."""
    return _DeferredMixin(module, mixin, tuple(names))


class Watchable:
    """``watch`` with PyMongo's signature on MongoClient, Database and Collection."""

    _watch_scope = "cluster"  # what a change stream of this object sees (Database: "database")

    def watch(self, pipeline: Optional[Sequence[Mapping[str, Any]]] = None,
              full_document: Optional[str] = None,
              resume_after: Optional[Mapping[str, Any]] = None,
              max_await_time_ms: Optional[int] = None, batch_size: Optional[int] = None,
              collation: Any = None, start_at_operation_time: Any = None, session: Any = None,
              start_after: Optional[Mapping[str, Any]] = None, comment: Any = None,
              full_document_before_change: Optional[str] = None,
              show_expanded_events: Optional[bool] = None) -> Any:
        """A change stream of this collection, database or deployment (a ChangeStream: the
        aggregate runs now; iterate it, or poll with ``try_next()``)."""
        from singlemongo.change_stream import STREAMS
        return STREAMS[self._watch_scope](self, pipeline, full_document, resume_after, max_await_time_ms,
                    batch_size, collation, start_at_operation_time, session, start_after,
                    comment, full_document_before_change, show_expanded_events)


def core_read_preference(value: Any) -> Optional[_CoreReadPreference]:
    """The core read preference for anything a user may pass (None stays None); the face's
    ``read_preferences`` module loads only for a value of its own or a mode name."""
    if value is None or isinstance(value, _CoreReadPreference):
        return value
    from singlemongo.read_preferences import to_core
    return to_core(value)


class _Inherited:
    """A concern a level inherits from the level above unless it was given one (a non-data
    descriptor: a given value sits in the instance). The client holds one only when its
    options set it; otherwise the face's default object is built when first read, so a
    one-off read that never looks at its write concern does not load that module."""

    def __init__(self, module: str, default: str) -> None:
        self.module, self.default = module, default
        self.fallback: Any = None  # the default, once its module is loaded

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def given(self, obj: Any) -> Any:
        """The value given at ``obj`` or the nearest level above it (or read there before:
        the value that level inherited), or None."""
        while obj is not None:
            value = obj.__dict__.get(self.name)
            if value is not None:
                return value
            obj = obj._settings_parent
        return None

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self
        value = self.given(obj)
        if value is None:
            value = self.fallback
            if value is None:
                import importlib
                value = self.fallback = getattr(importlib.import_module(
                    self.module, __package__), self.default)
        # A level's settings never change once it is made: later reads find the value in
        # the instance, without this call (a write reads its write concern three times).
        obj.__dict__[self.name] = value
        return value


_SETTINGS = ("codec_options", "read_preference", "write_concern", "read_concern")


class BaseObject:
    """The four settings every level has, validated and inherited."""

    _write_concern = _Inherited(".write_concern", "DEFAULT_WRITE_CONCERN")
    _read_concern = _Inherited(".read_concern", "DEFAULT_READ_CONCERN")

    def __init__(self, codec_options: Optional[CodecOptions[Any]], read_preference: Any,
                 write_concern: Optional[WriteConcern], read_concern: Optional[ReadConcern],
                 parent: Optional[BaseObject] = None) -> None:
        if codec_options is not None and not isinstance(codec_options, CodecOptions):
            raise TypeError(f"codec_options must be a bson.codec_options.CodecOptions, not "
                            f"{codec_options!r}")
        face = __package__
        if write_concern is not None and not _instance_of(write_concern,
                                                          f"{face}.write_concern", "WriteConcern"):
            raise TypeError(f"write_concern must be a WriteConcern, not {write_concern!r}")
        if read_concern is not None and not _instance_of(read_concern, f"{face}.read_concern",
                                                         "ReadConcern"):
            raise TypeError(f"read_concern must be a ReadConcern, not {read_concern!r}")
        if parent is not None and not isinstance(parent, BaseObject):
            # A client of another kind (Ming's in-memory double): its public settings, as
            # PyMongo's Database reads them.
            given = (codec_options, read_preference, write_concern, read_concern)
            codec_options, read_preference, write_concern, read_concern = (
                getattr(parent, name, None) if value is None else value
                for name, value in zip(_SETTINGS, given))
            parent = None
        self._settings_parent = parent
        self._codec_options: CodecOptions[Any] = codec_options or parent._codec_options  # type: ignore[union-attr]
        core = core_read_preference(read_preference)
        self._read_preference_core: _CoreReadPreference = (
            core if core is not None else parent._read_preference_core)  # type: ignore[union-attr]
        if write_concern is not None:
            self._write_concern = write_concern
        if read_concern is not None:
            self._read_concern = read_concern

    @property
    def codec_options(self) -> CodecOptions[Any]:
        """The CodecOptions documents are encoded and decoded with."""
        return self._codec_options

    @property
    def read_preference(self) -> _ServerMode:
        """The read preference reads use unless a call gives one."""
        from singlemongo.read_preferences import from_core
        return from_core(self._read_preference_core)

    @property
    def write_concern(self) -> WriteConcern:
        """The write concern writes are sent with."""
        return self._write_concern  # type: ignore[no-any-return]

    @property
    def read_concern(self) -> ReadConcern:
        """The read concern reads are sent with."""
        return self._read_concern  # type: ignore[no-any-return]

    def _read_concern_document(self) -> Optional[dict[str, Any]]:
        """The ``readConcern`` a read sends, or None for the server's default (without
        building the default ReadConcern)."""
        given = BaseObject._read_concern.given(self)
        return given.document if given is not None and given.level else None
