"""Where the official JSON suites come from, fetched once and cached, never committed.

Two trees exist: ``../shared/spec-tests`` (the specifications repository at the revision the
project was given) and the ``test/`` directory of PyMongo's source distribution on the package
index, for the same PyMongo version that provides ``bson`` here. PyMongo's tree also carries
the unified-format suites (SDAM, load balancers, backpressure, retryable reads and writes,
CRUD, logging, sessions, transactions, GridFS, client-side operations timeout), so it is
always fetched; ``../shared`` is used when it
is beside the checkout. ``SINGLEMONGO_SPEC_TESTS`` (colon-separated directories) replaces both.

The source distribution is found through the package index's simple API (PEP 503) and checked
against the sha256 the index publishes; ``pip download --no-binary :all:`` does the same but
first builds the package's metadata, about a minute here, so it is only the fallback.
"""
import hashlib
import io
import os
import pathlib
import re
import subprocess
import sys
import tarfile
import tempfile
import urllib.parse
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "spec-tests"
CACHE = ROOT / ".spec-tests"
# The directories of PyMongo's test/ tree holding suites this driver runs: the pure formats,
# then the unified-format directories of issue 10, gridfs and csot (issue 18).
PURE_DIRS = ("connection_string", "uri_options", "discovery_and_monitoring", "sdam_monitoring",
             "server_selection", "max_staleness", "srv_seedlist", "auth/legacy")
UNIFIED_DIRS = ("discovery_and_monitoring/unified", "load_balancer", "client-backpressure",
                "retryable_reads/unified", "retryable_writes/unified", "crud/unified",
                "command_logging", "server_selection_logging", "sessions",
                "transactions/unified", "gridfs", "csot",
                # Issue 21: every other unified directory that applies to this driver.
                "transactions-convenient-api/unified", "command_monitoring",
                "read_write_concern/operation", "read_write_concern/write-concern-errors",
                "causal_consistency", "collection_management", "index_management",
                "versioned-api", "change_streams/unified", "connection_logging",
                "handshake/unified", "auth/unified", "run_command/unified",
                "unified-test-format/valid-pass", "unified-test-format/valid-fail",
                "unified-test-format/invalid")
INDEX = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")


def pymongo_version():
    from importlib.metadata import version
    return version("pymongo")


def pymongo_tree():
    """The cached ``test/`` tree of PyMongo's sdist, fetched when missing (None if it cannot be).
    One process fetches it at a time: pytest-xdist's workers collect at once, and a worker
    that listed a half-extracted tree would collect other tests than its peer."""
    import fcntl
    name = f"pymongo-{pymongo_version()}"
    tree = CACHE / name / "test"
    marker = CACHE / name / ".complete"
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if marker.exists() and marker.read_text() == _marker_text():
            return tree
        try:
            archive = _download(name)
        except Exception as exc:  # no index reachable: say so, the suites needing it fail
            print(f"singlemongo: cannot fetch {name} from the package index: {exc}",
                  file=sys.stderr)
            return None
        _extract(archive, name)
    return tree


def _download(name):
    return download_sdist("pymongo", name.partition("-")[2])


def download_sdist(project, version):
    """The source distribution of ``project`` ``version`` from the package index, checked
    against the index's sha256 (``pip download`` as the fallback)."""
    name = f"{project}-{version}"
    try:
        page = urllib.request.urlopen(f"{INDEX}/{project}/", timeout=60).read().decode()
        link = next(h for h in re.findall(r'href="([^"]+)"', page)
                    if h.split("#")[0].endswith(f"/{name}.tar.gz"))
        url = urllib.parse.urljoin(f"{INDEX}/{project}/", link.split("#")[0])
        data = urllib.request.urlopen(url, timeout=120).read()
        expected = re.search(r"sha256=([0-9a-f]{64})", link)
        if expected and hashlib.sha256(data).hexdigest() != expected.group(1):
            raise ValueError(f"{name}.tar.gz does not match the index's sha256")
        return data
    except Exception:
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                            "--no-binary", ":all:", f"{project}=={version}", "-d", tmp],
                           check=True, capture_output=True)
            return next(pathlib.Path(tmp).glob(f"{project}-*.tar.gz")).read_bytes()


def _extract(data, name):
    wanted = tuple(f"{name}/test/{d}/" for d in PURE_DIRS + UNIFIED_DIRS)
    target = CACHE / name
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".json") and \
                    member.name.startswith(wanted) and ".." not in member.name:
                path = CACHE / member.name
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(tar.extractfile(member).read())
    (target / ".complete").write_text(_marker_text())


def _marker_text():
    """What a complete extraction holds: a change to the directories extracts again."""
    return "extracted by tests/spec_sources.py: " + " ".join(PURE_DIRS + UNIFIED_DIRS) + "\n"


def trees():
    """[(label, directory)] to collect from; labels name the tree and its revision."""
    env = os.environ.get("SINGLEMONGO_SPEC_TESTS")
    if env:
        return [(pathlib.Path(p).name, pathlib.Path(p)) for p in env.split(":") if p]
    found = []
    if SHARED.is_dir():
        found.append(("shared", SHARED))
    tree = pymongo_tree()
    if tree is not None:
        found.append((f"pymongo-{pymongo_version()}", tree))
    return found
