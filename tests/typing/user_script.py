"""A user's everyday code, checked with ``mypy --strict`` (tests/test_typing.py): every
return type is what PyMongo's is, and no ``Any`` leaks from singlemongo where PyMongo has a
type. Not run: only type-checked."""
from __future__ import annotations

import datetime
from typing import Any, Mapping, Optional, assert_type

from bson import ObjectId
from bson.codec_options import CodecOptions
from bson.raw_bson import RawBSONDocument
from bson.son import SON

import singlemongo
from singlemongo import (ASCENDING, DESCENDING, DeleteOne, IndexModel, InsertOne, MongoClient,
                         ReadPreference, ReplaceOne, ReturnDocument, UpdateMany, UpdateOne,
                         WriteConcern, get_client)
from singlemongo.collection import Collection
from singlemongo.command_cursor import CommandCursor
from singlemongo.cursor import Cursor
from singlemongo.database import Database
from singlemongo.errors import (BulkWriteError, ConnectionFailure, DuplicateKeyError,
                                OperationFailure, PyMongoError, ServerSelectionTimeoutError)
from singlemongo.read_concern import ReadConcern
from singlemongo.results import (BulkWriteResult, DeleteResult, InsertManyResult,
                                 InsertOneResult, UpdateResult)


def everyday(uri: str) -> None:
    client: MongoClient[dict[str, Any]] = MongoClient(uri, tz_aware=True)
    assert_type(client, MongoClient[dict[str, Any]])
    db = client.get_database("shop", write_concern=WriteConcern(w="majority"))
    assert_type(db, Database[dict[str, Any]])
    orders = db.orders
    assert_type(orders, Collection[dict[str, Any]])
    assert_type(db["orders"], Collection[dict[str, Any]])

    assert_type(orders.insert_one({"sku": "a", "n": 1}), InsertOneResult)
    assert_type(orders.insert_many([{"sku": "b"}]), InsertManyResult)
    assert_type(orders.update_one({"sku": "a"}, {"$inc": {"n": 1}}, upsert=True), UpdateResult)
    assert_type(orders.update_many({}, [{"$set": {"seen": True}}]), UpdateResult)
    assert_type(orders.replace_one({"sku": "b"}, {"sku": "b", "n": 2}), UpdateResult)
    assert_type(orders.delete_one({"sku": "z"}), DeleteResult)
    assert_type(orders.delete_many({"sku": "z"}), DeleteResult)
    result = orders.bulk_write([InsertOne({"sku": "c"}),
                                UpdateOne({"sku": "c"}, {"$set": {"n": 1}}),
                                UpdateMany({}, {"$set": {"m": 1}}),
                                ReplaceOne({"sku": "c"}, {}), DeleteOne({"sku": "c"})],
                               ordered=False)
    assert_type(result, BulkWriteResult)
    assert_type(result.upserted_ids, Optional[dict[int, Any]])

    doc = orders.find_one({"sku": "a"})
    assert_type(doc, Optional[dict[str, Any]])
    cursor = orders.find({"n": {"$gt": 0}}, {"_id": 0}).sort("n", DESCENDING).skip(1).limit(5)
    assert_type(cursor, Cursor[dict[str, Any]])
    for item in cursor:
        assert_type(item, dict[str, Any])
    assert_type(orders.find().to_list(10), list[dict[str, Any]])
    assert_type(orders.count_documents({}), int)
    assert_type(orders.estimated_document_count(), int)
    assert_type(orders.distinct("sku"), list[Any])
    agg = orders.aggregate([{"$group": {"_id": "$sku", "n": {"$sum": 1}}}])
    assert_type(agg, CommandCursor[dict[str, Any]])
    after = orders.find_one_and_update({"sku": "a"}, {"$set": {"x": 1}},
                                       return_document=ReturnDocument.AFTER)
    assert_type(after, Optional[dict[str, Any]])

    assert_type(orders.create_index([("sku", ASCENDING)], unique=True), str)
    assert_type(orders.create_indexes([IndexModel("n", expireAfterSeconds=60)]), list[str])
    assert_type(orders.index_information(), dict[str, Any])
    assert_type(db.list_collection_names(), list[str])
    assert_type(client.list_database_names(), list[str])
    assert_type(db.command("ping"), dict[str, Any])

    secondary = orders.with_options(read_preference=ReadPreference.SECONDARY_PREFERRED,
                                    read_concern=ReadConcern("majority"))
    assert_type(secondary, Collection[dict[str, Any]])
    raw = db.get_collection("orders", codec_options=CodecOptions(RawBSONDocument))
    assert_type(raw, Collection[RawBSONDocument])
    # issue 18: with_options follows the codec's document class, as PyMongo's.
    ordered = orders.with_options(codec_options=CodecOptions(SON))
    assert_type(ordered, Collection[SON[Any, Any]])
    assert_type(ordered.find_one(), Optional[SON[Any, Any]])
    assert_type(db.with_options(codec_options=CodecOptions(SON)), Database[SON[Any, Any]])
    assert_type(client.address, Optional[tuple[str, int]])
    assert_type(client.is_primary, bool)
    client.close()


def errors(uri: str) -> str:
    client = get_client(uri)
    assert_type(client, MongoClient[dict[str, Any]])
    try:
        client.db.c.insert_one({"_id": ObjectId(), "at": datetime.datetime.now()})
    except DuplicateKeyError as exc:
        assert_type(exc.details, Optional[Mapping[str, Any]])
        return "duplicate"
    except BulkWriteError as exc:
        assert_type(exc.details, Mapping[str, Any])  # issue 18: never None
        return str(exc.details["writeErrors"])
    except OperationFailure as exc:
        assert_type(exc.code, Optional[int])
        return str((exc.details or {}).get("codeName", "failed"))
    except ServerSelectionTimeoutError:
        return "no server"
    except ConnectionFailure:
        return "network"
    except PyMongoError as exc:
        return str(exc)
    return singlemongo.__version__
