"""What FerretDB v1.24 does not offer, from its own documentation, and the side-by-side
scenarios that need it (skipped on FerretDB with the reason), and the few scenarios where
PyMongo and singlemongo answer FerretDB differently, each with its cause
(docs/works-with.md, "FerretDB").

The documents cited (FerretDB's repository, ``website/``):
- known differences: ``versioned_docs/version-v1.24/diff.md``;
- indexes: ``versioned_docs/version-v1.24/indexes.md`` (single-field, compound, unique);
- query operators: ``versioned_docs/version-v1.24/operators/query/*.md``;
- aggregation stages: ``versioned_docs/version-v1.24/aggregation-operations/aggregation-stages.md``;
- OpLog support: ``versioned_docs/version-v1.24/configuration/oplog-support.md``;
- supported commands and their arguments (v1): ``docs/reference/supported-commands.md``.
"""

COMMANDS = "FerretDB v1 supported commands"
DIFF = "FerretDB v1.24 known differences"

TRANSACTIONS = (f"transactions: commitTransaction and abortTransaction are not implemented "
                f"({COMMANDS}, session commands)")
FAIL_POINTS = ("fail points: FerretDB has no configureFailPoint command (its listCommands, "
               f"{COMMANDS})")
CONTROLS = ("the simulated deployment's controls (m.deployment: fault injection, member "
            "addresses); a real server has none")
NO_CREDENTIALS = ("the scenario's connection string has no credentials, so a username without a "
                  "password is refused; FerretDB's has the setup user's")
COLLATION = f"collation is not implemented ({COMMANDS}: find, update, delete, findAndModify)"
LET = f"let is not implemented ({COMMANDS}: find, update, delete, findAndModify)"
ARRAY_FILTERS = f"arrayFilters are not implemented ({COMMANDS}: update, findAndModify)"
NO_CURSOR_TIMEOUT = f"noCursorTimeout is not implemented ({COMMANDS}: find)"
PIPELINE_UPDATE = f"an update pipeline (`u` as an array) is not implemented ({COMMANDS}: update)"
STAGES = ("the stage is not one FerretDB v1.24 supports (its aggregation stages page: $count, "
          "$group, $limit, $match, $project, $skip, $sort, $unset, $unwind)")
WHERE = ("$where is not a FerretDB query operator (its evaluation operators page: $mod, "
         "$regex)")
INDEX_KINDS = ("FerretDB v1.24 indexes are single-field, compound and unique (its indexes "
               "page): no TTL, partial, hashed or collation options")
VALIDATION = f"document validation (a collection validator) is not implemented ({COMMANDS})"
DOLLAR_DOTTED = (f"{DIFF}, 5: document keys must not contain '.' or start with '$' (MongoDB 5.0+ "
                 "stores them)")
DROP_TARGET = f"renameCollection's dropTarget is not implemented ({COMMANDS})"
DECIMAL128 = ("Decimal128 is not a FerretDB v1 type (FerretDB/FerretDB#66): the connection "
              "that sends one is closed")
DATABASE_AGGREGATE = ("a database-level aggregate ($documents, $currentOp) is not implemented "
                      f"({COMMANDS}, aggregation stages)")
PROJECTION_ORDER = (f"sort in findAndModify with a projection is not implemented "
                    f"({COMMANDS}: findAndModify)")

UNSUPPORTED = {
    # transactions and snapshot reads
    **{name: TRANSACTIONS for name in (
        "txn_commit", "txn_abort", "txn_with_transaction", "txn_context_manager_aborts",
        "txn_options", "txn_default_options", "txn_commit_twice", "txn_abort_after_commit",
        "txn_write_conflict", "txn_duplicate_key", "txn_secondary_read",
        "session_snapshot_write", "with start_transaction() commits",
        "with start_transaction() aborts on an exception",
        "with start_transaction() after commit_transaction")},
    # fail points set with configureFailPoint
    **{name: FAIL_POINTS for name in (
        "not primary is an AutoReconnect", "not primary is retried",
        "shutdown error is retried once", "max time expired",
        "WriteConcernError.details is the writeConcernError", "code 20 on a retryable write",
        "GridFSBucket chunk write concern error")},
    **{name: CONTROLS for name in (
        "MongoClient(host, port)", "MongoClient('localhost', port)",
        "except AutoReconnect on a reset", "except AutoReconnect on a closed connection",
        "timeout() expires")},
    "MongoClient a username and no password": NO_CREDENTIALS,
    "find no_cursor_timeout": NO_CURSOR_TIMEOUT,
    "find collation": COLLATION,
    "find let": LET,
    "cursor where": WHERE,
    "insert_one top-level dollar key": DOLLAR_DOTTED,
    "insert_one dotted key": DOLLAR_DOTTED,
    "update_one array_filters": ARRAY_FILTERS,
    "update_one pipeline": PIPELINE_UPDATE,
    "update_one collation": COLLATION,
    "update_one let": LET,
    "update_many array_filters": ARRAY_FILTERS,
    "delete_many collation and let": COLLATION,
    "find_one_and_update projection and sort": PROJECTION_ORDER,
    "find_one_and_update array_filters and hint": ARRAY_FILTERS,
    "find_one_and_delete projection list": PROJECTION_ORDER,
    "find_one_and_update comment and let": LET,
    "bulk_write comment and let": LET,
    "bulk_write array_filters hint collation": ARRAY_FILTERS,
    "bulk_write pipeline update": PIPELINE_UPDATE,
    "aggregate allowDiskUse comment let": LET,
    "aggregate $out": STAGES,
    "create_index ttl": INDEX_KINDS,
    "create_index partial": INDEX_KINDS,
    "create_index collation": INDEX_KINDS,
    "create_index hashed": INDEX_KINDS,
    "rename dropTarget": DROP_TARGET,
    "create_collection with a validator": VALIDATION,
    "database aggregate": DATABASE_AGGREGATE,
    "type registry decodes and encodes": DECIMAL128,
}

# PyMongo and singlemongo answer FerretDB differently here; each row: what PyMongo raises
# (asserted, so a change on either side is seen) and why.
MORE_TO_COME = ("FerretDB v1.24 answers a w:0 write sent with moreToCome, which OP_MSG forbids. "
                "PyMongo reads that answer as the reply to its next command and raises "
                "ProtocolError; singlemongo refuses the reply (its responseTo is another "
                "request's), closes that connection and retries the read on a new one (its "
                "ProtocolError is a ConnectionFailure)")
NO_COUNTS = ("FerretDB v1.24's reply to an update with a write error has no n and no nModified "
             "(and reports the error at index 0). PyMongo raises KeyError reading them; "
             "singlemongo raises BulkWriteError with the counts it was given")
KNOWN_DIFFERENCES = {
    "w:0 insert": ("ProtocolError", MORE_TO_COME),
    "w:0 counts raise": ("ProtocolError", MORE_TO_COME),
    "bulk_write unordered error continues": ("KeyError", NO_COUNTS),
    "bulk_write error in an update": ("KeyError", NO_COUNTS),
}
