"""Project-wide test support: authenticated deployments for the unified suites, and the summary
line saying how many official spec items ran, from which tree."""
import collections
import gc
import os
import re
import shutil
import signal
import subprocess

import pytest

from singlemongo.testing import LoadBalancer, ReplicaSet, Sharded, Standalone

# Property tests in the gating runs (make test, the tiers .ci/run runs) draw the same examples
# every run, so a run fails for a change, never for a draw; `make fuzz`
# (HYPOTHESIS_PROFILE=fuzz) draws new ones each run, and what it finds becomes a test. The
# profiles and @settings the test modules make inherit this, being made after it.
if os.environ.get("HYPOTHESIS_PROFILE") != "fuzz":
    from hypothesis import settings as _hypothesis_settings
    _hypothesis_settings.register_profile("gate", derandomize=True)
    _hypothesis_settings.load_profile("gate")

from .spec_sources import CACHE, trees

# rs, client and db: the simulator's own tests (tests/test_simulator_*.py).
pytest_plugins = ["tests.simulated"]

# A shell starts a background job with SIGINT ignored, and every child inherits that: a CLI
# test's Ctrl-C would then be ignored by the CLI itself (it hangs). Caught here, SIGINT is
# back to its default in each child the tests start, as from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

KINDS = {"single": Standalone, "replicaset": ReplicaSet, "sharded": Sharded,
         "load-balanced": LoadBalancer}
SPEC_ITEM = re.compile(r"::test_(spec|unified)\[([^/\]]+)/")
UNIFIED_ITEM = re.compile(r"::test_unified\[[^/\]]+/(.+)/([^/]+\.json)::")
SHORT_REASONS = {"needs a streaming or threaded monitor": "monitor",
                 "runOnRequirements not met": "server version",
                 "written for other topologies": "other topology",
                 "skipped by the test file itself": "file's skipReason",
                 "needs an API this driver does not have yet": "API not yet",
                 "the seed policy differs": "seed policy",
                 "PyMongo 4 removed this API": "removed in PyMongo 4",
                 "the simulated deployment does not implement": "simulator lacks",
                 "the test cannot pass as written": "self-contradictory",
                 "written for another specifications revision": "other revision"}


def _import_every_module():
    """Every module of singlemongo, imported once here, before any test runs. pytest rewrites
    the assertions of each module of singlemongo's distribution (it provides a pytest
    plugin) when the module is first imported. Left to a test, a first import inside a
    test failed that way in a fresh clone's make test: "SystemError: AST constructor recursion
    depth mismatch" (after=225, 75 frames deep: the depth of a second, nested conversion).
    CPython 3.11's AST converter keeps one depth counter per interpreter, so a nested
    import breaks the outer one. The likely nested import: a driver finalizer run by the
    collector during the outer conversion (a dropped cursor's check-in, or a dropped
    client's socket closing, published a CMAP event, and the event's log module loads at
    first use). Neither publishes from a finalizer any more (tests/test_pool_events.py);
    this stays because the cause was never pinned down."""
    import importlib
    import pkgutil
    import singlemongo
    for info in pkgutil.walk_packages(singlemongo.__path__, "singlemongo."):
        if info.name != "singlemongo.__main__":  # runs the command line
            importlib.import_module(info.name)


def pytest_collection_finish(session):
    """The parsed spec files and test items live for the whole run: keep them out of the
    garbage collector's full passes, which otherwise take 50-130 ms here, longer than the
    100 ms socketTimeoutMS some unified tests run with (a pause mid-reply failed one)."""
    _import_every_module()
    gc.collect()
    gc.freeze()
    # Under pytest-xdist every worker collects everything: the worker that runs the site's
    # tests builds it when it gets to them (tests/test_docs.py), no other.
    if "PYTEST_XDIST_WORKER" not in os.environ and \
            any(item.nodeid.startswith("tests/test_docs.py") for item in session.items):
        from .test_docs import start_build  # the site builds beside the other tests
        session.config.singlemongo_site_build = start_build()


@pytest.fixture(scope="session")
def authenticated_deployments():
    """``get(topology, users)``: a deployment that requires SCRAM authentication, started
    the first time a test asks for it and stopped at the end of the session."""
    started = {}

    def get(topology, users):
        key = (topology, tuple(sorted(users.items())))
        if key not in started:
            started[key] = KINDS[topology](users=users).start()
        return started[key]

    yield get
    for deployment in started.values():
        deployment.stop()


@pytest.fixture(scope="session")
def oidc_deployments():
    """``get(topology)``: a deployment that requires MONGODB-OIDC (its ``oidc_issuer``
    issues the tokens it accepts), for the unified ``auth`` tests."""
    from singlemongo.testing.auth.oidc import Oidc, OidcIssuer
    started = {}

    def get(topology):
        if topology not in started:
            issuer = OidcIssuer()
            started[topology] = KINDS[topology](mechanisms=[Oidc(issuer)]).start()
            started[topology].oidc_issuer = issuer
        return started[topology]

    yield get
    for deployment in started.values():
        deployment.stop()


@pytest.fixture(scope="session")
def certs(tmp_path_factory):
    """A test CA and a server certificate for 127.0.0.1, generated with openssl."""
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to generate a test CA")
    d = tmp_path_factory.mktemp("tls")
    run = lambda *a: subprocess.run(a, cwd=d, check=True, capture_output=True)
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
        "-out", "ca.pem", "-days", "2", "-subj", "/CN=singlemongo test CA")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key",
        "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    (d / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1\n")
    run("openssl", "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf")
    # A client certificate for MONGODB-X509 (subject CN=client,OU=drivers,O=singlemongo),
    # as one PEM with its key, and again with the key encrypted by a password.
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "client.key",
        "-out", "client.csr", "-subj", "/O=singlemongo/OU=drivers/CN=client")
    run("openssl", "x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "client.crt", "-days", "2")
    crt = (d / "client.crt").read_bytes()
    (d / "client.pem").write_bytes(crt + (d / "client.key").read_bytes())
    run("openssl", "pkey", "-in", "client.key", "-aes256", "-passout",
        "pass:" + CLIENT_KEY_PASSWORD, "-out", "client-encrypted.key")
    (d / "client-encrypted.pem").write_bytes(crt + (d / "client-encrypted.key").read_bytes())
    return d


class Commands:
    """An event listener keeping the commands a client started (``started``)."""

    def __init__(self):
        self.started = []

    def __call__(self, event):
        if type(event).__name__ == "CommandStartedEvent":
            self.started.append(event.command)

    def named(self, name):
        return [c for c in self.started if next(iter(c)) == name]


CLIENT_KEY_PASSWORD = "s3cret-key-passphrase"
CLIENT_SUBJECT = "CN=client,OU=drivers,O=singlemongo"


def server_context(certs, verify_clients=False):
    """An SSLContext serving the test CA's server certificate; ``verify_clients`` also asks
    for client certificates and verifies them with the test CA (MONGODB-X509)."""
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs / "server.pem", certs / "server.key")
    if verify_clients:
        ctx.verify_mode = ssl.CERT_OPTIONAL
        ctx.load_verify_locations(certs / "ca.pem")
    return ctx



def _short_reason(report):
    text = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    text = text.partition("Skipped: ")[2] or text
    return next((short for prefix, short in SHORT_REASONS.items() if text.startswith(prefix)),
                "other: " + text[:60])


# A test run once per topology (tests/test_unified.py, EVERY_TOPOLOGY) ends its id so.
TOPOLOGY_SUFFIX = re.compile(r" \[(replicaset|sharded|single|load-balanced)\]\]?$")


def unified_table(terminalreporter):
    """Per directory: files, passed, expected failures, skipped by reason (markdown)."""
    rows = collections.defaultdict(lambda: {"files": set(), "outcomes": collections.Counter()})
    for outcome in ("passed", "failed", "skipped", "xfailed", "xpassed"):
        for report in terminalreporter.stats.get(outcome, ()):
            found = UNIFIED_ITEM.search(getattr(report, "nodeid", ""))
            if not found or (outcome == "passed" and report.when != "call"):
                continue
            row = rows[found.group(1)]
            row["files"].add(found.group(2))
            key = f"skipped: {_short_reason(report)}" if outcome == "skipped" else outcome
            row["outcomes"][key] += 1
            topology = TOPOLOGY_SUFFIX.search(report.nodeid)
            if topology and outcome == "passed":
                row.setdefault("by_topology", collections.Counter())[topology.group(1)] += 1
    if not rows:
        return []
    lines = ["| directory | files | tests | passed | expected to fail | skipped (reason: count) |",
             "| --- | --- | --- | --- | --- | --- |"]
    for directory, row in sorted(rows.items()):
        o = row["outcomes"]
        skipped = ", ".join(f"{k[9:]}: {n}" for k, n in sorted(o.items()) if k.startswith("skipped"))
        split = row.get("by_topology")
        passed = f"{o['passed']}" + (" (" + ", ".join(
            f"{t} {n}" for t, n in sorted(split.items())) + ")" if split else "")
        lines.append(f"| {directory} | {len(row['files'])} | {sum(o.values())} | {passed} | "
                     f"{o['xfailed']} | {skipped} |"
                     + (f" FAILED {o['failed']}" if o["failed"] else ""))
    return lines


def pytest_terminal_summary(terminalreporter):
    counts = collections.defaultdict(collections.Counter)
    for outcome in ("passed", "failed", "skipped", "xfailed", "xpassed", "error"):
        for report in terminalreporter.stats.get(outcome, ()):
            found = SPEC_ITEM.search(getattr(report, "nodeid", ""))
            if found and report.when in ("call", "setup") and not (
                    outcome == "passed" and report.when == "setup"):
                kind = "unified" if found.group(1) == "unified" else "pure-format"
                counts[(found.group(2), kind)][outcome] += 1
    if not counts:
        return
    terminalreporter.section("official spec items")
    labels = {label: str(path) for label, path in trees()}
    for (tree, kind), outcomes in sorted(counts.items()):
        total = sum(outcomes.values())
        detail = ", ".join(f"{n} {outcome}" for outcome, n in sorted(outcomes.items()))
        terminalreporter.write_line(f"{tree} ({kind}): {total} items: {detail}  "
                                    f"[{labels.get(tree, '?')}]")
    table = unified_table(terminalreporter)
    if table:
        terminalreporter.section("unified-format suites")
        for line in table:
            terminalreporter.write_line(line)
        if CACHE.is_dir():
            (CACHE / "unified-table.md").write_text("\n".join(table) + "\n")
