"""A per-process, per-thread client cache for WSGI workers and long CLI sessions: ``get_client``.

Clients are keyed by process id, thread id and the normalised connection string and options:
a client is single-threaded, so each thread of a threaded WSGI server gets its own. A
greenlet (gevent, eventlet: each request of a gevent worker is one) is lent a client, which
comes back for the next greenlet once the one it was lent to has ended: the clients, and
their sockets, stay as many as the greenlets running at once. After
``fork`` the child never uses its parent's clients: their inherited sockets are closed on the
child's side only (no shutdown, so the parent's connections are untouched), no endSessions
is sent for the parent's sessions, and the child gets a fresh client and topology.
"""
import _thread  # identification only: the driver starts no thread
import os
import sys
import weakref
from typing import Any

from singlemongo.client import MongoClient
from singlemongo.options.client_options import client_options

_cache: dict[tuple[Any, ...], MongoClient[dict[str, Any]]] = {}
# Greenlets' clients, by key (without a thread): those lent, by greenlet id, with a weak
# reference to the greenlet; and those given back, to lend again.
_lent: dict[tuple[Any, ...], dict[int, tuple[Any, MongoClient[dict[str, Any]]]]] = {}
_idle: dict[tuple[Any, ...], list[MongoClient[dict[str, Any]]]] = {}


def _key(uri: str, options: dict[str, Any], owner: Any = None) -> tuple[Any, ...]:
    """What tells cached clients apart: the process, ``owner`` (this thread unless given),
    the deployment, the options and the credentials."""
    owner = _thread.get_ident() if owner is None else owner
    parsed = client_options(uri, **options)
    creds = parsed.credentials
    return (os.getpid(), owner, parsed.seeds, parsed.srv_host, parsed.database,
            # Secrets stay SecretText (equal by value, redacted repr), never their repr.
            tuple(sorted((k, v if isinstance(v, str) else repr(v))
                         for k, v in parsed.specified_options().items())),
            (creds.username, creds.password, creds.source, creds.mechanism) if creds else None)


def get_client(uri: str = "mongodb://localhost", **options: Any) -> MongoClient[dict[str, Any]]:
    """This process's and thread's client for this URI and these options, created on first use
    (no I/O); a greenlet's, lent until it ends. Its serverSelectionTryOnce is false unless
    given: a worker's requests wait for an election rather than fail. Raises what MongoClient
    raises for bad options (ConfigurationError)."""
    options = _for_a_worker(uri, options)
    greenlet = _spawned_greenlet()
    if greenlet is not None:
        return _lend(greenlet, _key(uri, options, "greenlets"), uri, options)
    key = _key(uri, options)
    client = _cache.get(key)
    if client is None or client._closed:
        client = _cache[key] = MongoClient(uri, **options)
    return client


def _for_a_worker(uri: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with serverSelectionTryOnce=false unless the program set it: a worker
    serving request after request waits for an election (within serverSelectionTimeoutMS)
    rather than failing the requests that come during it. A one-off's MongoClient keeps the
    seed's default (one scan, then the error), as a CGI request should."""
    given = {key.replace("_", "").lower() for key in options}
    if "serverselectiontryonce" in given or "serverselectiontryonce" in uri.lower():
        return options
    return {**options, "serverSelectionTryOnce": False}


def _spawned_greenlet() -> Any:
    """The greenlet running now, when greenlets are in use and it is not its thread's main
    one (which lives as long as the thread: the thread's client serves it)."""
    greenlet = sys.modules.get("greenlet")
    current = greenlet.getcurrent() if greenlet is not None else None
    return current if current is not None and current.parent is not None else None


def _lend(greenlet: Any, key: tuple[Any, ...], uri: str,
          options: dict[str, Any]) -> MongoClient[dict[str, Any]]:
    """The client lent to ``greenlet``: the one it has, else one an ended greenlet gave
    back, else a new one."""
    lent, idle = _lent.setdefault(key, {}), _idle.setdefault(key, [])
    for gid, (ref, client) in list(lent.items()):  # take back what ended greenlets had
        owner = ref()
        if owner is None or owner.dead:
            del lent[gid]
            if not client._closed:
                idle.append(client)
    had = lent.get(id(greenlet))
    if had is not None and not had[1]._closed:
        return had[1]
    idle[:] = [c for c in idle if not c._closed]
    client = idle.pop() if idle else MongoClient(uri, **options)
    lent[id(greenlet)] = (weakref.ref(greenlet), client)
    return client


def _greenlet_clients(mine: bool) -> list[MongoClient[dict[str, Any]]]:
    """The greenlets' clients, lent or idle, of this process (``mine``) or of others."""
    clients = []
    for table in (_idle, _lent):
        for key, held in table.items():
            if (key[0] == os.getpid()) == mine:
                clients.extend(held if isinstance(held, list) else
                               [client for _, client in held.values()])
    return clients


def _drop_greenlet_tables(mine: bool) -> None:
    for table in (_lent, _idle):
        for key in [k for k in table if (k[0] == os.getpid()) == mine]:
            del table[key]


def clear() -> None:
    """Close every cached client of this process (tests, or a worker shutting down)."""
    for key in [k for k in _cache if k[0] == os.getpid()]:
        _cache.pop(key).close()
    for client in _greenlet_clients(mine=True):
        client.close()
    _drop_greenlet_tables(mine=True)


def _after_fork_in_child():
    pid = os.getpid()
    for key in [k for k in _cache if k[0] != pid]:
        _cache.pop(key)._forget_after_fork()
    for client in _greenlet_clients(mine=False):
        client._forget_after_fork()
    _drop_greenlet_tables(mine=False)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
