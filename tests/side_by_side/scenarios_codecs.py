"""Codec options, concerns, the Stable API and errors."""
import datetime
import decimal
import uuid
from collections import OrderedDict

from bson import SON, Decimal128
from bson.codec_options import CodecOptions, TypeCodec, TypeRegistry
from bson.raw_bson import RawBSONDocument

from .harness import S

NAIVE = datetime.datetime(2024, 5, 6, 7, 8, 9, 123000)
DOCS = [{"_id": 1, "when": NAIVE, "s": "text", "d": Decimal128("1.5")},
        {"_id": 2, "when": NAIVE + datetime.timedelta(days=1), "s": "more"}]


class DecimalCodec(TypeCodec):
    python_type = decimal.Decimal
    bson_type = Decimal128

    def transform_python(self, value):
        return Decimal128(value)

    def transform_bson(self, value):
        return value.to_decimal()


REGISTRY = TypeRegistry([DecimalCodec()])
UTC = datetime.timezone.utc
PLUS2 = datetime.timezone(datetime.timedelta(hours=2))


def _with_codec(c, **options):
    return c.with_options(codec_options=CodecOptions(**options))


def _naive_compare(c, m):
    doc = c.find_one({"_id": 1})
    return doc["when"] < datetime.datetime(2030, 1, 1), doc["when"].tzinfo


def _uuid_default(c, m):
    return c.insert_one({"_id": 5, "u": uuid.UUID(int=1)})


SCENARIOS = [
    S("datetimes are naive by default", _naive_compare, DOCS),
    S("tz_aware client", lambda c, m: m.client(tz_aware=True).sbs.c.find_one({"_id": 1}), DOCS),
    S("tz_aware with tzinfo", lambda c, m: m.client(tz_aware=True, tzinfo=PLUS2).sbs.c.find_one(
        {"_id": 1})["when"].isoformat(), DOCS),
    S("aware datetime stored as UTC", lambda c, m: (
        c.insert_one({"_id": 3, "when": datetime.datetime(2024, 1, 1, 12, tzinfo=PLUS2)}),
        c.find_one({"_id": 3})), DOCS),
    S("document_class SON", lambda c, m: m.client(document_class=SON).sbs.c.find_one({"_id": 1}),
      DOCS),
    S("document_class OrderedDict", lambda c, m: type(m.client(
        document_class=OrderedDict).sbs.c.find_one()).__name__, DOCS),
    S("document_class RawBSONDocument", lambda c, m: m.client(
        document_class=RawBSONDocument).sbs.c.find_one({"_id": 2}), DOCS),
    S("with_options codec tz_aware", lambda c, m: _with_codec(c, tz_aware=True).find_one(), DOCS),
    S("codec on aggregate", lambda c, m: list(_with_codec(c, tz_aware=True).aggregate(
        [{"$match": {"_id": 1}}])), DOCS),
    S("codec on find_one_and_update", lambda c, m: _with_codec(c, document_class=SON)
      .find_one_and_update({"_id": 1}, {"$set": {"x": 1}}), DOCS),
    S("codec on getMore batches", lambda c, m: list(_with_codec(c, tz_aware=True).find()
                                                   .batch_size(1)), DOCS),
    S("codec on database command", lambda c, m: type(c.database.command(
        "ping", codec_options=CodecOptions(document_class=SON))).__name__, DOCS),
    S("database get_collection codec", lambda c, m: c.database.get_collection(
        "c", codec_options=CodecOptions(tz_aware=True)).find_one({"_id": 2}), DOCS),
    S("type registry decodes and encodes", lambda c, m: (
        _with_codec(c, type_registry=REGISTRY).insert_one({"_id": 7, "d": decimal.Decimal("2.5")}),
        _with_codec(c, type_registry=REGISTRY).find_one({"_id": 7})), DOCS),
    S("uuid without a representation", _uuid_default, DOCS),
    S("uuid standard representation", lambda c, m: (
        m.client(uuidRepresentation="standard").sbs.c.insert_one({"_id": 6, "u": uuid.UUID(int=2)}),
        m.client(uuidRepresentation="standard").sbs.c.find_one({"_id": 6})), DOCS),
    S("unicode decode error handler", lambda c, m: m.client(
        unicode_decode_error_handler="replace").sbs.c.find_one({"_id": 1})["s"], DOCS),
    S("codec_options property", lambda c, m: (c.codec_options.tz_aware,
                                              c.codec_options.document_class.__name__,
                                              c.database.client.codec_options.tz_aware), DOCS),
    S("stable API commands", lambda c, m: m.client(server_api=m.ServerApi("1")).sbs.c.find_one(),
      DOCS),
    S("stable API strict", lambda c, m: m.client(server_api=m.ServerApi(
        "1", strict=True, deprecation_errors=False)).sbs.c.insert_one({"_id": 8}), DOCS),
    S("stable API unknown version", lambda c, m: m.ServerApi("2"), DOCS),
    S("write concern majority", lambda c, m: m.client(w="majority").sbs.c.insert_one(
        {"_id": 9}), DOCS),
    S("write concern object", lambda c, m: (m.WriteConcern(w=2, wtimeout=5, j=True).document,
                                            m.WriteConcern().is_server_default,
                                            m.WriteConcern(w=0).acknowledged), DOCS),
    S("write concern invalid", lambda c, m: m.WriteConcern(w=0, j=True), DOCS),
    S("read concern object", lambda c, m: (m.ReadConcern("local").document,
                                           m.ReadConcern().document,
                                           m.ReadConcern("majority").level), DOCS),
    S("read concern in the URI", lambda c, m: m.client(readConcernLevel="majority").sbs.c
      .count_documents({}), DOCS),
    S("read preference objects", lambda c, m: (
        m.ReadPreference.PRIMARY.document, m.ReadPreference.SECONDARY.mode,
        m.read_preferences.Nearest([{"a": "b"}], max_staleness=120).document,
        m.ReadPreference.PRIMARY_PREFERRED.mongos_mode), DOCS),
    S("read preference with tags on a client", lambda c, m: m.client(
        readPreference="secondaryPreferred", readPreferenceTags="dc:ny").sbs.c.find_one(
        {"_id": 1}), DOCS),
    S("collation object", lambda c, m: m.Collation("de", strength=1, numericOrdering=True)
      .document, DOCS),
    # errors
    S("duplicate key error code and details", lambda c, m: _error_details(
        lambda: c.insert_one({"_id": 1}), m), DOCS),
    S("operation failure code", lambda c, m: _error_details(
        lambda: c.database.command({"find": "c", "filter": 5}), m), DOCS),
    S("write error on update", lambda c, m: _error_details(
        lambda: c.update_one({"_id": 1}, {"$inc": {"s": 1}}), m), DOCS),
    S("not primary is an AutoReconnect", lambda c, m: _fail_then(
        c, m, {"failCommands": ["insert"], "errorCode": 10107},
        lambda: m.client(retryWrites=False).sbs.c.insert_one({"_id": 44})), DOCS,
      compare_commands=False),
    S("not primary is retried", lambda c, m: _fail_then(
        c, m, {"failCommands": ["insert"], "errorCode": 10107},
        lambda: c.insert_one({"_id": 44})), DOCS, compare_commands=False),
    S("shutdown error is retried once", lambda c, m: _fail_then(
        c, m, {"failCommands": ["find"], "errorCode": 91}, lambda: c.find_one({"_id": 1})),
      DOCS, compare_commands=False),
    S("server selection timeout", lambda c, m: m.MongoClient(
        "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=200&connectTimeoutMS=200")
      .sbs.c.find_one(), DOCS, compare_commands=False),
    S("configuration error", lambda c, m: m.MongoClient("mongodb://h/?w=-1&tls=true&ssl=false"),
      DOCS),
    S("invalid URI", lambda c, m: m.MongoClient("mongo://h"), DOCS),
    S("error hierarchy", lambda c, m: (
        issubclass(m.errors.ServerSelectionTimeoutError, m.errors.ConnectionFailure),
        issubclass(m.errors.NotPrimaryError, m.errors.AutoReconnect),
        issubclass(m.errors.DuplicateKeyError, m.errors.WriteError),
        issubclass(m.errors.BulkWriteError, m.errors.OperationFailure),
        issubclass(m.errors.NetworkTimeout, m.errors.AutoReconnect),
        issubclass(m.errors.ExecutionTimeout, m.errors.OperationFailure),
        issubclass(m.errors.InvalidURI, m.errors.ConfigurationError),
        issubclass(m.errors.CursorNotFound, m.errors.OperationFailure),
        issubclass(m.errors.DocumentTooLarge, __import__("bson").errors.InvalidDocument)), DOCS),
    S("cursor not found", lambda c, m: _killed_cursor(c), DOCS + [{"_id": i} for i in range(3, 9)]),
    S("max time expired", lambda c, m: _fail_then(
        c, m, {"failCommands": ["find"], "errorCode": 50}, lambda: c.find_one()), DOCS,
      compare_commands=False),
]


def _error_details(call, m):
    try:
        call()
    except m.errors.OperationFailure as exc:
        return type(exc).__name__, exc.code, exc.details.get("codeName"), exc.has_error_label(
            "RetryableWriteError")
    return "no error"


def _fail_then(c, m, data, call):
    c.database.client.admin.command({"configureFailPoint": "failCommand",
                                     "mode": {"times": 1}, "data": data})
    try:
        return call()
    finally:
        c.database.client.admin.command({"configureFailPoint": "failCommand", "mode": "off"})


def _killed_cursor(c):
    cur = c.find().batch_size(2)
    next(cur)
    c.database.command({"killCursors": "c", "cursors": [cur.cursor_id]})
    return list(cur)
