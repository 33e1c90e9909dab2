"""Collection options a MongoDB 7.0 server keeps and acts on: capped collections (oldest
documents go first), clustered indexes, time-series collections (which take duplicate
``_id``s), change-stream pre- and post-images, and ``collMod`` changing them.

The options live with the collection in the engine's store (``CollectionStore.options``),
so a drop, a rename or a reset forgets them as it forgets the documents.
"""
import itertools

import bson

from singlemongo.testing.query import views
from singlemongo.testing.query.codes import CommandError
from singlemongo.testing.query.reads import exists, namespace

# Options the engine itself applies (document validation).
ENGINE_OPTIONS = frozenset({"validator", "validationLevel", "validationAction"})
# Options this module keeps and acts on.
KEPT_OPTIONS = frozenset({"capped", "size", "max", "clusteredIndex", "timeseries",
                          "expireAfterSeconds", "changeStreamPreAndPostImages",
                          "storageEngine", "indexOptionDefaults", "comment", "viewOn",
                          "pipeline", "collation"})
# Time-series granularity -> the bucket span the server gives it (seconds).
GRANULARITIES = {"seconds": 3600, "minutes": 86400, "hours": 2592000}
# Time-series documents are not keyed by their _id, which may repeat.
_TIMESERIES_KEYS = itertools.count()


def split(options):
    """(the engine's options, the kept ones), or CommandError for an option MongoDB rejects
    or this simulator does not implement (named)."""
    unknown = set(options) - ENGINE_OPTIONS - KEPT_OPTIONS
    if unknown:
        raise CommandError(238, f"the simulated server does not implement the collection "
                                f"option(s) {sorted(unknown)}")
    kept = {k: v for k, v in options.items() if k in KEPT_OPTIONS and k != "comment"}
    views.check_options(kept)
    _check(kept)
    return {k: v for k, v in options.items() if k in ENGINE_OPTIONS}, kept


def _check(kept):
    if kept.get("capped"):
        size = kept.get("size")
        if not isinstance(size, (int, float)) or isinstance(size, bool) or size <= 0:
            raise CommandError(72, "the 'size' field is required when 'capped' is true")
        kept["size"] = max(4096, int(size) + (-int(size)) % 256)  # rounded as the server does
    elif "size" in kept or "max" in kept:
        raise CommandError(72, "the 'size' and 'max' fields require 'capped' to be true")
    clustered = kept.get("clusteredIndex")
    if clustered is not None:
        if not isinstance(clustered, dict) or clustered.get("key") != {"_id": 1} or \
                clustered.get("unique") is not True:
            raise CommandError(2, "The clusteredIndex option requires key {_id: 1} and "
                                  "unique: true")
        kept["clusteredIndex"] = {"v": 2, **clustered}
    series = kept.get("timeseries")
    if series is not None:
        if not isinstance(series, dict) or not isinstance(series.get("timeField"), str):
            raise CommandError(40414, "BSON field 'timeseries.timeField' is missing but a "
                                      "required field")
        series = kept["timeseries"] = dict(series)
        if "bucketRoundingSeconds" not in series:  # the server fills in the granularity's span
            granularity = series.setdefault("granularity", "seconds")
            if granularity not in GRANULARITIES:
                raise CommandError(2, f"Invalid timeseries granularity: {granularity!r}")
            series.setdefault("bucketMaxSpanSeconds", GRANULARITIES[granularity])


def create(store, ns, options):
    """Create the collection with its options (the caller checked it does not exist)."""
    engine, kept = split(options)
    db = store.client[ns[0]]
    db.create_collection(ns[1], **engine)
    coll_store = store.collection(*ns)._store
    coll_store.options = {**engine, **kept}


def options_of(coll):
    return coll._store.options


def collection_type(coll):
    options = options_of(coll)
    if "viewOn" in options:
        return "view"
    return "timeseries" if "timeseries" in options else "collection"


def id_index(coll):
    """The _id index a listIndexes shows: the clustered index when there is one."""
    clustered = options_of(coll).get("clusteredIndex")
    if clustered is not None:
        return {"v": clustered.get("v", 2), "key": {"_id": 1},
                "name": clustered.get("name", "_id_"), "unique": True, "clustered": True}
    return None


def insert(coll, doc, insert_document):
    """Insert ``doc`` with the collection's rules: a time-series collection keeps every
    document (its _ids may repeat); a capped one then drops its oldest beyond its limits."""
    options = options_of(coll)
    if "timeseries" in options:
        time_field = options["timeseries"]["timeField"]
        if time_field not in doc:
            raise CommandError(2, f"'{time_field}' must be present and contain a valid BSON "
                                  f"UTC datetime value")
        coll._store._documents[("$timeseries", next(_TIMESERIES_KEYS))] = doc
        return
    insert_document(coll, doc)
    if options.get("capped"):
        _trim(coll, options)


def _trim(coll, options):
    documents = coll._store._documents
    limit, size = options.get("max"), options["size"]
    total = sum(len(bson.encode(d)) for d in documents.values())
    while documents and ((limit and len(documents) > limit) or total > size):
        _, oldest = documents.popitem(last=False)
        total -= len(bson.encode(oldest))


# collMod's fields that change a collection option (its `index` field changes an index).
MODIFIABLE = frozenset({"changeStreamPreAndPostImages", "validator", "validationLevel",
                        "validationAction", "expireAfterSeconds"})


def coll_mod(store, server, cmd):
    ns = namespace(cmd, "collMod")
    if not exists(store, ns):
        raise CommandError(26, f"ns does not exist: {ns[0]}.{ns[1]}")
    coll = store.collection(*ns)
    reply = {"ok": 1}
    for key, value in cmd.items():
        if key in MODIFIABLE:
            options_of(coll)[key] = value
        elif key == "index":
            reply.update(_modify_index(coll, value))
    return reply


def _modify_index(coll, spec):
    if not isinstance(spec, dict) or not ({"name", "keyPattern"} & set(spec)):
        raise CommandError(2, "collMod's index must name the index (name or keyPattern)")
    for name, index in coll._store.indexes.items():
        if name == spec.get("name") or dict(index.get("key", ())) == spec.get("keyPattern"):
            if spec.get("unique"):
                _convert_to_unique(coll, index)
            changes = {}
            for field in ("hidden", "expireAfterSeconds", "prepareUnique", "unique"):
                if field in spec:
                    changes[f"{field}_old"] = index.get(field, 0 if field ==
                                                        "expireAfterSeconds" else False)
                    index[field] = changes[f"{field}_new"] = spec[field]
            return changes
    raise CommandError(27, f"cannot find index {spec}")


def _convert_to_unique(coll, index):
    """collMod {index: {unique: true}}: only an index already prepareUnique, and only when no
    two documents share an entry (each group is a violation, as MongoDB 6.0 reports them)."""
    from singlemongo.testing.query.uniques import duplicate_groups
    if not index.get("prepareUnique"):
        raise CommandError(72, "Cannot make index unique with 'prepareUnique=false'. Run "
                               "collMod to set it first.")
    violations = [{"ids": group} for group in duplicate_groups(coll, index)]
    if violations:
        raise CommandError(359, "Cannot convert the index to unique. Please resolve "
                                "conflicting documents before running collMod again.",
                           violations=violations)


COMMANDS = {"collMod": coll_mod}
