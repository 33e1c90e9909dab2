"""Find the official JSON suites and recognise each file's format from its content.

Directories come from SINGLEMONGO_SPEC_TESTS (colon-separated), else ../shared/spec-tests
beside the checkout. Each case becomes a pytest item whose id contains the file's path.
"""
import json
import os
import pathlib

from bson import json_util

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_DIR = ROOT.parent / "shared" / "spec-tests"

# Formats this driver does not run, and why (a multi-threaded-only or out-of-scope format).
NOT_APPLICABLE = {
    "selection-in-window": "operationCount-based selection within the latency window is only "
                           "for multi-threaded or async drivers (server selection tests README)",
    "unified": "unified test format needs a live deployment and the unified runner, which a "
               "single-threaded pure-core runner does not provide",
}


def spec_dirs():
    env = os.environ.get("SINGLEMONGO_SPEC_TESTS")
    if env:
        return [pathlib.Path(p) for p in env.split(":") if p]
    return [DEFAULT_DIR] if DEFAULT_DIR.is_dir() else []


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
        if any("operations" in t for t in tests) or "createEntities" in doc:
            return "unified"
    if "uri" in doc and any(k in doc for k in ("seeds", "numSeeds", "hosts", "numHosts", "error")):
        return "dns-seedlist"
    if "createEntities" in doc or "schemaVersion" in doc:
        return "unified"
    return None


def collect():
    """(id, path, format, case) for every case; a uri file gives one case per test."""
    items = []
    for base in spec_dirs():
        for path in sorted(base.rglob("*.json")):
            rel = f"{base.name}/{path.relative_to(base)}"
            try:
                doc = load(path)
            except (ValueError, json.JSONDecodeError) as exc:
                items.append((rel, path, "unreadable", str(exc)))
                continue
            fmt = detect_format(doc)
            if fmt == "uri":
                for i, case in enumerate(doc["tests"]):
                    items.append((f"{rel}[{i}]", path, fmt, case))
            else:
                items.append((rel, path, fmt, doc))
    return items
