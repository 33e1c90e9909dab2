"""The change events of catalog commands (change streams spec, "Change Stream Events"):
drop, rename and dropDatabase for every stream; create, createIndexes, dropIndexes, modify
(collMod) and shardCollection only for streams showing expanded events, with an
``operationDescription`` as a 7.0 server writes it.

``record(log, name, cmd, prior)`` runs once its command succeeded; ``prior`` is what the
log noted before the command ran (``ChangeLog._catalog_before``).
"""
from singlemongo.testing.query import catalog


def indexes(store, ns):
    """A collection's index documents (empty when it does not exist)."""
    if not isinstance(ns[1], str) or ns[1] not in \
            store.client[ns[0]]._get_created_collections():
        return []
    return catalog.index_documents(store, ns)


def _options(cmd, name):
    return {k: v for k, v in cmd.items() if k != name and k not in catalog.GENERIC_FIELDS}


def _drop(log, name, cmd, prior):
    ns = (cmd["$db"], cmd["drop"])
    log.record(ns, "drop")
    log.uuids.pop(ns, None)


def _rename(log, name, cmd, prior):
    source = tuple(cmd["renameCollection"].split(".", 1))
    target = tuple(cmd["to"].split(".", 1))
    to = {"db": target[0], "coll": target[1]}
    description = {"to": to, **({"dropTarget": prior} if prior is not None else {})}
    log.record(source, "rename", to=to, _description=description)
    log.uuids[target] = log.uuids.pop(source)


def _drop_database(log, name, cmd, prior):
    db = cmd["$db"]
    for coll in prior:  # a database's collections go first, each a drop event
        log.record((db, coll), "drop")
    log.record((db, None), "dropDatabase")
    for ns in [ns for ns in log.uuids if ns[0] == db]:
        del log.uuids[ns]


def _create_indexes(log, name, cmd, prior):
    log.record((cmd["$db"], cmd["createIndexes"]), "createIndexes", _expanded=True,
               operationDescription={"indexes": list(cmd.get("indexes") or [])})


def _drop_indexes(log, name, cmd, prior):
    ns = (cmd["$db"], cmd["dropIndexes"])
    left = {i["name"] for i in indexes(log.store, ns)}
    dropped = [i for i in prior if i["name"] not in left]
    log.record(ns, "dropIndexes", _expanded=True, operationDescription={"indexes": dropped})


def _modify(log, name, cmd, prior):
    log.record((cmd["$db"], cmd["collMod"]), "modify", _expanded=True,
               operationDescription=_options(cmd, "collMod"))


def _shard_collection(log, name, cmd, prior):
    ns = tuple(cmd["shardCollection"].split(".", 1))
    log.record(ns, "shardCollection", _expanded=True, operationDescription={
        "shardKey": cmd["key"], "unique": bool(cmd.get("unique", False)),
        "presplitHashedZones": False})


# The catalog command -> how its event is recorded.
EVENTS = {"drop": _drop, "renameCollection": _rename, "dropDatabase": _drop_database,
          "createIndexes": _create_indexes, "dropIndexes": _drop_indexes, "collMod": _modify,
          "shardCollection": _shard_collection}


def record(log, name, cmd, prior):
    if name in EVENTS:
        EVENTS[name](log, name, cmd, prior)
