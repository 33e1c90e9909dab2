"""Find the official JSON suites and recognise each file's format from its content.

Trees come from ``spec_sources.trees()``: SINGLEMONGO_SPEC_TESTS (colon-separated), else
../shared/spec-tests when it is beside the checkout plus PyMongo's source distribution (cached
under .spec-tests/). Each case becomes a pytest item whose id starts with the tree's label and
contains the file's path.
"""
import json
import pathlib

from bson import json_util

from .spec_sources import trees

# Formats this driver does not run, and why (a multi-threaded-only or out-of-scope format).
NOT_APPLICABLE = {
    "selection-in-window": "operationCount-based selection within the latency window is only "
                           "for multi-threaded or async drivers (server selection tests README)",
}


# Where PyMongo's newer copy of the specifications (2026-11) and ../shared (2026-08-13)
# disagree, this project follows ../shared: it is the revision the project was asked to build.
# Each entry: a marker found in the case, and why the case does not apply.
REVISION_DIFFERENCES = {
    "srvAllowedHostsSuffix": "the srvAllowedHostsSuffix option exists only in the newer revision "
                             "in PyMongo's source distribution (its tests need the Public Suffix "
                             "List); ../shared (92b3c0b, 2026-08-13), which this project "
                             "follows, has no such option",
}


def revision_difference(case):
    """The reason a case follows another revision than this project's, or None."""
    text = json_util.dumps(case)
    return next((why for marker, why in REVISION_DIFFERENCES.items() if marker in text), None)


def load(path):
    return json_util.loads(pathlib.Path(path).read_text(encoding="utf-8"))


def detect_format(doc):
    """The format of one JSON document, from its keys alone."""
    if not isinstance(doc, dict):
        return None
    if "phases" in doc:
        monitoring = any("events" in p.get("outcome", {}) for p in doc["phases"])
        return "sdam-monitoring" if monitoring else "sdam"
    if "topology_description" in doc:
        return "selection-in-window" if "mocked_topology_state" in doc else "selection"
    if "avg_rtt_ms" in doc and "new_rtt_ms" in doc:
        return "rtt"
    tests = doc.get("tests")
    if isinstance(tests, list) and tests and all(isinstance(t, dict) for t in tests):
        if all("uri" in t and "valid" in t for t in tests):
            return "uri"
        if all(set(t) == {"description", "uri"} for t in tests):
            return "credential-disclosure"  # connection string spec: a URI and nothing else
        if any("operations" in t for t in tests) or "createEntities" in doc:
            return "unified"
    if "uri" in doc and any(k in doc for k in ("seeds", "numSeeds", "hosts", "numHosts", "error")):
        return "dns-seedlist"
    if "createEntities" in doc or "schemaVersion" in doc:
        return "unified"
    return None


def collect():
    """(id, path, format, case) for every case; a uri or credential-disclosure file gives
    one case per test."""
    items = []
    for label, base in trees():
        for path in sorted(base.rglob("*.json")):
            rel = f"{label}/{path.relative_to(base)}"
            try:
                doc = load(path)
            except (ValueError, json.JSONDecodeError) as exc:
                items.append((rel, path, "unreadable", str(exc)))
                continue
            fmt = detect_format(doc)
            if fmt in ("uri", "credential-disclosure"):
                for i, case in enumerate(doc["tests"]):
                    items.append((f"{rel}[{i}]", path, fmt, case))
            else:
                items.append((rel, path, fmt, doc))
    return items
