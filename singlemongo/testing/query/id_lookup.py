"""A filter on ``_id`` alone finds its document in the store's table, not by reading the
collection.

The engine tests every document against every filter, so an update or delete by ``_id`` cost
the whole collection, and an update of many documents (rewritten one by one, by ``_id``) cost
its square: 10,000 mixed writes took minutes. A server finds these through its ``_id``
index. The table answers only where its equality is MongoDB's; anything else reads the
collection as before, and a document the table finds is still tested against the filter.
"""
from bson import Int64, ObjectId
from mongomock_ng import collection as mm_collection
from mongomock_ng import filtering

from singlemongo.testing.query import collation

# _id types whose miss in the table is a miss in the collection. A string or an ObjectId
# equals only its own type (a string, when no collation applies). Numbers that MongoDB finds
# equal are equal in Python, and hash alike: the engine files a Decimal128 as a Decimal, and
# 1, 1.0, Int64(1) and Decimal("1") share a key. NaN equals nothing in Python, so it reads the
# collection. A bool is not a number to MongoDB: it is never looked up.
_LOOKED_UP = (str, ObjectId, int, float, Int64)


def find(coll, filter):
    """The documents ``filter`` matches, from the table, or None to read the collection."""
    if type(filter) is not dict or len(filter) != 1 or "_id" not in filter:
        return None
    value = filter["_id"]
    kind = type(value)
    if kind not in _LOOKED_UP or (kind is str and collation.active() is not None):
        return None
    store = coll._store
    store._remove_expired_documents()  # what reading the collection does first (TTL)
    doc = store._documents.get(value)
    if doc is not None and filtering.filter_applies(filter, doc):
        return [doc]
    return None if value != value else []  # NaN: the engine's own equality decides


def apply():
    """Install the lookup in front of the engine's scan (idempotent: conformance.apply)."""
    scan = mm_collection.Collection._iter_documents

    def _iter_documents(self, filter):
        found = find(self, filter)
        return scan(self, filter) if found is None else iter(found)
    mm_collection.Collection._iter_documents = _iter_documents
