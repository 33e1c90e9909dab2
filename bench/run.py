"""`make bench`: singlemongo against PyMongo and a raw-socket floor, in one run, on the
simulated deployment, as users get them: a regular (non-editable) install into its own venv
(the Makefile makes it), compiled modules cached, PYTHONDONTWRITEBYTECODE unset.

Every one-off figure is whole fresh processes run in turn (floor, singlemongo, PyMongo: paired,
so drift hits all alike); ratios are per pair, shown as median (min-max). Writes the table to
the terminal and to docs/bench/latest.md (the performance guide shows it)."""
import os
import pathlib
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
RUNS = int(os.environ.get("BENCH_RUNS", "11"))
PY = sys.executable
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}

from singlemongo.testing import ReplicaSet, Standalone  # noqa: E402  (the installed copy)

import paths  # noqa: E402
import sdam_bench  # noqa: E402
import steady_rows  # noqa: E402


def run(argv, env=ENV):
    start = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"{argv} failed: {out.stderr[-2000:]}")
    return elapsed, out


def paired(argvs, runs=RUNS):
    """Each argv's wall times, the argvs run in turn ``runs`` times, after one run of each
    that is not counted (it fills the page cache and writes compiled modules)."""
    for argv in argvs:
        run(argv)
    times = [[] for _ in argvs]
    for _ in range(runs):
        for i, argv in enumerate(argvs):
            times[i].append(run(argv)[0])
    return times


def spread(values, fmt="{:.2f}"):
    return (fmt.format(statistics.median(values)) + " (" + fmt.format(min(values)) + "-"
            + fmt.format(max(values)) + ")")


def ms(values):
    return spread([v * 1000 for v in values], "{:.1f}") + " ms"


def ratio(a, b):
    return spread([x / y for x, y in zip(a, b)]) + "x"


def floor_argv(dep):
    primary = next(s for s in dep.servers if getattr(s, "role", "") in ("primary", "standalone"))
    return [PY, str(HERE / "floor.py"), primary.address_text]


def one_off_argv(driver, uri):
    return [PY, str(HERE / "one_off.py"), driver, uri]


def with_user(uri, user):
    return uri.replace("mongodb://", f"mongodb://{user}@", 1)


def seeded(dep):
    dep.store.seed("bench", "c", [{"_id": 1, "name": "bench", "n": 42}])
    return dep


def connections_per_one_off(dep, uri, runs=3):
    before = dep.total_connections()
    for _ in range(runs):
        run(one_off_argv("singlemongo", uri))
    return (dep.total_connections() - before) / runs


def one_off_rows(rows):
    with seeded(Standalone()) as sa, seeded(ReplicaSet(3)) as rs, seeded(ReplicaSet(50)) as big:
        for name, dep, goal in (("standalone", sa, 1.20), ("3-member replica set", rs, 1.20),
                                ("50-member replica set", big, 1.25)):
            argvs = [floor_argv(dep), one_off_argv("singlemongo", dep.uri),
                     one_off_argv("pymongo", dep.uri) if dep is not big else
                     [PY, str(HERE / "floor_scan.py"), dep.uri]]
            t = paired(argvs)
            plain_instruction_row(rows, name, dep, argvs)
            rows.append((f"cold one-off find_one, {name}", ms(t[0]), ms(t[1]),
                         ms(t[2]) if dep is not big else "-", ratio(t[1], t[0]),
                         ratio(t[1], t[2]) if dep is not big else "-",
                         "-" if dep is big else f"<= {goal:.2f}x floor (median)"))
            # The wall clock's goal is on the median of the paired ratios.
            check(f"cold one-off find_one, {name}, wall clock / "
                  f"{'scan floor' if dep is big else 'floor'}",
                  statistics.median(x / y for x, y in zip(t[1], t[2] if dep is big else t[0])),
                  goal, fatal=False)
            if dep is big:  # the lower bound of any driver that scans as the spec says
                rows.append((f"raw scan floor, {name} (a hello to every member at once, then "
                             "the find)", ms(t[2]), ms(t[1]), "-", ratio(t[1], t[2]), "-",
                             f"<= {goal:.2f}x scan floor (median)"))
                member_row(rows, rs, big)
        rss = {}
        for label, argv in (("floor", floor_argv(sa)), ("sm", one_off_argv("singlemongo", sa.uri)),
                            ("pm", one_off_argv("pymongo", sa.uri))):
            kib = [int(run(argv, dict(ENV, BENCH_RSS="1"))[1].stderr.split()[-1])
                   for _ in range(3)]
            rss[label] = statistics.median(kib) / 1024
        rows.append(("peak RSS of a one-off (MiB)", f"{rss['floor']:.1f}", f"{rss['sm']:.1f}",
                     f"{rss['pm']:.1f}", f"+{rss['sm'] - rss['floor']:.1f} MiB", "",
                     "<= floor + 1.5 MiB"))
        cache_rows(rows, rs)
        steady = []
        steady_rows.steady_rows(steady, check, run, PY, ENV, sa, spread)
        rows.extend(steady)
        write_table(f"steady-python{sys.version_info[0]}.{sys.version_info[1]}.md", steady)


def member_row(rows, small, big):
    """What one more member costs a scan: the one-off from ``small`` to ``big`` members,
    singlemongo's against the raw scan floor's (the same program at both sizes)."""
    def counts(dep):
        return [instructions([PY, str(HERE / "floor_scan.py"), dep.uri]),
                instructions(one_off_argv("singlemongo", dep.uri))]
    (floor_small, sm_small), (floor_big, sm_big) = counts(small), counts(big)
    if floor_small is None:
        rows.append(("one more member in a scan, instructions", "-", "skipped: no valgrind",
                     "", "", "", ""))
        return
    members = len(big.servers) - len(small.servers)
    floor, sm = (floor_big - floor_small) / members, (sm_big - sm_small) / members
    check("one more member in a scan, instructions / the scan floor's", sm / floor,
          MEMBER_GUARD)
    rows.append((f"one more member in a scan ({len(small.servers)} to {len(big.servers)} "
                 "members), instructions (thousands)", f"{floor / 1e3:.0f}", f"{sm / 1e3:.0f}",
                 "-", f"{sm / floor:.2f}x", "-",
                 f"<= {MEMBER_GOAL:.2f}x scan floor (not met; guard {MEMBER_GUARD:.2f}x)"))


def plain_instruction_row(rows, name, dep, argvs):
    """The plain path's instruction count against its floor (with 50 members, against the
    raw scan floor, which is what any driver that scans as the spec says must do)."""
    if dep.servers and len(dep.servers) == 50:
        instruction_row(rows, f"cold one-off find_one, {name}", argvs[2], argvs[1], None,
                        PLAIN_GOALS[name], "scan floor")
    else:
        instruction_row(rows, f"cold one-off find_one, {name}", *argvs, PLAIN_GOALS[name],
                        guard=PLAIN_GUARDS.get(name))


def plain_rows(rows):
    """The plain path's instructions alone (standalone and 3 members), for BENCH_ROWS=paths."""
    with seeded(Standalone()) as sa, seeded(ReplicaSet(3)) as rs:
        for name, dep in (("standalone", sa), ("3-member replica set", rs)):
            plain_instruction_row(rows, name, dep, [floor_argv(dep),
                                                    one_off_argv("singlemongo", dep.uri),
                                                    one_off_argv("pymongo", dep.uri)])


def cache_rows(rows, rs):
    with seeded(ReplicaSet(3)) as slow:
        for s in slow.servers:
            s.latency_s = 0.020
        for name, dep in (("loopback", rs), ("20 ms per reply", slow)):
            cache = pathlib.Path(tempfile.mkdtemp()) / "topology.bson"
            warm_uri = f"{dep.uri}&topologyCacheFile={cache}"
            run(one_off_argv("singlemongo", warm_uri))  # writes the cache
            t = paired([one_off_argv("singlemongo", dep.uri),
                        one_off_argv("singlemongo", warm_uri)])
            conns = (connections_per_one_off(dep, dep.uri), connections_per_one_off(dep, warm_uri))
            rows.append((f"one-off, warm topology cache vs none, 3 members, {name}", "-",
                         f"{ms(t[1])} vs {ms(t[0])}", "-", "-",
                         f"cache/none {ratio(t[1], t[0])}; connections {conns[1]:.0f} vs "
                         f"{conns[0]:.0f}", "never slower"))
            shutil.rmtree(cache.parent, ignore_errors=True)


# Goals in instructions (callgrind; `make bench` exits 1 when one is missed, with a line
# saying which): the restated plain-path goals, and each production path at 1.10x its floor,
# each production path within 1 % of it today (README, "Performance").
PLAIN_GOALS = {"standalone": 1.17, "3-member replica set": 1.18, "50-member replica set": 1.40}
# Every plain goal is met (2026-12-07: 195.7 M, 1.141x standalone; 197.8 M, 1.153x with 3
# members); a row that misses its goal one day gets its guard here, at its figure.
PLAIN_GUARDS: dict = {}
# Members: one more member's cost in a scan, at most 2x the raw scan floor's (issue 59). Not
# met: measured from 3 to 50 members on 2026-12-07, 366,000 instructions against the floor's
# 161,000 (2.28x; docs/performance.md, "Members": where they go). The guard leaves room for
# the spread the hash seed gives (a few thousand instructions).
MEMBER_GOAL, MEMBER_GUARD = 2.00, 2.40
PATH_GOAL = 1.10
# Where the 1.10x goal is not clearly met (README, "Performance": why, and the options), the
# guard is the figure measured against the lean floors (each imports only what its protocol
# uses), so that a change making it worse still fails. Every path meets the goal today
# (2026-12-07: MONGODB-AWS with 3 members, the closest, 1.098x), which is its guard.
PATH_GUARDS: dict = {}
FAILURES = []
WARNINGS = []  # wall-clock misses: the machine's load moves them, so they do not fail


# The goals and guards were set on this Python: elsewhere a miss is reported, not failed
# (another interpreter's import costs differ: 3.12's plain one-off is 1.177x).
GUARDED_PYTHON = (3, 11)


def check(what, value, goal, fatal=True):
    """Record a missed goal (the exit status and the last lines say so; a wall-clock miss,
    or any miss on another Python than GUARDED_PYTHON, is a warning line only)."""
    fatal = fatal and sys.version_info[:2] == GUARDED_PYTHON
    if value is not None and value > goal:
        (FAILURES if fatal else WARNINGS).append(f"{what}: {value:.3f}x, over its goal of "
                                                 f"{goal:.2f}x")


_COUNTED: dict = {}


def instructions(argv):
    """``paths.instructions``, counted once per argv in a run (the member row reuses the
    one-off rows' counts)."""
    key = tuple(argv)
    if key not in _COUNTED:
        _COUNTED[key] = paths.instructions(argv, ENV)
    return _COUNTED[key]


def instruction_row(rows, what, floor_argv, sm_argv, pm_argv, goal, floor_label="floor",
                    guard=None):
    counts = [instructions(argv) if argv else None for argv in (floor_argv, sm_argv, pm_argv)]
    if counts[0] is None:
        rows.append((f"{what}, instructions", "-", "skipped: no valgrind", "", "", "", ""))
        return
    sm_ratio = counts[1] / counts[0]
    check(f"{what}, instructions / {floor_label}", sm_ratio, guard or goal)
    shown = f"<= {goal:.2f}x {floor_label}" + (f" (not met; guard {guard:.3f}x)" if guard
                                                 else "")
    rows.append((f"{what}, instructions (millions)", f"{counts[0] / 1e6:.1f}",
                 f"{counts[1] / 1e6:.1f}", f"{counts[2] / 1e6:.1f}" if counts[2] else "-",
                 f"{sm_ratio:.3f}x", f"{counts[1] / counts[2]:.2f}x" if counts[2] else "-",
                 shown))


def path_rows(rows):
    """Each production path: the wall clock (paired runs), instructions and round trips of
    its raw floor, singlemongo and PyMongo, standalone and with 3 members."""
    certs = make_certs()
    if certs is None:
        rows.append(("TLS / SCRAM / X.509 / AWS paths", "-", "skipped: no openssl", "", "",
                     "", ""))
        return
    for name, options, floor_args, uri_of in paths.path_cases(certs):
        goal = PATH_GOAL
        with paths.deployments(options, seeded) as deps:
            for shape, dep in deps:
                argvs = [paths.floor_argv(PY, dep, floor_args),
                         one_off_argv("singlemongo", uri_of(dep)),
                         one_off_argv("pymongo", uri_of(dep))]
                what = f"cold one-off find_one, {name}, {shape}"
                t = paired(argvs)
                rows.append((what, ms(t[0]), ms(t[1]), ms(t[2]), ratio(t[1], t[0]),
                             ratio(t[1], t[2]), f"<= {goal:.2f}x floor"))
                instruction_row(rows, what, *argvs, goal, guard=PATH_GUARDS.get((name, shape)))
                trips = [paths.requests_answered(argv, dep, ENV) for argv in argvs]
                rows.append((f"{what}, round trips (requests the primary answered; PyMongo's "
                             f"include its monitors')", *map(str, trips),
                             f"{trips[1] - trips[0]:+d}", f"{trips[1] - trips[2]:+d}", "= floor"))
                if trips[1] > trips[0]:
                    FAILURES.append(f"{what}: {trips[1]} round trips, the floor {trips[0]}")
    shutil.rmtree(certs, ignore_errors=True)


def make_certs():
    if shutil.which("openssl") is None:
        return None
    d = pathlib.Path(tempfile.mkdtemp())
    sh = lambda *a: subprocess.run(a, cwd=d, check=True, capture_output=True)
    # The extensions Python 3.13's default context (VERIFY_X509_STRICT) requires.
    sh("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out",
       "ca.pem", "-days", "2", "-subj", "/CN=bench CA", "-addext",
       "keyUsage=critical,keyCertSign,cRLSign")
    for name, subj in (("server", "/CN=127.0.0.1"), ("client", "/O=singlemongo/OU=drivers/CN=client")):
        sh("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out",
           f"{name}.csr", "-subj", subj)
        (d / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1\n"
                                   "authorityKeyIdentifier=keyid,issuer\n"
                                   "keyUsage=digitalSignature,keyEncipherment\n"
                                   "extendedKeyUsage=serverAuth,clientAuth\n")
        sh("openssl", "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
           "-CAcreateserial", "-out", f"{name}.pem", "-days", "2", "-extfile", "ext.cnf")
    (d / "client.pem").write_bytes((d / "client.pem").read_bytes() + (d / "client.key").read_bytes())
    return d


IMPORT = ("import time; t = time.perf_counter(); import bson; b = time.perf_counter(); {}; "
          "print(time.perf_counter() - b)")
PROBE = ("import sys; from singlemongo import MongoClient; c = MongoClient(sys.argv[1]); "
         "c.bench.c.find_one(); c.close(); "
         "print(sum(m.startswith('singlemongo') for m in sys.modules))")


def import_rows(rows):
    argvs = ([PY, "-c", IMPORT.format("from singlemongo import MongoClient")],
             [PY, "-c", IMPORT.format("from pymongo import MongoClient")])
    over = [[], []]
    for _ in range(RUNS):  # in turn, as the one-offs
        for i, argv in enumerate(argvs):
            over[i].append(float(run(argv)[1].stdout))
    rows.append(("`from ... import MongoClient` over `import bson`", "-", ms(over[0]),
                 ms(over[1]), "-", ratio(over[0], over[1]), "<= +7 ms"))
    with seeded(Standalone()) as sa:
        count = run([PY, "-c", PROBE, sa.uri])[1].stdout.strip()
    # The goal of 32 predates the engine's split into modules of one idea each (issue 61),
    # which measured each module at about 0.19 M instructions and kept six more; said, not
    # failed (docs/performance.md, "What costs what").
    rows.append(("singlemongo modules loaded by a plain one-off find_one", "-", count, "-", "-",
                 "-", "<= 32" + (" (not met: the engine's split)" if int(count) > 32 else "")))
    sm, pm = sdam_bench.median_ms(sdam_bench.singlemongo_scan, 50), sdam_bench.median_ms(
        sdam_bench.pymongo_scan, 50)
    sm25 = sdam_bench.median_ms(sdam_bench.singlemongo_scan, 25)
    rows.append(("applying one scan's 50 hellos, CPU (25 members: "
                 f"{sm25[0]:.2f} ms)", "-", "{:.2f} ({:.2f}-{:.2f}) ms".format(*sm),
                 "{:.2f} ({:.2f}-{:.2f}) ms".format(*pm), "-", f"{sm[0] / pm[0]:.2f}x",
                 "linear, <= PyMongo"))


def ferretdb_rows(rows):
    """A one-off against FerretDB v1.24 (tools/ferretdb.py), a server nobody here wrote:
    plain and TLS on an instance without authentication, TLS + SCRAM-SHA-256 on one with it;
    singlemongo and PyMongo in turn (paired), wall clock and instructions, as ratios."""
    sys.path.append(str(ROOT))  # after site-packages: singlemongo stays the installed copy
    from tools.ferretdb import VERSION, FerretDB, unavailable_reason
    reason = unavailable_reason()
    if reason:
        rows.append((f"FerretDB {VERSION} one-offs", "-", f"skipped: {reason}", "", "", "", ""))
        return
    import pymongo
    with FerretDB(auth=False) as open_server, FerretDB() as auth_server:
        for server in (open_server, auth_server):
            with pymongo.MongoClient(server.uri()) as client:
                client.bench.c.insert_one({"_id": 1, "name": "bench", "n": 42})
        for name, uri in (("plain", open_server.uri()), ("TLS", open_server.uri(tls=True)),
                          ("TLS + SCRAM-SHA-256", auth_server.uri(
                              tls=True, authMechanism="SCRAM-SHA-256"))):
            argvs = [one_off_argv("singlemongo", uri), one_off_argv("pymongo", uri)]
            t = paired(argvs)
            counts = [paths.instructions(argv, ENV) for argv in argvs]
            what = f"cold one-off find_one on FerretDB {VERSION}, {name}"
            rows.append((what, "-", ms(t[0]), ms(t[1]), "-", ratio(t[0], t[1]),
                         "< 1.00x PyMongo"))
            if counts[0] is not None:
                rows.append((f"{what}, instructions (millions)", "-", f"{counts[0] / 1e6:.1f}",
                             f"{counts[1] / 1e6:.1f}", "-", f"{counts[0] / counts[1]:.2f}x",
                             "< 1.00x PyMongo"))


def write_table(name, rows):
    """The table of ``rows`` with the machine's line, written to docs/bench/``name`` (tracked:
    the performance guide includes these files); the text written."""
    header = ("measure", "floor", "singlemongo", "PyMongo 4.20", "sm / floor", "sm / PyMongo",
              "goal")
    table = [header, tuple("---" for _ in header)] + rows
    text = "\n".join("| " + " | ".join(r) + " |" for r in table)
    machine = (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
               f"{RUNS} paired runs per one-off figure, {steady_rows.CPU_RUNS} per steady-state "
               f"CPU figure ({steady_rows.SHORT_RUNS} for the 10-command rows; "
               f"median (min-max)), {time.strftime('%Y-%m-%d')}; a regular install in its own venv")
    out = ROOT / "docs" / "bench"
    out.mkdir(exist_ok=True)
    (out / name).write_text(text + "\n\n" + machine + "\n")
    return text + "\n\n" + machine


def main():
    rows = []
    if os.environ.get("BENCH_ROWS") == "paths":  # a quick check per Python version
        plain_rows(rows)
        path_rows(rows)
    elif os.environ.get("BENCH_ROWS") == "ferretdb":
        ferretdb_rows(rows)
    elif os.environ.get("BENCH_ROWS") == "steady":  # the steady-state rows alone
        with Standalone() as sa:
            steady_rows.steady_rows(rows, check, run, PY, ENV, sa, spread)
    else:
        one_off_rows(rows)
        path_rows(rows)
        ferretdb_rows(rows)
        import_rows(rows)
    name = {"paths": f"paths-python{sys.version_info[0]}.{sys.version_info[1]}.md",
            "ferretdb": "ferretdb.md",
            "steady": f"steady-python{sys.version_info[0]}.{sys.version_info[1]}.md"}.get(os.environ.get("BENCH_ROWS"), "latest.md")
    print(write_table(name, rows))
    for warning in WARNINGS:
        print(f"bench: goal missed, not failed (a wall-clock figure, or not Python "
              f"{GUARDED_PYTHON[0]}.{GUARDED_PYTHON[1]}): {warning}")
    for failure in FAILURES:
        print(f"BENCH GOAL MISSED: {failure}")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
