"""Sessions, causal consistency and transactions (issue 14), the same with both drivers."""
from .harness import S

DOCS = [{"_id": i, "n": i} for i in range(1, 4)]


def _session(c):
    return c.database.client.start_session()


def _commit(c, m):
    with _session(c) as s:
        s.start_transaction()
        c.insert_one({"_id": 10}, session=s)
        c.update_one({"_id": 1}, {"$inc": {"n": 100}}, session=s)
        inside = c.find_one({"_id": 10}, session=s)
        outside = c.find_one({"_id": 10})
        s.commit_transaction()
        return inside, outside, s.in_transaction


def _abort(c, m):
    with _session(c) as s:
        s.start_transaction()
        c.delete_many({}, session=s)
        counted = c.count_documents({}, session=s)
        s.abort_transaction()
        return counted


def _with_transaction(c, m):
    with _session(c) as s:
        return s.with_transaction(lambda s: c.insert_one({"_id": 20}, session=s).inserted_id)


def _context_manager_aborts(c, m):
    with _session(c) as s:
        try:
            with s.start_transaction():
                c.insert_one({"_id": 30}, session=s)
                raise KeyError("boom")
        except KeyError:
            return s.in_transaction


def _options(c, m):
    with _session(c) as s:
        s.start_transaction(read_concern=m.ReadConcern("majority"),
                            write_concern=m.WriteConcern(w="majority"), max_commit_time_ms=900)
        c.find_one({"_id": 1}, session=s)
        c.insert_one({"_id": 40}, session=s)
        s.commit_transaction()


def _default_options(c, m):
    options = m.TransactionOptions(write_concern=m.WriteConcern(w=1))
    with c.database.client.start_session(default_transaction_options=options) as s:
        s.start_transaction()
        c.insert_one({"_id": 41}, session=s)
        s.commit_transaction()


def _empty_commit_twice(c, m):
    with _session(c) as s:
        s.start_transaction()
        s.commit_transaction()
        s.commit_transaction()
        return s.in_transaction


def _commit_twice(c, m):
    with _session(c) as s:
        s.start_transaction()
        c.insert_one({"_id": 50}, session=s)
        s.commit_transaction()
        s.commit_transaction()  # re-run: w: majority


def _start_twice(c, m):
    with _session(c) as s:
        s.start_transaction()
        s.start_transaction()


def _commit_after_abort(c, m):
    with _session(c) as s:
        s.start_transaction()
        s.abort_transaction()
        s.commit_transaction()


def _abort_after_commit(c, m):
    with _session(c) as s:
        s.start_transaction()
        c.insert_one({"_id": 60}, session=s)
        s.commit_transaction()
        s.abort_transaction()


def _write_conflict(c, m):
    client = c.database.client
    with client.start_session() as a, client.start_session() as b:
        a.start_transaction()
        b.start_transaction()
        c.update_one({"_id": 1}, {"$set": {"who": "a"}}, session=a)
        try:
            c.update_one({"_id": 1}, {"$set": {"who": "b"}}, session=b)
        except m.errors.OperationFailure as exc:
            labels = exc.has_error_label("TransientTransactionError")
        a.commit_transaction()
        return labels


def _duplicate_in_transaction(c, m):
    with _session(c) as s:
        s.start_transaction()
        c.insert_one({"_id": 1}, session=s)


def _causal_reads_and_writes(c, m):
    with _session(c) as s:
        c.find_one({"_id": 1}, session=s)
        c.insert_one({"_id": 70}, session=s)
        c.find_one({"_id": 70}, session=s)
        c.update_one({"_id": 70}, {"$set": {"x": 1}}, session=s)
        return c.distinct("n", session=s)


def _not_causal(c, m):
    with c.database.client.start_session(causal_consistency=False) as s:
        c.insert_one({"_id": 71}, session=s)
        return c.find_one({"_id": 71}, session=s)


def _snapshot_reads(c, m):
    with c.database.client.start_session(snapshot=True) as s:
        before = c.find_one({"_id": 1}, session=s)
        c.update_one({"_id": 1}, {"$set": {"n": -1}})
        return before, c.find_one({"_id": 1}, session=s), list(c.find({}, session=s))


def _snapshot_write(c, m):
    with c.database.client.start_session(snapshot=True) as s:
        c.insert_one({"_id": 80}, session=s)


def _transaction_in_snapshot(c, m):
    with c.database.client.start_session(snapshot=True) as s:
        s.start_transaction()


def _secondary_read_in_transaction(c, m):
    with _session(c) as s:
        s.start_transaction(read_preference=m.ReadPreference.SECONDARY)
        c.insert_one({"_id": 90}, session=s)
        c.find_one({}, session=s)


SCENARIOS = [
    S("txn_commit", _commit, DOCS),
    S("txn_abort", _abort, DOCS),
    S("txn_with_transaction", _with_transaction, DOCS),
    S("txn_context_manager_aborts", _context_manager_aborts, DOCS),
    S("txn_options", _options, DOCS),
    S("txn_default_options", _default_options, DOCS),
    S("txn_empty_commit_twice", _empty_commit_twice, DOCS),
    S("txn_commit_twice", _commit_twice, DOCS),
    S("txn_start_twice", _start_twice, DOCS),
    S("txn_commit_after_abort", _commit_after_abort, DOCS),
    S("txn_abort_after_commit", _abort_after_commit, DOCS),
    S("txn_write_conflict", _write_conflict, DOCS),
    S("txn_duplicate_key", _duplicate_in_transaction, DOCS),
    S("txn_secondary_read", _secondary_read_in_transaction, DOCS),
    S("session_causal", _causal_reads_and_writes, DOCS),
    S("session_not_causal", _not_causal, DOCS),
    S("session_snapshot_reads", _snapshot_reads, DOCS),
    S("session_snapshot_write", _snapshot_write, DOCS),
    S("session_snapshot_transaction", _transaction_in_snapshot, DOCS),
]
