"""The README's and the guides' examples that FerretDB can serve, run against FerretDB as a
reader would run them against a real server: each document's examples in order, in one
namespace, with the guides' address (the replica set "rs" on 127.0.0.1:27017) rewritten to
FerretDB's plain listener and its user. An example that needs what FerretDB does not offer
is marked in the document itself, on the line before it, with
``<!-- not on FerretDB: REASON -->``, REASON one of ``REASONS``."""
import os
import re
import tempfile
from pathlib import Path

import pytest

from .. import doc_examples
from ..doc_examples import PARSERS, ROOT, RewrittenDocument

DOCUMENTS = ["README.md"] + sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))
MARKER_LINE = re.compile(r"^[ \t]*<!-- not on FerretDB: (.+?) -->[ \t]*$", re.M)
# The reasons an example may give, each what FerretDB v1.24 documents it lacks
# (tests/ferretdb/unsupported.py cites the pages).
REASONS = {
    "the simulated deployment": "it runs the simulator: the plugin's fixtures, elections, "
                                "fail points, serve",
    "a replica set": "FerretDB v1.24 is a standalone: no replication (its OpLog page)",
    "change streams": "no $changeStream stage (its aggregation stages)",
    "transactions": "no commitTransaction or abortTransaction (its supported commands)",
    "tailable awaitData": "find's awaitData is not implemented (its supported commands)",
    "client bulk write": "MongoDB 8.0's bulkWrite: FerretDB v1.24 reports wire version 21 "
                         "(MongoDB 7.0), so the driver refuses it as PyMongo does",
}


def _rewrite_for(server):
    """The guides' replica set, written as a reader connects to it, becomes FerretDB's plain
    listener with the setup user (``authSource=admin`` where the guides say
    ``replicaSet=rs``)."""
    userinfo = f"{server.user}:{server.password}@"
    host = f"127.0.0.1:{server.address[1]}"

    def rewrite(text):
        text = text.replace("127.0.0.1:27017,127.0.0.1:27018,127.0.0.1:27019", "127.0.0.1:27017")
        text = re.sub(r"mongodb://127\.0\.0\.1:27017/(\w*)\?replicaSet=rs",
                      rf"mongodb://{userinfo}{host}/\1?authSource=admin", text)
        return text.replace("127.0.0.1:27017", host)
    return rewrite


def _marked_blocks(text):
    """(start, end, reason) of each code block a marker stands before: every example in it
    (a doctest block is one example per prompt) is skipped."""
    blocks = []
    for marker in MARKER_LINE.finditer(text):
        fence = text.index("```", marker.end())
        close = text.index("```", text.index("\n", fence))
        blocks.append((text.rfind("\n", 0, fence) + 1, close, marker.group(1)))
    return blocks


def _skip(example, blocks, environ):
    """The marker's reason if ``example`` is in a marked block, else None. A skipped shell
    session's ``export`` lines still set the environment of the sessions after it."""
    for start, end, reason in blocks:
        if start <= example.region.start <= end:
            if example.document.text[start:end].lstrip().startswith("```console"):
                for line, _ in doc_examples.commands(example.parsed):
                    if line.startswith("export "):
                        name, _, value = line[len("export "):].partition("=")
                        environ[name] = value.split()[0]
            return reason
    return None


@pytest.mark.parametrize("path", DOCUMENTS)
def test_the_documents_examples_run_on_ferretdb(ferretdb, ferretdb_deployment, path, record_property):
    ferretdb_deployment.store.reset()
    document_type = type("FerretDBDocument", (RewrittenDocument,),
                         {"rewrite": staticmethod(_rewrite_for(ferretdb))})
    document = document_type.parse(str(ROOT / path), *PARSERS)
    namespace = document.namespace
    namespace.update(__environ__={}, __logging__=doc_examples.logging_state())
    cache = tempfile.TemporaryDirectory()
    saved = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = cache.name
    ran, skipped, failed = 0, [], []
    blocks = _marked_blocks(document.text)
    try:
        for example in document.examples():
            reason = _skip(example, blocks, namespace["__environ__"])
            if reason is not None:
                assert reason in REASONS, f"{path}: unknown reason {reason!r}"
                skipped.append(reason)
                continue
            try:
                example.evaluate()
            except Exception as exc:  # noqa: BLE001 -- every failing example is reported
                failed.append(f"{path}, {document.line_column(example.region.start)}: {exc}")
            ran += 1
    finally:
        from singlemongo import client_cache
        client_cache.clear()
        doc_examples.restore_logging(namespace["__logging__"])
        os.environ.pop("XDG_CACHE_HOME", None) if saved is None else \
            os.environ.__setitem__("XDG_CACHE_HOME", saved)
        cache.cleanup()
    assert not failed, "\n\n".join(failed)
    record_property("examples", ran)
    if not ran and not skipped:
        pytest.skip(f"{path} has no examples")
    if not ran:
        pytest.skip(f"{path}: every example needs what FerretDB lacks ({sorted(set(skipped))})")
