"""singlemongo: a MongoDB driver for short-lived, single-threaded Python programs.

Names are imported on first use (PEP 562), so ``import singlemongo`` costs almost nothing
and a one-off query loads only what it runs.
"""

__version__ = "0.1.0"

_LAZY = {
    "MongoClient": "client", "get_client": "client_cache", "ClientOptions": "options.client_options",
    "ReadPreference": "selection.read_preference",
    "ConfigurationError": "errors", "ConnectionFailure": "errors", "InvalidURI": "errors",
    "OperationFailure": "errors", "ServerSelectionError": "errors",
    "SingleMongoError": "errors", "SingleMongoWarning": "errors", "DuplicateKeyError": "errors",
    "BulkWriteError": "errors", "WriteError": "errors", "NetworkTimeout": "errors",
    "InvalidDocument": "errors",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'singlemongo' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(__all__)
