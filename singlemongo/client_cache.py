"""A per-process, per-thread client cache for WSGI workers and long CLI sessions: ``get_client``.

Clients are keyed by process id, thread id and the normalised connection string and options:
a client is single-threaded, so each thread of a threaded WSGI server gets its own. After
``fork`` the child never uses its parent's clients: their inherited sockets are closed on the
child's side only (no shutdown, so the parent's connections are untouched), no endSessions
is sent for the parent's sessions, and the child gets a fresh client and topology.
"""
import _thread  # identification only: the driver starts no thread
import os
from typing import Any

from .client import MongoClient
from .options.client_options import client_options

_cache: dict[tuple[Any, ...], MongoClient[dict[str, Any]]] = {}


def _key(uri: str, options: dict[str, Any]) -> tuple[Any, ...]:
    parsed = client_options(uri, **options)
    creds = parsed.credentials
    return (os.getpid(), _thread.get_ident(), parsed.seeds, parsed.srv_host, parsed.database,
            # Secrets stay SecretText (equal by value, redacted repr), never their repr.
            tuple(sorted((k, v if isinstance(v, str) else repr(v))
                         for k, v in parsed.specified_options().items())),
            (creds.username, creds.password, creds.source, creds.mechanism) if creds else None)


def get_client(uri: str = "mongodb://localhost", **options: Any) -> MongoClient[dict[str, Any]]:
    """This process's and thread's client for this URI and these options, created on first use
    (no I/O). Raises what MongoClient raises for bad options (ConfigurationError)."""
    key = _key(uri, options)
    client = _cache.get(key)
    if client is None or client._closed:
        client = _cache[key] = MongoClient(uri, **options)
    return client


def clear() -> None:
    """Close every cached client of this process (tests, or a worker shutting down)."""
    for key in [k for k in _cache if k[0] == os.getpid()]:
        _cache.pop(key).close()


def _after_fork_in_child():
    pid = os.getpid()
    for key in [k for k in _cache if k[0] != pid]:
        _cache.pop(key)._forget_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
