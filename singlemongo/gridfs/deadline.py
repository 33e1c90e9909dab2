"""timeoutMS for GridFS (client-side operations timeout, "GridFS API"): a bucket method that
reads or writes a user's stream (``upload_from_stream``, ``download_to_stream``, ``delete``,
``drop``, ...) runs all its commands within one timeoutMS, and a stream the bucket opens
(``open_upload_stream``, ``open_download_stream``) lives within the timeoutMS in force when it
was opened: every write, read and close after that shares the deadline. ``GridFS.put`` and
``GridFS.delete`` are whole operations too. Without timeoutMS,
each command keeps its own limits, as before. Reading or writing the user's own stream is
not interrupted: a slow one can overrun the deadline, which the next command then reports.
"""
from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])


def topology_of(collection: Any) -> Any:
    """The engine behind a collection's client (None for a client of another kind, such as
    Ming's in-memory double, whose collections answer the commands themselves)."""
    return collection._topology


def clock_of(collection: Any) -> Any:
    """The clock of a collection's client (the default one for a client of another kind)."""
    topology = topology_of(collection)
    if topology is None:
        from singlemongo.clock import DEFAULT_CLOCK
        return DEFAULT_CLOCK
    return topology.clock


def _scope(collection: Any, deadline: Any = None) -> Any:
    topology = topology_of(collection)
    return contextlib.nullcontext() if topology is None else topology.timeout_scope(deadline)


def whole_operation(method: _F) -> _F:
    """Run a bucket method's commands within one timeoutMS (the bucket's ``_collection``)."""
    @functools.wraps(method)
    def bounded(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _scope(self._collection):
            return method(self, *args, **kwargs)
    return bounded  # type: ignore[return-value]


def open_with_lifetime(stream: Any, collection: Any) -> Any:
    """Give a stream the deadline in force now, for its whole life (None: none): the
    operation's that opens it (``upload_from_stream``), else a new one."""
    topology = topology_of(collection)
    deadline = None if topology is None else topology.current_deadline()
    object.__setattr__(stream, "_deadline", deadline)
    return stream


def within_lifetime(method: _F) -> _F:
    """Run a stream method's commands within the stream's deadline (its ``_deadline``, set
    by ``open_with_lifetime``; else the usual per-call timeoutMS)."""
    @functools.wraps(method)
    def bounded(self: Any, *args: Any, **kwargs: Any) -> Any:
        with _scope(self._root, self._deadline):
            return method(self, *args, **kwargs)
    return bounded  # type: ignore[return-value]
