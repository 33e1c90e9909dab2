"""Databases, collections and indexes, answered as a MongoDB 7.0 server does."""
from mongomock_ng import filtering

from singlemongo.testing.query import collection_options, partial, text
from singlemongo.testing.query.codes import ATLAS_ONLY, CommandError
from singlemongo.testing.query.reads import DEFAULT_BATCH, collection_names, exists, namespace

ID_INDEX = {"v": 2, "key": {"_id": 1}, "name": "_id_"}
# Fields of any command, not options of the collection ``create`` makes.
GENERIC_FIELDS = frozenset({"create", "$db", "lsid", "txnNumber", "$clusterTime", "writeConcern",
                            "readConcern", "$readPreference", "comment", "apiVersion",
                            "apiStrict", "apiDeprecationErrors", "startTransaction",
                            "autocommit", "maxTimeMS"})
INDEX_OPTIONS = ("unique", "sparse", "partialFilterExpression", "expireAfterSeconds",
                 "collation", "hidden", "weights", "default_language", "2dsphereIndexVersion",
                 "background", "language_override", "textIndexVersion", "bits", "min", "max")


def index_documents(store, ns):
    coll = store.collection(*ns)
    info = coll.index_information()
    docs = []
    clustered = collection_options.id_index(coll)
    for name, spec in info.items():
        if clustered is not None and name == "_id_":
            docs.append(clustered)
            continue
        doc = {"v": spec.get("v", 2), "key": dict(spec["key"]), "name": name}
        doc.update({k: v for k, v in spec.items() if k not in ("v", "key", "ns")})
        docs.append(doc)
    return docs


def _index_name(key):
    return "_".join(f"{k}_{v}" for k, v in key.items())


def _check_index(existing, spec):
    """Whether ``spec`` already exists; an index is its key pattern and its collation (the
    same key may be indexed under several collations), and its name is unique."""
    name, key = spec["name"], dict(spec["key"])
    for index in existing:
        same_key = list(index["key"].items()) == list(key.items()) and \
            _locale(index) == _locale(spec)
        if index["name"] == name and not same_key:
            raise CommandError(86, f"An existing index has the same name as the requested index. "
                                   f"Requested index: {spec}, existing index: {index}")
        if same_key and index["name"] != name:
            raise CommandError(85, f"Index already exists with a different name: {index['name']}")
    return any(index["name"] == name for index in existing)


def build_index(coll, spec):
    """Build the index ``spec`` describes; the options the engine does not keep (collation,
    background, hidden, weights, ...) are kept beside it, as listIndexes shows them."""
    options = {k: spec[k] for k in INDEX_OPTIONS if k in spec}
    coll.create_index(list(spec["key"].items()), name=spec["name"], **options)
    kept = coll._store.indexes[spec["name"]]
    kept.update({k: v for k, v in options.items() if k not in kept})


def _locale(spec):
    collation = spec.get("collation")
    locale = collation.get("locale") if isinstance(collation, dict) else None
    return None if locale == "simple" else locale


# Index types a key pattern's string value may name (the manual's "Index Types").
INDEX_PLUGINS = frozenset({"2d", "2dsphere", "text", "hashed"})


def _check_key_pattern(spec):
    """Each value of a key pattern is a non-zero number or an index type's name; anything else
    is CannotCreateIndex (67), as index_key_validate has it ("Unknown index plugin")."""
    for field, value in spec["key"].items():
        if isinstance(value, str):
            problem = None if value in INDEX_PLUGINS else f"Unknown index plugin '{value}'"
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            problem = None if value != 0 else "Values in the index key pattern can't be 0"
        else:
            problem = (f"Values in v:2 index key pattern cannot be of type "
                       f"{type(value).__name__}. Only numbers > 0, numbers < 0, and strings "
                       f"are allowed.")
        if problem:
            raise CommandError(67, f"Error in specification {{ key: {spec['key']}, name: "
                                   f"\"{spec['name']}\" }} :: caused by :: {problem}")


def create_indexes(store, server, cmd):
    ns = namespace(cmd, "createIndexes")
    specs = cmd.get("indexes")
    if not isinstance(specs, list) or not specs:
        raise CommandError(2, "Must specify at least one index to create")
    created = not exists(store, ns)
    if created:
        store.client[ns[0]].create_collection(ns[1])
    coll = store.collection(*ns)
    before = index_documents(store, ns)
    for spec in specs:
        if not isinstance(spec, dict) or not isinstance(spec.get("key"), dict) or not spec["key"]:
            raise CommandError(9, "The 'key' field is a required property of an index "
                                  "specification")
        spec = dict(spec, name=spec.get("name") or _index_name(spec["key"]))
        _check_key_pattern(spec)
        if text.is_text_spec(spec["key"]):
            spec = text.stored_spec(spec)
        if "partialFilterExpression" in spec:
            partial.check(spec["partialFilterExpression"])
        if _check_index(index_documents(store, ns), spec):
            continue
        build_index(coll, spec)
    after = index_documents(store, ns)
    return {"ok": 1, "createdCollectionAutomatically": created,
            "numIndexesBefore": len(before) if not created else 1, "numIndexesAfter": len(after)}


def list_indexes(store, server, cmd):
    ns = namespace(cmd, "listIndexes")
    if not exists(store, ns):
        raise CommandError(26, f"ns does not exist: {ns[0]}.{ns[1]}")
    batch = (cmd.get("cursor") or {}).get("batchSize", DEFAULT_BATCH)
    return store.cursor_reply(server, ns, index_documents(store, ns), batch)


def drop_indexes(store, server, cmd):
    ns = namespace(cmd, "dropIndexes")
    if not exists(store, ns):
        raise CommandError(26, f"ns not found {ns[0]}.{ns[1]}")
    coll = store.collection(*ns)
    existing = index_documents(store, ns)
    wanted = cmd.get("index")
    if wanted == "*":
        coll.drop_indexes()
        return {"ok": 1, "nIndexesWas": len(existing)}
    names = wanted if isinstance(wanted, list) else [wanted]
    for name in names:
        if isinstance(name, dict):
            match = [i["name"] for i in existing if list(i["key"].items()) == list(name.items())]
            if not match:
                raise CommandError(27, f"can't find index with key: {name}")
            name = match[0]
        if name == "_id_":
            raise CommandError(72, "cannot drop _id index")
        if name not in {i["name"] for i in existing}:
            raise CommandError(27, f"index not found with name [{name}]")
        coll.drop_index(name)
    return {"ok": 1, "nIndexesWas": len(existing)}


def _collection_info(store, db, name):
    coll = store.client[db][name]
    kind = collection_options.collection_type(coll)
    info = {"name": name, "type": kind, "options": coll.options(),
            "info": {"readOnly": kind == "view"}}
    if info["type"] == "collection" and "clusteredIndex" not in info["options"]:
        info["idIndex"] = ID_INDEX
    return info


def list_collections(store, server, cmd):
    db = cmd["$db"]
    docs = [_collection_info(store, db, n) for n in sorted(collection_names(store, db))]
    query = cmd.get("filter") or {}
    docs = [d for d in docs if filtering.filter_applies(query, d)]
    if cmd.get("nameOnly"):
        docs = [{"name": d["name"], "type": d["type"]} for d in docs]
    batch = (cmd.get("cursor") or {}).get("batchSize", DEFAULT_BATCH)
    return store.cursor_reply(server, (db, "$cmd.listCollections"), docs, batch)


def create(store, server, cmd):
    ns = namespace(cmd, "create")
    if exists(store, ns):
        raise CommandError(48, f"Collection {ns[0]}.{ns[1]} already exists.")
    options = {k: v for k, v in cmd.items() if k not in GENERIC_FIELDS}
    collection_options.create(store, ns, options)
    return {"ok": 1}


def drop(store, server, cmd):
    ns = namespace(cmd, "drop")
    if not exists(store, ns):  # MongoDB 7.0: dropping what does not exist succeeds
        return {"ok": 1}
    indexes = len(index_documents(store, ns))
    store.client[ns[0]].drop_collection(ns[1])
    return {"ok": 1, "ns": f"{ns[0]}.{ns[1]}", "nIndexesWas": indexes}


def drop_database(store, server, cmd):
    store.client.drop_database(cmd["$db"])
    return {"ok": 1, "dropped": cmd["$db"]}


SYSTEM_DATABASES = ("admin", "config", "local")  # a server always lists them


def list_databases(store, server, cmd):
    names = sorted({*SYSTEM_DATABASES, *(n for n in store.client.list_database_names()
                                         if store.client[n].list_collection_names())})
    docs = [{"name": n, "sizeOnDisk": 8192, "empty": False} for n in names]
    docs = [d for d in docs if filtering.filter_applies(cmd.get("filter") or {}, d)]
    if cmd.get("nameOnly"):
        return {"ok": 1, "databases": [{"name": d["name"]} for d in docs]}
    return {"ok": 1, "databases": docs, "totalSize": 8192 * len(docs),
            "totalSizeMb": 0}


def rename_collection(store, server, cmd):
    source, target = cmd.get("renameCollection"), cmd.get("to")
    if not all(isinstance(n, str) and "." in n for n in (source, target)):
        raise CommandError(73, f"Invalid namespace specified: {source!r} -> {target!r}")
    src, dst = tuple(source.split(".", 1)), tuple(target.split(".", 1))
    if not exists(store, src):
        raise CommandError(26, f"Source collection {source} does not exist")
    if exists(store, dst):
        if not cmd.get("dropTarget"):
            raise CommandError(48, "target namespace exists")
        store.client[dst[0]].drop_collection(dst[1])
    docs = list(store.collection(*src).find())
    indexes = [i for i in index_documents(store, src) if i["name"] != "_id_"]
    store.client[dst[0]].create_collection(dst[1])
    if docs:
        store.collection(*dst).insert_many(docs)
    for index in indexes:
        build_index(store.collection(*dst), index)
    store.client[src[0]].drop_collection(src[1])
    return {"ok": 1}


def check_metadata_consistency(store, server, cmd):
    """A mongos's report of metadata inconsistencies: one shard, so never any."""
    if getattr(server, "role", None) != "mongos":
        raise CommandError(20, "checkMetadataConsistency can only be run on a mongos")
    batch = (cmd.get("cursor") or {}).get("batchSize", DEFAULT_BATCH)
    return store.cursor_reply(server, (cmd["$db"], "$cmd.checkMetadataConsistency"), [], batch)


def shard_collection(store, server, cmd):
    """A mongos shards a collection (creating it if needed). The simulated cluster keeps one
    copy of the data, so sharding changes where nothing lives: it is recorded, and a change
    stream showing expanded events reports it."""
    if getattr(server, "role", None) != "mongos":
        raise CommandError(59, "no such command: 'shardCollection'")
    if cmd.get("$db") != "admin":
        raise CommandError(13, "shardCollection may only be run against the admin database.")
    target = cmd.get("shardCollection")
    if not isinstance(target, str) or "." not in target or not isinstance(cmd.get("key"), dict):
        raise CommandError(2, f"shardCollection needs a namespace and a key, not {target!r}")
    ns = tuple(target.split(".", 1))
    if not exists(store, ns):
        collection_options.create(store, ns, {})
    return {"ok": 1, "collectionsharded": target}


def search_index_command(store, server, cmd):
    raise CommandError(115, ATLAS_ONLY)


COMMANDS = {"checkMetadataConsistency": check_metadata_consistency,
            "createSearchIndexes": search_index_command,
            "updateSearchIndex": search_index_command, "dropSearchIndex": search_index_command,
            "createIndexes": create_indexes, "listIndexes": list_indexes,
            "dropIndexes": drop_indexes, "listCollections": list_collections, "create": create,
            "drop": drop, "dropDatabase": drop_database, "listDatabases": list_databases,
            "renameCollection": rename_collection, "shardCollection": shard_collection}
