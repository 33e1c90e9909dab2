"""The official unified-format suites (SDAM, load balancers, client backpressure, retryable
reads and writes, CRUD, logging, sessions, transactions) on the simulated deployments.

Every test passes, is skipped for one of the reviewed reasons in tests/unified/skips.py, or is
an expected failure naming the issue that fixes the driver for it."""
import pytest

from .spec_files import collect
from .unified.environment import PREFERENCE
from .unified.runner import Runner
from .unified.schema import problems
from .unified.skips import Skip, expected_failure, missing_api


# Issue 14: these run on every simulated topology their requirements accept, not only the
# first (transactions pin a mongos, and a load balancer's one connection, differently).
EVERY_TOPOLOGY = ("sessions/", "transactions/unified/", "change_streams/")
VALID_FAIL = "unified-test-format/valid-fail/"
INVALID = "unified-test-format/invalid/"


def _items():
    for rel, path, fmt, doc in collect():
        if INVALID in rel:
            yield pytest.param(rel, doc, None, None, id=f"{rel}::refused by the schema")
            continue
        if fmt != "unified":
            continue
        every = any(part in rel for part in EVERY_TOPOLOGY)
        for test in doc.get("tests", ()):
            mark = expected_failure(rel, test["description"])
            for topology in (PREFERENCE if every else (None,)):
                item_id = f"{rel}::{test['description']}" + (f" [{topology}]" if topology else "")
                yield pytest.param(rel, doc, test, topology, id=item_id,
                                   marks=[mark] if mark else [])


ITEMS = list(_items())


@pytest.mark.parametrize("rel,doc,test,topology", ITEMS)
def test_unified(request, rel, doc, test, topology):
    if INVALID in rel:
        must_be_refused(rel, doc)
        return
    runner = Runner(request, doc, test, rel, topology)
    try:
        if VALID_FAIL in rel:
            must_fail(runner)
        else:
            runner.run()
    except Skip as skip:
        pytest.skip(skip.reason)


def must_fail(runner):
    """The format's valid-fail files: well-formed tests that a conforming runner fails (a
    missing entity, a wrong count, an operation error not expected, ...)."""
    try:
        runner.run()
    except Skip as skip:
        if skip.reason.startswith(missing_api("")):
            return  # "a runner MUST raise an error" for an operation it does not support
        raise
    except Exception:
        return
    pytest.fail("the runner passed a test the format says must fail")


def must_be_refused(rel, doc):
    """The format's invalid files: each breaks one rule of the format's structure, and the
    runner refuses it before running anything (tests/unified/schema.py)."""
    assert problems(doc), f"{rel} breaks a rule of the format, yet the schema accepts it"


def test_runner_refuses_a_malformed_file():
    """Test Format: a file breaking the format's structure (here an operation with both
    expectError and expectResult, and a misspelt test field) is refused before it runs, and
    the refusal names where; a conforming file is accepted."""
    from .unified.runner import refuse_malformed
    good = {"description": "d", "schemaVersion": "1.0",
            "tests": [{"description": "t", "operations": [
                {"name": "find", "object": "c", "expectResult": []}]}]}
    refuse_malformed("good.json", good)
    bad = {**good, "tests": [{"description": "t", "operation": [], "operations": [
        {"name": "find", "object": "c", "expectResult": [], "expectError": {"isError": True}}]}]}
    with pytest.raises(AssertionError) as refused:
        refuse_malformed("bad.json", bad)
    assert "bad.json does not conform" in str(refused.value)
    assert "tests/0: Additional properties are not allowed ('operation'" in str(refused.value)
    assert "tests/0/operations/0:" in str(refused.value)


def _at_project_revision(node):
    """A retryable-reads GridFS file of PyMongo's copy as the project's specifications revision
    writes it: the download's files query is ``{_id: <id>}``, not ``{_id: {$eq: <id>}}``."""
    if isinstance(node, list):
        return [_at_project_revision(item) for item in node]
    if not isinstance(node, dict):
        return node
    if set(node) == {"_id"} and isinstance(node["_id"], dict) and set(node["_id"]) == {"$eq"}:
        return {"_id": node["_id"]["$eq"]}
    return {key: _at_project_revision(value) for key, value in node.items()}


GRIDFS_DOWNLOADS = [pytest.param(rel, doc, test, id=f"{rel}::{test['description']}")
                    for rel, _, fmt, doc in collect()
                    if fmt == "unified" and "retryable_reads/unified/gridfs-download" in rel
                    for test in doc.get("tests", ())]


@pytest.mark.parametrize("rel,doc,test", GRIDFS_DOWNLOADS)
def test_gridfs_download_queries_as_the_project_revision_says(request, rel, doc, test):
    """Issue 46: at the specifications revision this project implements, the retryable-reads
    GridFS tests expect the files query ``{_id: <id>}`` (16 of them failed on ``$eq``). A
    document id is still ``$eq`` (test_gridfs_download_of_an_operator_id_matches_nothing)."""
    doc = _at_project_revision(doc)
    test = next(t for t in doc["tests"] if t["description"] == test["description"])
    Runner(request, doc, test, rel.replace("retryable_reads", "retryable-reads"), None).run()


def test_gridfs_download_of_an_operator_id_matches_nothing(mongo_replica_set):
    """GridFS spec, downloads by id: an id that is a document is matched for equality
    (``$eq``), so ``{"$gt": MinKey}`` finds no file instead of any file."""
    from bson.min_key import MinKey

    from singlemongo import MongoClient
    from singlemongo.gridfs import GridFSBucket, NoFile
    client = MongoClient(mongo_replica_set.uri)
    bucket = GridFSBucket(client.g)
    bucket.upload_from_stream("f", b"data")
    with pytest.raises(NoFile):
        bucket.open_download_stream({"$gt": MinKey()}).read()
    client.close()


def test_the_runner_keeps_a_long_a_long_when_it_matches():
    """Test Format, ``$$type``: "long" and "int" are told apart in what the runner compares.
    It went through relaxed Extended JSON, which made an Int64 cursor id an int: a long was
    reported as an int (the load balancer tests' ``id: {$$type: long}``)."""
    from bson import Int64

    from .unified.matching import MatchError, match, plain
    match({"id": {"$$type": "long"}}, plain({"id": Int64(1000)}), None, True)
    with pytest.raises(MatchError):
        match({"id": {"$$type": "long"}}, plain({"id": 1000}), None, True)
