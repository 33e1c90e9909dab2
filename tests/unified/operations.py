"""Entity operations of the unified format, called the way a PyMongo user calls them.

Each operation names the driver method and how the file's camelCase arguments become that
method's arguments (PyMongo's names: ``array_filters``, ``return_document``, and the raw
command options PyMongo passes through ``**kwargs`` for aggregate and the counts). A method
the driver lacks, or arguments it does not take, skip the test as a missing API; a result
becomes the document the file expects.
"""
from .entities import accepts, read_concern, read_preference, snake, write_concern
from .skips import REMOVED, Skip, missing_api

COMMON = {"fieldName": "key", "arrayFilters": "array_filters", "returnDocument": "return_document",
          "bypassDocumentValidation": "bypass_document_validation", "batchSize": "batch_size",
          "maxTimeMS": "max_time_ms", "allowDiskUse": "allow_disk_use", "newName": "new_name",
          "to": "new_name", "readPreference": "read_preference", "writeConcern": "write_concern",
          "readConcern": "read_concern", "noCursorTimeout": "no_cursor_timeout",
          "maxCommitTimeMS": "max_commit_time_ms", "maxAwaitTimeMS": "max_await_time_ms"}
# The format's cursorType names -> singlemongo.CursorType's attribute.
CURSOR_TYPES = {"nonTailable": "NON_TAILABLE", "tailable": "TAILABLE",
                "tailableAwait": "TAILABLE_AWAIT"}
# PyMongo passes these through as command options (**kwargs), in the command's own names.
RAW_OPTIONS = {"aggregate": {"batchSize", "allowDiskUse", "maxTimeMS", "collation",
                             "bypassDocumentValidation", "hint", "maxAwaitTimeMS"},
               "count_documents": {"skip", "limit", "maxTimeMS", "collation", "hint"},
               "estimated_document_count": {"maxTimeMS"},
               "distinct": {"collation", "maxTimeMS"},
               "find_one_and_delete": {"collation", "maxTimeMS"},
               "find_one_and_replace": {"collation", "maxTimeMS", "bypassDocumentValidation"},
               "find_one_and_update": {"collation", "maxTimeMS", "bypassDocumentValidation"},
               "create_index": {"name", "unique", "sparse", "expireAfterSeconds",
                                "partialFilterExpression", "collation", "hidden"},
               "rename": {"dropTarget"},
               # A collection's options go into the create command as named there.
               "create_collection": {"capped", "size", "max", "clusteredIndex", "timeseries",
                                     "changeStreamPreAndPostImages", "expireAfterSeconds",
                                     "validator", "validationLevel", "validationAction",
                                     "viewOn", "pipeline", "collation", "storageEngine",
                                     "indexOptionDefaults", "encryptedFields"}}


def python_args(runner, method_name, args):
    out = {}
    raw = RAW_OPTIONS.get(method_name, set())
    for key, value in args.items():
        if key == "session":
            value = runner.entities.get(value)
        elif key == "readPreference":
            value = read_preference(value)
        elif key == "writeConcern":
            value = write_concern(value)
        elif key == "readConcern":
            value = read_concern(value)
        elif key == "returnDocument":
            if value.lower() not in ("before", "after"):
                raise AssertionError(f"returnDocument must be Before or After, not {value!r}")
            value = value.lower() == "after"
        elif key == "cursorType" and method_name == "find":
            import singlemongo
            value = getattr(singlemongo.CursorType, CURSOR_TYPES[value])
        if key in raw:
            out[key] = value
        else:
            out[COMMON.get(key, snake(key) if key not in ("filter", "let") else key)] = value
    return out


def call(runner, entity, method_name, args, what):
    if not callable(getattr(type(entity), method_name, None)):  # not a database named so
        raise Skip(missing_api(f"{what}.{method_name}"))
    method = getattr(entity, method_name)
    kwargs = python_args(runner, method_name, args)
    max_await = kwargs.pop("max_await_time_ms", None) if method_name == "find" else None
    accepts(method, kwargs, f"{what}.{method_name}")
    if max_await is not None:  # a PyMongo user sets it on the cursor, before it runs
        return method(**kwargs).max_await_time_ms(max_await)
    return method(**kwargs)


def document(result):
    """A returned model object as the document the test expects (an unacknowledged write's
    result says nothing, as the format allows)."""
    name = type(result).__name__
    if getattr(result, "acknowledged", True) is False:
        return {}
    if name == "InsertOneResult":
        return {"insertedId": result.inserted_id}
    if name == "InsertManyResult":
        return {"insertedIds": {str(i): v for i, v in enumerate(result.inserted_ids)}}
    if name in ("UpdateResult", "_ClientUpdateResult"):
        upserted = result.upserted_id
        return {"matchedCount": result.matched_count, "modifiedCount": result.modified_count,
                "upsertedCount": 0 if upserted is None else 1,
                **({"upsertedId": upserted} if upserted is not None else {})}
    if name == "DeleteResult":
        return {"deletedCount": result.deleted_count}
    if name == "ClientBulkWriteResult":
        return client_bulk_result(result)
    if name == "BulkWriteResult":
        return {"insertedCount": result.inserted_count, "matchedCount": result.matched_count,
                "modifiedCount": result.modified_count, "deletedCount": result.deleted_count,
                "upsertedCount": result.upserted_count,
                "upsertedIds": {str(k): v for k, v in result.upserted_ids.items()}}
    return result


def client_bulk_result(result):
    """A ClientBulkWriteResult as the format's document (its verbose maps keyed by index)."""
    verbose = {"insertResults": {}, "updateResults": {}, "deleteResults": {}}
    if result.has_verbose_results:
        verbose["insertResults"] = {str(i): document(r) for i, r in result.insert_results.items()}
        verbose["updateResults"] = {str(i): {
            "matchedCount": r.matched_count, "modifiedCount": r.modified_count,
            **({"upsertedId": r.upserted_id} if r.did_upsert else {})}
            for i, r in result.update_results.items()}
        verbose["deleteResults"] = {str(i): document(r) for i, r in result.delete_results.items()}
    return {"insertedCount": result.inserted_count, "matchedCount": result.matched_count,
            "modifiedCount": result.modified_count, "deletedCount": result.deleted_count,
            "upsertedCount": result.upserted_count, **verbose}


def iterate(result):
    return [dict(d) for d in result]


def bulk_requests(requests):
    """{insertOne: {...}} documents as the driver's write models."""
    try:
        import singlemongo as sm
        classes = {"insertOne": sm.InsertOne, "updateOne": sm.UpdateOne,
                   "updateMany": sm.UpdateMany, "replaceOne": sm.ReplaceOne,
                   "deleteOne": sm.DeleteOne, "deleteMany": sm.DeleteMany}
    except AttributeError:
        raise Skip(missing_api("the write models (InsertOne, UpdateOne, ...)")) from None
    models = []
    for request in requests:
        (kind, args), = request.items()
        kwargs = {COMMON.get(k, snake(k)): v for k, v in args.items()}
        models.append(classes[kind](**kwargs))
    return models


# (entity kind, operation) -> how to run it: (method name, result transform) or a function.
COLLECTION = {
    "find": ("find", iterate), "findOne": ("find_one", None), "aggregate": ("aggregate", iterate),
    "countDocuments": ("count_documents", None), "count": ("count", None),
    "estimatedDocumentCount": ("estimated_document_count", None), "distinct": ("distinct", None),
    "insertOne": ("insert_one", document), "insertMany": ("insert_many", document),
    "updateOne": ("update_one", document), "updateMany": ("update_many", document),
    "replaceOne": ("replace_one", document), "deleteOne": ("delete_one", document),
    "deleteMany": ("delete_many", document), "findOneAndUpdate": ("find_one_and_update", None),
    "findOneAndReplace": ("find_one_and_replace", None),
    "findOneAndDelete": ("find_one_and_delete", None), "bulkWrite": ("bulk_write", document),
    "createIndex": ("create_index", None), "dropIndex": ("drop_index", None),
    "dropIndexes": ("drop_indexes", None), "listIndexes": ("list_indexes", iterate),
    "listIndexNames": ("index_information", list), "drop": ("drop", None),
    "rename": ("rename", None), "createFindCursor": ("find", lambda c: NonLazyCursor(c)),  # defined below
    "createChangeStream": ("watch", None), "mapReduce": ("map_reduce", None),
    "createSearchIndex": ("create_search_index", None),
    "createSearchIndexes": ("create_search_indexes", None),
    "dropSearchIndex": ("drop_search_index", None),
    "updateSearchIndex": ("update_search_index", None),
    "listSearchIndexes": ("list_search_indexes", iterate),
}
DATABASE = {
    "runCommand": ("command", None), "aggregate": ("aggregate", iterate),
    "listCollections": ("list_collections", iterate),
    "listCollectionNames": ("list_collection_names", None),
    "listCollectionObjects": ("list_collections", iterate),
    "createCollection": ("create_collection", None), "dropCollection": ("drop_collection", None),
    "modifyCollection": ("command", None), "runCursorCommand": ("cursor_command", iterate),
    "createCommandCursor": ("cursor_command", None), "createChangeStream": ("watch", None),
}
CLIENT = {
    "listDatabases": ("list_databases", iterate), "listDatabaseNames": ("list_database_names", None),
    "listDatabaseObjects": ("list_databases", iterate), "close": ("close", None),
    "clientBulkWrite": ("bulk_write", document), "createChangeStream": ("watch", None),
    "appendMetadata": ("append_metadata", None), "dropDatabase": ("drop_database", None),
}
SESSION = {
    "startTransaction": ("start_transaction", None),
    "commitTransaction": ("commit_transaction", None),
    "abortTransaction": ("abort_transaction", None), "endSession": ("end_session", None),
    "withTransaction": ("with_transaction", None),
}
# GridFS spec operations on a bucket entity, with their arguments as the methods name them.
BUCKET = {
    "upload": ("upload_from_stream", None), "download": ("open_download_stream", "read"),
    "downloadByName": ("open_download_stream_by_name", "read"), "delete": ("delete", None),
    "deleteByName": ("delete_by_name", None), "rename": ("rename", None),
    "renameByName": ("rename_by_name", None), "drop": ("drop", None), "find": ("find", iterate),
}
BUCKET_ARGS = {"id": "file_id", "newFilename": "new_filename", "chunkSizeBytes":
               "chunk_size_bytes"}
KINDS = {"Collection": ("Collection", COLLECTION), "Database": ("Database", DATABASE),
         "MongoClient": ("MongoClient", CLIENT), "ClientSession": ("ClientSession", SESSION),
         "GridFSBucket": ("GridFSBucket", BUCKET)}


def prepare(name, args):
    """Arguments whose shape differs between the file and a PyMongo call."""
    args = dict(args)
    if name in ("runCommand", "runCursorCommand", "createCommandCursor"):
        args.pop("commandName", None)
    if name == "createCollection":
        # As PyMongo's runner: the file expects the create alone, no listCollections first.
        args["name"], args["check_exists"] = args.pop("collection"), False
    if name == "dropCollection":
        args["name_or_collection"] = args.pop("collection")
    if name == "appendMetadata":  # as PyMongo's runner: a DriverInfo from the options
        from singlemongo.driver_info import DriverInfo
        info = args.pop("driverInfoOptions")
        args["driver_info"] = DriverInfo(info.get("name"), info.get("version"),
                                         info.get("platform"))
    if name in ("listCollections", "listCollectionObjects") and "batchSize" in args:
        # As PyMongo's runner: list_collections sends its keywords as they are.
        args["cursor"] = {"batchSize": args.pop("batchSize")}
    if name == "createIndex":
        args["keys"] = list(args.pop("keys").items())
    if name == "modifyCollection":  # PyMongo has no helper: the collMod command
        args = {"command": {"collMod": args.pop("collection"), **args}}
    if name == "createFindCursor" and "filter" not in args:
        raise AssertionError("createFindCursor: the filter argument is required")
    if name == "createSearchIndexes":
        from singlemongo.operations import SearchIndexModel
        args["models"] = [SearchIndexModel(**m) for m in args["models"]]
    if name == "listSearchIndexes":
        args.update(args.pop("aggregationOptions", None) or {})
    if name == "dropDatabase":
        args["name_or_database"] = args.pop("database", None) or args.pop("databaseName")
    if name in ("runCursorCommand", "createCommandCursor") and "maxTimeMS" in args:
        args["max_await_time_ms"] = args.pop("maxTimeMS")  # it bounds each getMore
    if name == "dropIndex":
        args["index_or_name"] = args.pop("name")
    if name == "upload":
        args.pop("disableMD5", None)  # PyMongo 4 computes no MD5 at all
        args["source"] = bytes.fromhex(args["source"]["$$hexBytes"])
    return args


def run_entity_operation(runner, entity, name, args):
    """An operation; its ``timeoutMS`` argument is a ``singlemongo.timeout()`` block around
    it (CSOT's per-operation timeout, as PyMongo's runner does with ``pymongo.timeout``)."""
    if "timeoutMS" in args:
        import singlemongo
        args = dict(args)
        with singlemongo.timeout(args.pop("timeoutMS") / 1000.0):
            return _run_entity_operation(runner, entity, name, args)
    return _run_entity_operation(runner, entity, name, args)


def _run_entity_operation(runner, entity, name, args):
    kind = type(entity).__name__
    if kind in ("Cursor", "CommandCursor", "NonLazyCursor"):
        return cursor_operation(runner, entity, name)
    if kind.endswith("ChangeStream"):
        return change_stream_operation(entity, name)
    if kind not in KINDS:
        raise AssertionError(f"no operations for a {kind}")
    what, table = KINDS[kind]
    if (kind, name) in (("Collection", "count"), ("Collection", "mapReduce")):
        raise Skip(REMOVED)
    if name not in table:
        raise Skip(missing_api(f"{what}.{name}"))
    method_name, convert = table[name]
    args = prepare(name, args)
    if kind == "GridFSBucket":
        return bucket_operation(runner, entity, method_name, convert, args)
    if name == "bulkWrite" and "requests" in args:
        args["requests"] = bulk_requests(args["requests"])
    if name == "clientBulkWrite":
        args["models"] = bulk_requests(args["models"])
    if name == "withTransaction":
        return runner.with_transaction(entity, args)
    if method_name == "cursor_command":
        return command_cursor(runner, entity, args, convert)
    result = call(runner, entity, method_name, args, what)
    return convert(result) if convert is not None else result


def command_cursor(runner, database, args, convert):
    """runCursorCommand and createCommandCursor as PyMongo's runner calls them: the
    ``batchSize`` argument sizes the getMores (``CommandCursor.batch_size``) and
    ``cursorType`` is the command's own business (its ``tailable``/``awaitData``)."""
    batch_size = args.pop("batchSize", 0)
    args.pop("cursorType", None)
    cursor = call(runner, database, "cursor_command", args, "Database")
    if batch_size:
        cursor.batch_size(batch_size)
    return convert(cursor) if convert is not None else cursor


def bucket_operation(runner, bucket, method_name, convert, args):
    kwargs = {BUCKET_ARGS.get(k, snake(k)): v for k, v in args.items()}
    if "session" in kwargs:
        kwargs["session"] = runner.entities.get(kwargs["session"])
    result = getattr(bucket, method_name)(**kwargs)
    if convert == "read":
        return result.read()
    return convert(result) if convert is not None else result


def tailable(cursor):
    inner = getattr(cursor, "cursor", cursor)
    return bool(getattr(inner, "_flags", 0) & 2)


def iterate_tailable(cursor):
    """iterateUntilDocumentOrError on a tailable cursor, as PyMongo's runner: next() while the
    cursor is alive (a PyMongo next() sends one getMore), all of it one "next call" in CSOT
    terms ("Cursors": the timeout applies to the totality of the getMores): one
    ``timeout()`` block of the cursor's original timeoutMS around the loop."""
    import singlemongo
    inner = getattr(cursor, "cursor", cursor)
    with singlemongo.timeout(inner._timeout_s):
        while getattr(cursor, "first", None) or inner.alive:
            doc = next(cursor, None)
            if doc is not None:
                return doc
    return None


class NonLazyCursor:
    """createFindCursor runs the find at once (as PyMongo's runner does: the test's
    timeoutMS applies to it); the first document is kept for the first iteration."""

    def __init__(self, cursor):
        self.cursor = cursor
        self.first = [doc for doc in [next(cursor, None)] if doc is not None]

    def __next__(self):
        return self.first.pop() if self.first else next(self.cursor)

    def try_next(self):
        return self.first.pop() if self.first else self.cursor.try_next()

    def close(self):
        self.cursor.close()


def change_stream_operation(stream, name):
    """As PyMongo's runner: iterateUntilDocumentOrError blocks for the next change (each
    getMore waits on the server's awaitData), iterateOnce is one ``try_next``."""
    if name == "iterateUntilDocumentOrError":
        return next(stream)
    if name == "iterateOnce":
        return stream.try_next()
    if name == "close":
        return stream.close()
    raise Skip(missing_api(f"ChangeStream.{name}"))


def cursor_operation(runner, cursor, name):
    if name == "iterateUntilDocumentOrError" and tailable(cursor):
        return iterate_tailable(cursor)
    if name == "iterateOnce":  # as PyMongo's runner: at most one getMore
        return cursor.try_next()
    if name == "iterateUntilDocumentOrError":
        return next(cursor, None)
    if name == "close":
        try:
            cursor.close()
        except Exception:
            pass
        return None
    raise Skip(missing_api(f"Cursor.{name}"))
