"""Views and a collection's default collation, as a MongoDB 7.0 server keeps them.

A view is created with ``viewOn`` and a ``pipeline``; a read of it (find, count, distinct,
aggregate) runs the pipeline over its source, itself maybe a view, then the read's own
filter. Writes and index builds on a view fail with 166 CommandNotSupportedOnView. A view or
collection created with a ``collation`` compares strings by it unless a command names its own.
"""
from singlemongo.testing.query import collation
from singlemongo.testing.query.codes import CommandError

# Commands that change a collection's documents or indexes: refused on a view.
WRITES = frozenset({"insert", "update", "delete", "findAndModify", "createIndexes",
                    "dropIndexes", "collMod"})
# Commands whose first value names the collection they read or write.
ON_A_COLLECTION = frozenset({"find", "count", "distinct", "aggregate", "insert", "update",
                             "delete", "findAndModify", "createIndexes", "mapReduce"})
MAX_DEPTH = 20  # the server's limit on views of views


def check_options(options):
    """A view's options: ``viewOn`` a collection name, ``pipeline`` an array of stages; the
    collation document normalized as the server reports it."""
    if "viewOn" in options:
        if not isinstance(options["viewOn"], str) or not options["viewOn"]:
            raise CommandError(2, f"'viewOn' must be a non-empty collection name, got "
                                  f"{options['viewOn']!r}")
        pipeline = options.setdefault("pipeline", [])
        if not isinstance(pipeline, list) or not all(isinstance(s, dict) for s in pipeline):
            raise CommandError(14, "'pipeline' of a view must be an array of stages")
        other = set(options) - {"viewOn", "pipeline", "collation"}
        if other:
            raise CommandError(2, f"option(s) {sorted(other)} cannot be given for a view")
    elif "pipeline" in options:
        raise CommandError(2, "'pipeline' requires 'viewOn'")
    if "collation" in options:
        parsed = collation.parse(options["collation"])
        if parsed is None:
            del options["collation"]
        else:
            options["collation"] = parsed.document()


def _options(store, ns):
    if ns[1] not in store.client[ns[0]]._get_created_collections():
        return {}
    return getattr(store.collection(*ns)._store, "options", None) or {}


def view_of(store, ns):
    """(source namespace, pipeline) when ``ns`` is a view, else None."""
    options = _options(store, ns)
    if "viewOn" in options:
        return (ns[0], options["viewOn"]), options["pipeline"]
    return None


def documents(store, ns, run_pipeline, depth=0):
    """A view's documents: its pipeline over its source's (a view's views resolved)."""
    source, pipeline = view_of(store, ns)
    if depth >= MAX_DEPTH:
        raise CommandError(165, f"View depth too deep or view cycle detected; maximum depth "
                                f"is {MAX_DEPTH}")
    if view_of(store, source) is not None:
        docs = documents(store, source, run_pipeline, depth + 1)
    else:
        docs = list(store.collection(*source).find())
    return run_pipeline(docs, pipeline)


def check_command(store, name, cmd):
    """A write to a view is refused as the server refuses it (166)."""
    if name in WRITES:
        target = cmd.get(name)
        if isinstance(target, str) and view_of(store, (cmd["$db"], target)) is not None:
            raise CommandError(166, f"Namespace {cmd['$db']}.{target} is a view, not a "
                                    f"collection")


def default_collation(store, name, cmd):
    """The collation the command's collection (or view) was created with, or None."""
    if name not in ON_A_COLLECTION or "collation" in cmd:
        return None
    target = cmd.get(name)
    if not isinstance(target, str):
        return None
    spec = _options(store, (cmd["$db"], target)).get("collation")
    return collation.parse(spec) if spec else None
