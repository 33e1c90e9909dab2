"""What singlemongo does not offer, importable under PyMongo's names so that a program or library
that merely imports it still starts: each class fails where it is used (made), with a message
naming what and why. Serves ``pymongo.asynchronous.*``, ``pymongo.encryption``,
``pymongo.encryption_options`` and ``gridfs.asynchronous``.
"""
from __future__ import annotations

from typing import Any, NoReturn

__path__: list[str] = []  # ``import pymongo.asynchronous.mongo_client`` resolves here too

_ASYNC = ("singlemongo is a synchronous driver for single-threaded programs, with no event "
          "loop; use MongoClient")
_ENCRYPTION = ("client-side field-level encryption (libmongocrypt with mongocryptd or "
               "crypt_shared) is not offered; encrypt on the server (Queryable Encryption "
               "drivers) or use PyMongo for it")

REASONS = {
    "Async": _ASYNC,
    "ClientEncryption": _ENCRYPTION, "AutoEncryptionOpts": _ENCRYPTION,
    "RangeOpts": _ENCRYPTION, "TextOpts": _ENCRYPTION, "MongoCryptOptions": _ENCRYPTION,
}


def not_offered(name: str) -> NoReturn:
    """NotImplementedError naming ``name`` and why singlemongo does not offer it."""
    reason = next((text for prefix, text in REASONS.items() if name.startswith(prefix)),
                  "it is not part of what singlemongo offers")
    raise NotImplementedError(f"singlemongo does not offer {name}: {reason}")


def _placeholder(name: str) -> type:
    """A class that imports, subscripts as a generic (``AsyncMongoClient[Any]`` in a
    library's annotations) and fails only when made."""
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        not_offered(name)

    def __class_getitem__(cls: type, item: Any) -> type:
        return cls
    return type(name, (), {"__init__": __init__, "__module__": __name__,
                           "__class_getitem__": classmethod(__class_getitem__),
                           "__doc__": f"Not offered by singlemongo: making one raises "
                                      f"NotImplementedError saying why."})


class Algorithm:
    """The encryption algorithm names (constants only; encryption is not offered)."""
    AEAD_AES_256_CBC_HMAC_SHA_512_Deterministic = "AEAD_AES_256_CBC_HMAC_SHA_512-Deterministic"
    AEAD_AES_256_CBC_HMAC_SHA_512_Random = "AEAD_AES_256_CBC_HMAC_SHA_512-Random"
    INDEXED = "Indexed"
    UNINDEXED = "Unindexed"
    RANGE = "Range"


class QueryType:
    """The queryable encryption query types (constants only)."""
    EQUALITY = "equality"
    RANGE = "range"


def _function_placeholder(name: str) -> Any:
    def placeholder(*args: Any, **kwargs: Any) -> NoReturn:
        not_offered(name)
    placeholder.__name__ = placeholder.__qualname__ = name
    placeholder.__module__ = __name__
    placeholder.__doc__ = "Not offered by singlemongo: calling it raises NotImplementedError."
    return placeholder


def __getattr__(name: str) -> Any:
    """Any class or function of what is not offered imports, and fails where it is used:
    ``from pymongo.asynchronous.uri_parser import parse_uri`` as well as classes."""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = _placeholder(name) if name[:1].isupper() else _function_placeholder(name)
    globals()[name] = value
    return value
