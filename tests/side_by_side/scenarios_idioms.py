"""PyMongo's everyday idioms as its documentation writes them, and the ones that broke on
first contact (issue 18): each failed before the change, with the reason in its name."""
from bson import SON, DBRef

from .harness import S

DOCS = [{"_id": i, "n": i} for i in range(1, 6)]


def _host_port(c, m):
    """MongoClient("localhost", 27017): the host was wrapped as a secret and dialled as
    "<redacted>" (Name or service not known)."""
    host, port = m.deployment.primary.address
    client = m.client(host, port, directConnection=True)
    return client.sbs.c.find_one({"_id": 1}), client.address == (host, port)


def _host_port_localhost(c, m):
    port = m.deployment.primary.port
    return m.client("localhost", port, directConnection=True).sbs.c.count_documents({})


def _transaction_block_commits(c, m):
    """``with session.start_transaction():`` ending normally commits (it aborted, and every
    write of the block was lost while each reported success)."""
    with c.database.client.start_session() as s:
        with s.start_transaction():
            c.insert_one({"_id": 100}, session=s)
            c.update_one({"_id": 1}, {"$set": {"in": "txn"}}, session=s)
        return s.in_transaction, c.find_one({"_id": 100})


def _transaction_block_aborts_on_error(c, m):
    with c.database.client.start_session() as s:
        try:
            with s.start_transaction():
                c.insert_one({"_id": 101}, session=s)
                raise ValueError("boom")
        except ValueError:
            pass
        return s.in_transaction, c.find_one({"_id": 101})


def _transaction_block_after_explicit_commit(c, m):
    with c.database.client.start_session() as s:
        with s.start_transaction():
            c.insert_one({"_id": 102}, session=s)
            s.commit_transaction()
        return c.count_documents({"_id": 102})


def _auto_reconnect_on_reset(c, m):
    """A connection reset by the server is AutoReconnect (it was a bare ConnectionFailure,
    which ``except AutoReconnect:`` retry loops do not catch)."""
    client = m.client(retryReads=False, retryWrites=False)
    client.sbs.c.find_one()
    m.deployment.primary.fail("find", action="reset", times=1)
    try:
        client.sbs.c.find_one({"_id": 1})
    except m.errors.AutoReconnect as exc:
        return "AutoReconnect", isinstance(exc, m.errors.ConnectionFailure)
    return "no error"


def _auto_reconnect_on_close(c, m):
    client = m.client(retryWrites=False)
    client.sbs.c.find_one()
    m.deployment.primary.fail("insert", action="close", times=1)
    try:
        client.sbs.c.insert_one({"_id": 200})
    except m.errors.AutoReconnect:
        return "AutoReconnect"
    return "no error"


def _write_concern_error_details(c, m):
    """WriteConcernError.details is the writeConcernError document (it was the whole reply,
    without codeName)."""
    c.database.client.admin.command({
        "configureFailPoint": "failCommand", "mode": {"times": 1},
        "data": {"failCommands": ["insert"], "writeConcernError": {
            "code": 64, "codeName": "WriteConcernFailed", "errmsg": "waiting timed out",
            "errInfo": {"wtimeout": True}}}})
    try:
        c.insert_one({"_id": 300})
    except m.errors.WriteConcernError as exc:
        return type(exc).__name__, exc.code, exc.details["codeName"], exc.details["errInfo"]
    return "no error"


def _external_database(c, m):
    """client["$external"], where X.509, LDAP and AWS users live (InvalidName before)."""
    db = c.database.client["$external"]
    return db.name, c.database.client.get_database("$external").name


def _list_indexes_son(c, m):
    """list_indexes returns SON documents, as PyMongo's (they were dicts)."""
    c.create_index("n")
    return [type(index).__name__ for index in c.list_indexes()], list(c.list_indexes())


def _no_retryable_writes(c, m):
    """Code 20 on a retryable write: PyMongo's "does not support retryable writes" error."""
    c.database.client.admin.command({
        "configureFailPoint": "failCommand", "mode": {"times": 1},
        "data": {"failCommands": ["insert"], "errorCode": 20,
                 "errmsg": "Transaction numbers are only allowed on a replica set member "
                           "or mongos"}})
    try:
        c.insert_one({"_id": 400})
    except m.errors.OperationFailure as exc:
        return type(exc).__name__, exc.code, str(exc).split(",")[0]
    return "no error"


def _ordered_unacknowledged_bulk(c, m):
    """An ordered w=0 bulk write is sent acknowledged, so it stops at the first error (it
    went on after the duplicate)."""
    w0 = c.with_options(write_concern=m.WriteConcern(w=0))
    result = w0.bulk_write([m.InsertOne({"_id": 10}), m.InsertOne({"_id": 1}),
                            m.InsertOne({"_id": 11}), m.DeleteOne({"_id": 5})])
    return result.acknowledged


def _ordered_unacknowledged_insert_many(c, m):
    w0 = c.with_options(write_concern=m.WriteConcern(w=0))
    return w0.insert_many([{"_id": 12}, {"_id": 2}, {"_id": 13}]).acknowledged


def _unordered_unacknowledged_bulk(c, m):
    w0 = c.with_options(write_concern=m.WriteConcern(w=0))
    return w0.bulk_write([m.InsertOne({"_id": 14}), m.InsertOne({"_id": 3}),
                          m.InsertOne({"_id": 15})], ordered=False).acknowledged


def _timeout_block(c, m):
    """pymongo.timeout(): one deadline for the block, sent as maxTimeMS."""
    with m.timeout(10):
        found = c.find_one({"_id": 1})
        c.insert_one({"_id": 500})
    return found


def _timeout_expires(c, m):
    m.deployment.primary.fail("find", action="block", block_s=0.4, times=1)
    try:
        with m.timeout(0.1):
            c.find_one({"_id": 1})
    except m.errors.PyMongoError as exc:
        return exc.timeout
    return "no error"


def _dereference(c, m):
    """Database.dereference (mongoengine calls it; it was missing)."""
    db = c.database
    return (db.dereference(DBRef("c", 2)), db.dereference(DBRef("c", 99)),
            db.dereference(DBRef("c", 2, "sbs")))


def _dereference_other_database(c, m):
    return c.database.dereference(DBRef("c", 2, "elsewhere"))


def _raw_batches(c, m):
    import bson
    batches = list(c.find_raw_batches({}, sort=[("_id", 1)], batch_size=2))
    return [type(b).__name__ for b in batches], [bson.decode_all(b) for b in batches]


def _aggregate_raw_batches(c, m):
    import bson
    batches = list(c.aggregate_raw_batches([{"$sort": {"_id": -1}}], batchSize=3))
    return [bson.decode_all(b) for b in batches]


def _exhaust(c, m):
    """CursorType.EXHAUST: one getMore with exhaustAllowed, then the server streams (it was
    accepted and ignored: a getMore per batch)."""
    return list(c.find({}, cursor_type=m.CursorType.EXHAUST, batch_size=2, sort=[("_id", 1)]))


def _exhaust_with_limit(c, m):
    return c.find({}, cursor_type=m.CursorType.EXHAUST, limit=2)


def _with_options_son(c, m):
    ordered = c.with_options(codec_options=c.codec_options.with_options(document_class=SON))
    return ordered.find_one({"_id": 1})


SCENARIOS = [
    S("MongoClient(host, port)", _host_port, DOCS, compare_commands=False),
    S("MongoClient('localhost', port)", _host_port_localhost, DOCS, compare_commands=False),
    S("with start_transaction() commits", _transaction_block_commits, DOCS),
    S("with start_transaction() aborts on an exception", _transaction_block_aborts_on_error,
      DOCS),
    S("with start_transaction() after commit_transaction",
      _transaction_block_after_explicit_commit, DOCS),
    S("except AutoReconnect on a reset", _auto_reconnect_on_reset, DOCS,
      compare_commands=False),
    S("except AutoReconnect on a closed connection", _auto_reconnect_on_close, DOCS,
      compare_commands=False),
    S("WriteConcernError.details is the writeConcernError", _write_concern_error_details,
      DOCS),
    S("client['$external']", _external_database, DOCS),
    S("list_indexes documents are SON", _list_indexes_son, DOCS),
    S("code 20 on a retryable write", _no_retryable_writes, DOCS),
    S("ordered w=0 bulk_write stops at the first error", _ordered_unacknowledged_bulk, DOCS),
    S("ordered w=0 insert_many stops at the first error", _ordered_unacknowledged_insert_many,
      DOCS),
    S("unordered w=0 bulk_write", _unordered_unacknowledged_bulk, DOCS),
    S("timeout() block", _timeout_block, DOCS, difference=("maxTimeMS", "the time left")),
    S("timeout() expires", _timeout_expires, DOCS, compare_commands=False),
    S("Database.dereference", _dereference, DOCS),
    S("Database.dereference another database", _dereference_other_database, DOCS),
    S("find_raw_batches", _raw_batches, DOCS),
    S("aggregate_raw_batches", _aggregate_raw_batches, DOCS),
    S("exhaust cursor", _exhaust, DOCS),
    S("exhaust cursor with a limit", _exhaust_with_limit, DOCS),
    S("with_options(codec_options=CodecOptions(SON))", _with_options_son, DOCS),
    # Bad arguments: PyMongo's exception class and message.
    S("update_one upsert not a bool", lambda c, m: c.update_one(
        {"_id": 1}, {"$set": {"x": 1}}, upsert="yes"), DOCS),
    S("find sort as a string", lambda c, m: c.find({}, sort="n"), DOCS),
    S("find_one_and_delete sort as a string", lambda c, m: c.find_one_and_delete(
        {}, sort="n"), DOCS),
    S("find_one_and_update return_document not a ReturnDocument",
      lambda c, m: c.find_one_and_update({"_id": 1}, {"$set": {"x": 1}},
                                         return_document="after"), DOCS),
    S("WriteConcern wtimeout not an int", lambda c, m: m.WriteConcern(wtimeout="5"), DOCS),
    S("WriteConcern w negative", lambda c, m: m.WriteConcern(w=-1), DOCS),
    S("find unknown keyword", lambda c, m: c.find({}, foo=1), DOCS),
    S("insert_one unknown keyword", lambda c, m: c.insert_one({}, foo=1), DOCS),
    S("update_one collation with w=0", lambda c, m: c.with_options(
        write_concern=m.WriteConcern(w=0)).update_one(
        {"_id": 1}, {"$set": {"x": 1}}, collation={"locale": "fr"}), DOCS),
    S("MongoClient unknown option", lambda c, m: m.client(retryWrite=True), DOCS),
    S("MongoClient read_preference object",
      lambda c, m: m.client(read_preference=m.ReadPreference.SECONDARY_PREFERRED)
      .sbs.c.count_documents({}), DOCS),
    S("MongoClient(driver=DriverInfo(...))", lambda c, m: m.client(
        driver=m.DriverInfo("Wrapper", "1.0")).sbs.c.find_one({"_id": 1}), DOCS),
]
