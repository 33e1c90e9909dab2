"""Unique indexes, checked with a table per index: the engine compared each new document
with every stored one (quadratic: 8,000 inserts under a unique index took 10 s). A table is
rebuilt when documents change other than by an insert or an update (``invalidate``), and
documents are keyed in the store by a hashable form of their ``_id``."""
from bson import Code, Decimal128
from mongomock_ng import DuplicateKeyError
from mongomock_ng import collection as mm_collection
from mongomock_ng import filtering
from mongomock_ng import store as mm_store
from mongomock_ng.helpers import get_value_by_dot

_generation = [0]


def invalidate_unique_tables():
    """Documents changed other than by an insert or an update: unique tables are rebuilt."""
    _generation[0] += 1


def _unique_table(coll, name, index):
    """{index entry: {_id, ...}} for one unique index, built once per generation."""
    store = coll._store
    cached = getattr(store, "_singlemongo_unique", None)
    if cached is None or cached[0] != _generation[0] or store._ttl_indexes:  # TTL deletes
        cached = (_generation[0], {})
        store._singlemongo_unique = cached
    tables = cached[1]
    if name not in tables:
        table, by_id = {}, {}
        for doc in store.documents:
            _add_entries(coll, index, doc, table, by_id)
        tables[name] = (table, by_id)
    return tables[name]


def _entries(coll, index, doc):
    partial = index.get("partialFilterExpression")
    if partial is not None and not filtering.filter_applies(partial, doc):
        return None
    return coll._compute_index_entries(doc, index["key"], index.get("sparse"))


def _add_entries(coll, index, doc, table, by_id):
    entries = _entries(coll, index, doc)
    if entries:
        by_id[_key(doc["_id"])] = entries
        for entry in entries:
            table.setdefault(entry, set()).add(_key(doc["_id"]))


def _key(value):
    """A hashable stand-in for an _id (or index key) that compares as MongoDB does: documents,
    Code and Decimal128 (which bson leaves unhashable; a Decimal128 equals the same number of
    another type, as in MongoDB), and anything else unhashable by its type and repr."""
    if isinstance(value, Code):
        return ("$code", str.__str__(value), _key(value.scope) if value.scope else None)
    if isinstance(value, dict):
        return ("$doc",) + tuple((k, _key(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ("$array",) + tuple(_key(v) for v in value)
    if isinstance(value, Decimal128):
        value = value.to_decimal()
    try:
        hash(value)
    except TypeError:
        return ("$unhashable", type(value).__name__, repr(value))
    return value


def _keyed(method):
    """A collection store method that looks documents up by the hashable form of their _id."""
    return lambda self, key, *rest: method(self, _key(key), *rest)


def duplicate_groups(coll, index):
    """The _ids of documents sharing an entry of ``index``, group by group (what collMod's
    conversion to unique reports as its violations)."""
    table = {}
    for doc in coll._store.documents:
        for entry in _entries(coll, index, doc) or ():
            table.setdefault(entry, []).append(doc["_id"])
    return [group for group in table.values() if len(group) > 1]


def ensure_uniques(self, new_data):
    """Unique indexes checked against a hash table (mongomock-ng scans every document per
    write: 20,000 inserts under one unique index took 530 s). An index collMod marked
    ``prepareUnique`` refuses new duplicates too, keeping the ones it has."""
    for name, index in self._store.indexes.items():
        if not (index.get("unique") or index.get("prepareUnique")):
            continue
        try:
            table, by_id = _unique_table(self, name, index)
            entries = _entries(self, index, new_data) or []
            own = _key(new_data["_id"])
            if any(table.get(entry, set()) - {own} for entry in entries):
                raise DuplicateKeyError("E11000 Duplicate Key Error", 11000, {
                    "keyPattern": dict(index["key"]),
                    "keyValue": {k: get_value_by_dot(new_data, k) for k, _ in index["key"]}})
        except TypeError:  # an unhashable key value: the engine's own scan
            _ORIGINAL_ENSURE_UNIQUES(self, new_data)
            continue
        for entry in by_id.pop(own, ()):
            table.get(entry, set()).discard(own)
        _add_entries(self, index, new_data, table, by_id)


def insert_document(coll, doc):
    """Insert one document decoded from the wire: the engine's rules (duplicate _id, the
    validator, unique indexes) without its per-document BSON re-encoding."""
    if coll._store.options.get("validator"):
        coll.insert_one(doc)
        return
    key = doc["_id"]  # the store's methods key it (see apply)
    if key in coll._store:
        raise DuplicateKeyError("E11000 Duplicate Key Error", 11000,
                                {"keyPattern": {"_id": 1}, "keyValue": {"_id": doc["_id"]}})
    coll._store[key] = doc
    try:
        coll._ensure_uniques(doc)
    except DuplicateKeyError:
        del coll._store[key]
        raise


_ORIGINAL_ENSURE_UNIQUES = mm_collection.Collection._ensure_uniques


def apply():
    """Install the tables (called once by conformance.apply)."""
    mm_collection.Collection._ensure_uniques = ensure_uniques
    for name in ("__contains__", "__getitem__", "__setitem__", "__delitem__"):
        setattr(mm_store.CollectionStore, name, _keyed(getattr(mm_store.CollectionStore, name)))
