"""Differential property tests, second part (issue 45): the command cursor's own methods,
``Database.command``, ``Collection.rename``, ``with_options`` and the session and transaction
arguments, each given the same generated arguments with PyMongo and with singlemongo on one
simulated replica set. Results or error classes, the commands sent and the collection
afterwards must be equal (the rules and the harness are ``test_differential``'s)."""
from bson import SON
from hypothesis import given, settings
from hypothesis import strategies as st

from .test_differential import FALSY, PROFILE, _same, sides  # noqa: F401 (a fixture)

BATCH_SIZES = st.one_of(st.integers(-2, 4), FALSY, st.just("2"), st.just(1.5))


def _consumed(cursor, steps):
    """What a chain of the command cursor's methods returns, step by step."""
    seen = []
    for step, argument in steps:
        if step == "batch_size":
            cursor = cursor.batch_size(argument)
            seen.append("batch_size")
        elif step == "to_list":
            seen.append(cursor.to_list(argument) if argument is not None else cursor.to_list())
        elif step == "next":
            seen.append(next(cursor, "<end>"))
        elif step == "try_next":
            seen.append(cursor.try_next())
        elif step == "alive":
            seen.append(cursor.alive)
        else:
            cursor.close()
            seen.append(("closed", cursor.alive))
    return seen


@settings(settings.get_profile(PROFILE))
@given(first_batch=st.one_of(st.none(), st.integers(0, 3)),
       steps=st.lists(st.tuples(
           st.sampled_from(["batch_size", "to_list", "next", "try_next", "alive", "close"]),
           st.one_of(st.none(), st.integers(0, 3))), max_size=5),
       size=BATCH_SIZES)
def test_command_cursor_methods_take_every_argument_as_pymongo(sides, first_batch, steps,
                                                               size):
    """CommandCursor.batch_size, to_list(n), next, try_next, alive and close over an
    aggregate's cursor, in any order, after batch_size given any value (``[]``, ``0``,
    ``"2"``, ``-1``, ...): the same documents, getMores and errors as PyMongo."""
    def call(c, lib):
        options = {} if first_batch is None else {"batchSize": first_batch}
        cursor = c.aggregate([{"$sort": {"_id": 1}}], **options)
        try:
            cursor.batch_size(size)
            return _consumed(cursor, steps)
        finally:  # not left to the garbage collector: its killCursors would come later
            cursor.close()
    _same(sides, call)


COMMANDS = st.sampled_from([
    ("count", "c", {}), ("count", "c", {"query": {"a": 1}}), ("distinct", "c", {"key": "a"}),
    ("find", "c", {"filter": {"a": {"$gt": 0}}}), ("listCollections", 1, {"nameOnly": True}),
    ("collStats", "c", {}), ("dbStats", 1, {}), ("noSuchCommand", 1, {}),
    ("count", "", {}), ("count", None, {}), ("distinct", "c", {"key": 1})])


@settings(settings.get_profile(PROFILE))
@given(command=COMMANDS, form=st.sampled_from(["name", "dict", "son", "keywords"]),
       check=st.booleans(), allowable=st.one_of(st.none(), st.just((59,)),
                                                st.just(["ns not found"])))
def test_database_command_takes_every_form_as_pymongo(sides, command, form, check, allowable):
    """Database.command given a name and value with keywords, a dict, a SON or a name
    alone; ``check`` and ``allowable_errors`` in every combination; unknown commands and
    wrong values: the same result (cursor documents, counts), error class and code, and
    the same command on the wire."""
    name, value, extra = command

    def call(c, lib):
        db = c.database
        keywords = {"check": check}
        if allowable is not None:
            keywords["allowable_errors"] = allowable
        if form == "name":
            return db.command(name, value, **extra, **keywords)
        if form == "keywords":
            return db.command(name, value=value, **extra, **keywords)
        body = {name: value, **extra}
        return db.command(SON(body) if form == "son" else body, **keywords)
    _same(sides, call, ignore=("$db", "lsid"))


@settings(settings.get_profile(PROFILE))
@given(new_name=st.one_of(st.sampled_from(["d", "c", "", "a$b", ".x", "x.", "system.y"]),
                          st.just(1), st.just(None)),
       drop_target=st.one_of(st.none(), st.booleans()), target_exists=st.booleans())
def test_rename_takes_every_argument_as_pymongo(sides, new_name, drop_target, target_exists):
    """Collection.rename(new_name, dropTarget=...) with valid, empty, reserved and non-string
    names, onto a collection that exists or not: the same error class before anything is
    sent, the same renameCollection command and the same collections afterwards."""
    def call(c, lib):
        if target_exists:
            c.database.d.insert_one({"_id": "there"})
        keywords = {} if drop_target is None else {"dropTarget": drop_target}
        c.rename(new_name, **keywords)
        names = sorted(c.database.list_collection_names())
        c.database.drop_collection("d")
        return names
    _same(sides, call)


def _read_preference(lib, name):
    return None if name is None else getattr(lib.ReadPreference, name)


def _write_concern(lib, value):
    return None if value is None else lib.WriteConcern(**value)


@settings(settings.get_profile(PROFILE))
@given(read_preference=st.one_of(st.none(), st.sampled_from(
           ["PRIMARY", "PRIMARY_PREFERRED", "SECONDARY_PREFERRED", "NEAREST"])),
       write_concern=st.one_of(st.none(), st.fixed_dictionaries(
           {}, optional={"w": st.sampled_from([0, 1, "majority"]),
                         "j": st.booleans(), "wtimeout": st.integers(0, 100)})),
       read_concern=st.one_of(st.none(), st.sampled_from([None, "local", "majority"])),
       level=st.sampled_from(["collection", "database"]))
def test_with_options_takes_every_argument_as_pymongo(sides, read_preference, write_concern,
                                                      read_concern, level):
    """Collection.with_options and Database.with_options (and get_collection) with every
    read preference, write concern and read concern, then a read and a write: the same
    readConcern, writeConcern and $readPreference on the wire, the same results."""
    def call(c, lib):
        options = {}
        if read_preference is not None:
            options["read_preference"] = _read_preference(lib, read_preference)
        if write_concern is not None:
            options["write_concern"] = _write_concern(lib, write_concern)
        if read_concern is not None:
            options["read_concern"] = lib.read_concern.ReadConcern(read_concern)
        if level == "collection":
            coll = c.with_options(**options)
        else:
            coll = c.database.with_options(**options).get_collection("c")
        found = coll.find_one({"_id": 2}) if read_preference in (None, "PRIMARY") else None
        result = coll.insert_one({"_id": 100})
        # An acknowledged read on the same connection: a w:0 insert has been applied.
        return found, result.acknowledged, c.find_one({"_id": 100})
    _same(sides, call, ignore=("lsid", "txnNumber"))


TRANSACTION_OPTIONS = st.fixed_dictionaries({}, optional={
    "read_concern": st.sampled_from([None, "local", "majority", "snapshot"]),
    "write_concern": st.sampled_from([None, {"w": "majority"}, {"w": 1}, {"w": 0}]),
    "read_preference": st.sampled_from([None, "PRIMARY", "SECONDARY"]),
    "max_commit_time_ms": st.one_of(st.none(), st.integers(-1, 500), st.just("1"))})


def _transaction_options(lib, options):
    built = {}
    for key, value in options.items():
        if key == "read_concern" and value is not None:
            value = lib.read_concern.ReadConcern(value)
        elif key == "write_concern" and value is not None:
            value = lib.WriteConcern(**value)
        elif key == "read_preference":
            value = _read_preference(lib, value)
        built[key] = value
    return built


@settings(settings.get_profile(PROFILE))
@given(causal=st.one_of(st.none(), st.booleans()), snapshot=st.one_of(st.none(),
                                                                      st.booleans()),
       options=TRANSACTION_OPTIONS, where=st.sampled_from(["start_transaction", "session"]),
       finish=st.sampled_from(["commit", "abort", "with_transaction"]))
def test_session_and_transaction_arguments_are_taken_as_pymongo(sides, causal, snapshot,
                                                                options, where, finish):
    """start_session(causal_consistency, snapshot, default_transaction_options) and
    start_transaction(read_concern, write_concern, read_preference, max_commit_time_ms) with
    every value (conflicting, invalid, w:0 in a transaction, ...), then a write and a read
    committed, aborted or run by with_transaction: the same errors, commands and data."""
    def call(c, lib):
        built = _transaction_options(lib, options)
        session_options = {}
        if causal is not None:
            session_options["causal_consistency"] = causal
        if snapshot is not None:
            session_options["snapshot"] = snapshot
        if where == "session":
            session_options["default_transaction_options"] = lib.client_session \
                .TransactionOptions(**built)
            built = {}
        with c.database.client.start_session(**session_options) as session:
            def body(s):
                c.insert_one({"_id": 200}, session=s)
                return c.find_one({"_id": 200}, session=s)
            if finish == "with_transaction":
                return session.with_transaction(body, **built)
            session.start_transaction(**built)
            found = body(session)
            session.commit_transaction() if finish == "commit" else session.abort_transaction()
            return found
    _same(sides, call, ignore=("lsid",))

