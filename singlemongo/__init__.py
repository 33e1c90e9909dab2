"""singlemongo: a MongoDB driver for short-lived, single-threaded Python programs, with
PyMongo's API.

Names are imported on first use (PEP 562), so ``import singlemongo`` costs almost nothing
and a one-off query loads only what it runs.
"""
from __future__ import annotations

# Not imported from typing: `import singlemongo` stays under a millisecond (type checkers treat
# any TYPE_CHECKING name as true).
TYPE_CHECKING = False

__version__ = "0.3.0"
version = __version__
version_tuple = tuple(int(part) for part in __version__.split("."))

# Index and sort directions and index types (as pymongo's top level).
ASCENDING = 1
DESCENDING = -1
GEO2D = "2d"
GEOSPHERE = "2dsphere"
HASHED = "hashed"
TEXT = "text"

# The names imported on first use, by module. Text, not names in code: each name a module's
# code holds is interned when it loads, and Python 3.13's one-off sits near a resize of that
# table (docs/performance.md). Type checkers read the same names from ``_exports``.
_LAZY_TEXT = """
client: MongoClient
client_cache: get_client
options.client_options: ClientOptions client_options
read_preferences: ReadPreference
write_concern: WriteConcern
read_concern: ReadConcern
server_api: ServerApi ServerApiVersion
collation: Collation
cursor: CursorType
find_and_modify: ReturnDocument
operations: InsertOne UpdateOne UpdateMany ReplaceOne DeleteOne DeleteMany IndexModel
client_session: ClientSession
transaction: TransactionOptions
errors: PyMongoError SingleMongoError SingleMongoWarning ConfigurationError ConnectionFailure
errors: AutoReconnect NotPrimaryError NetworkTimeout InvalidURI OperationFailure
errors: ServerSelectionError ServerSelectionTimeoutError DuplicateKeyError BulkWriteError
errors: WriteError WriteConcernError ExecutionTimeout CursorNotFound InvalidOperation
errors: InvalidName InvalidDocument DocumentTooLarge
drop_in: install_as_pymongo
csot: timeout
driver_info: DriverInfo
sdam.topology_description: MIN_SUPPORTED_WIRE_VERSION MAX_SUPPORTED_WIRE_VERSION
"""
_LAZY = {name: module for line in _LAZY_TEXT.strip().splitlines()
         for module, _, names in [line.partition(": ")] for name in names.split()}
# The submodules a program may reach as attributes (``singlemongo.errors``).
_MODULES = frozenset("""errors monitoring operations results read_preferences write_concern
    read_concern collation server_api cursor command_cursor collection database client
    typings testing gridfs uri_parser driver_info options_view change_stream csot
    client_session drop_in""".split())

__all__ = ["__version__", "version", "version_tuple", "ASCENDING", "DESCENDING", "GEO2D",
           "GEOSPHERE", "HASHED", "TEXT", *_LAZY]

if TYPE_CHECKING:
    from typing import Any
    from singlemongo._exports import *  # noqa: F401,F403


def _install_finder() -> None:
    """Find this package's own modules without the general import path (a one-off loads
    about 38 of them).

    Python's path finder spends about 0.13 M instructions a module on work that is the same
    for every module of an installed package: asking every finder on ``sys.meta_path``,
    listing and probing the directory for each file suffix, and building the cache path
    twice. This finder knows the layout: it stats the source, reads its compiled file when
    the header matches the source's size and mtime, exactly as Python checks a timestamp
    pyc, and otherwise leaves it to Python's own loader, which compiles and writes it.
    Everything else (``get_source``, resources, reloads) is Python's ``SourceFileLoader``.

    It is installed only where that equivalence holds: this package loaded from source files
    by Python's loader, on Linux (case-sensitive names), without ``-O`` or a pycache prefix.
    It sits just before Python's own finders (builtin, frozen, path), so finders that tools
    installed earlier (such as pytest's assertion rewriting) still come first. ``SINGLEMONGO_PLAIN_IMPORT=1`` in the
    environment leaves imports to Python alone."""
    import sys
    bootstrap = sys.modules.get("_frozen_importlib_external")
    spec = globals().get("__spec__")
    if (bootstrap is None or spec is None or type(spec.loader) is not bootstrap.SourceFileLoader
            or not sys.platform.startswith("linux") or sys.flags.optimize
            or getattr(sys, "pycache_prefix", None) or not sys.implementation.cache_tag
            or not (spec.origin or "").endswith("/__init__.py")):
        return
    posix, marshal, new_module = sys.modules["posix"], sys.modules["marshal"], type(sys)
    if posix.environ.get(b"SINGLEMONGO_PLAIN_IMPORT"):
        return
    module_spec = sys.modules["_frozen_importlib"].ModuleSpec
    magic, pyc = bootstrap.MAGIC_NUMBER, f".{sys.implementation.cache_tag}.pyc"
    root = spec.origin[:-len("/__init__.py")]
    prefix = f"{__name__}."

    class Loader(bootstrap.SourceFileLoader):  # type: ignore[misc, name-defined]
        def create_module(self, spec: Any) -> Any:
            # The attributes importlib would set, set first: it sets each one it finds
            # missing, and asking a module for a missing attribute formats an error message
            # (twice over) before the default is returned.
            module = new_module(spec.name)
            module.__file__ = spec.origin
            module.__cached__ = self.cached  # type: ignore[attr-defined]
            # ModuleSpec.parent's rule, without its property call.
            module.__package__ = spec.name if spec.submodule_search_locations is not None \
                else spec.name.rpartition(".")[0]
            return module

        def get_code(self, fullname: str) -> Any:
            # The compiled file by the file descriptor's calls (io.open builds a file object
            # and a buffer around the same two calls).
            try:
                fd = posix.open(self.cached, posix.O_RDONLY)
            except OSError:
                data = b""
            else:
                try:
                    size = posix.fstat(fd).st_size
                    data = posix.read(fd, size)
                    if len(data) != size:  # never for a regular file; Python's way if so
                        data = b""
                except OSError:
                    data = b""
                finally:
                    posix.close(fd)
            stat = self.stat
            # The timestamp pyc's header: magic, flags 0, mtime, size (PEP 552).
            if (data[:8] == magic + b"\0\0\0\0"
                    and int.from_bytes(data[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF
                    and int.from_bytes(data[12:16], "little") == stat.st_size & 0xFFFFFFFF):
                return marshal.loads(memoryview(data)[16:])
            return super().get_code(fullname)  # stale, missing or hash-based: Python's way

    class Finder:
        @staticmethod
        def find_spec(fullname: str, path: Any = None, target: Any = None) -> Any:
            if not fullname.startswith(prefix):
                return None
            base = f"{root}/{fullname[len(prefix):].replace('.', '/')}"
            # The module file first (most names are modules): Python's finder prefers a
            # package directory, and this tree never has both (a test checks).
            source = base + ".py"
            try:
                stat = posix.stat(source)
                directory, _, name = base.rpartition("/")
                search = None
            except OSError:
                source = base + "/__init__.py"
                try:
                    stat = posix.stat(source)
                except OSError:
                    return None
                directory, name, search = base, "__init__", [base]
            loader = Loader(fullname, source)
            loader.stat = stat
            found = module_spec(fullname, loader, origin=source, is_package=search is not None)
            if search is not None:
                found.submodule_search_locations = search
            found.cached = loader.cached = f"{directory}/__pycache__/{name}{pyc}"
            found.has_location = True
            return found

        @staticmethod
        def invalidate_caches() -> None:
            pass

    finders = sys.meta_path
    standard = (sys.modules["_frozen_importlib"].BuiltinImporter, bootstrap.PathFinder)
    at = next((i for i, f in enumerate(finders) if f in standard), len(finders))
    finders.insert(at, Finder)


_install_finder()


def _import_paused(module: str, absolute: bool = False) -> Any:
    """``singlemongo.<module>`` (``module`` itself if ``absolute``: ``ssl`` for a TLS
    client), imported with the cyclic garbage collector paused. An import
    allocates thousands of objects that live as long as the process (functions, classes,
    tables); a collection in the middle of it traverses them all and finds no garbage (over
    1 ms of a one-off query). The collector is restored as it was, even if the import fails.

    After the import, the objects it made go to the oldest generation (``gc.freeze()`` then
    ``gc.unfreeze()``: two list splices, no traversal), where objects that survive two
    collections would be. Left in the youngest, the next collection, within the first query,
    would traverse them all again to promote them: 2.3 M instructions of a one-off. Not done
    where the program froze objects itself (unfreezing would undo it), nor when nothing is
    imported (a long process making clients keeps its young objects young)."""
    import sys
    name = module if absolute else f"{__name__}.{module}"
    loaded = sys.modules.get(name)
    if loaded is not None:  # imported already (a client made again): nothing to pause
        return loaded
    import gc
    enabled = gc.isenabled()
    gc.disable()
    try:
        __import__(name)  # not importlib.import_module: a one-off need not load importlib
        return sys.modules[name]
    finally:
        if enabled:
            if not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return _import_paused(name)
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'singlemongo' has no attribute {name!r}")
    value = getattr(_import_paused(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
