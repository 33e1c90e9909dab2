"""`make bench`: singlemongo against PyMongo and a raw-socket floor, in one run, on the
simulated deployment. Each one-off figure is the median wall time of a whole fresh process.
Writes the table to the terminal and to bench-results/latest.md."""
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from singlemongo.testing import ReplicaSet, Standalone  # noqa: E402

import selection_bench  # noqa: E402

RUNS = int(os.environ.get("BENCH_RUNS", "15"))
PY = sys.executable


def wall(argv, runs=RUNS):
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        out = subprocess.run(argv, capture_output=True, text=True)
        times.append(time.perf_counter() - start)
        if out.returncode != 0:
            raise RuntimeError(f"{argv} failed: {out.stderr[-2000:]}")
    return statistics.median(times)


def one_off(dep, driver):
    return wall([PY, str(HERE / "one_off.py"), driver, dep.uri])


def floor(dep):
    primary = next((s for s in dep.servers if getattr(s, "role", "") in ("primary", "standalone")))
    return wall([PY, str(HERE / "floor.py"), primary.address_text])


def per_query_counts(dep, driver, runs=3):
    before = (dep.total_connections(), sum(sum(s.commands.values()) for s in dep.servers))
    for _ in range(runs):
        subprocess.run([PY, str(HERE / "one_off.py"), driver, dep.uri], capture_output=True,
                       check=True)
    after = (dep.total_connections(), sum(sum(s.commands.values()) for s in dep.servers))
    return ((after[0] - before[0]) / runs, (after[1] - before[1]) / runs)


STEADY = """
import sys, time
driver, uri = sys.argv[1], sys.argv[2]
mod = __import__(driver)
client = mod.MongoClient(uri)
coll = client.bench.c
coll.find_one()
start = time.perf_counter()
for _ in range(2000):
    coll.find_one()
print(2000 / (time.perf_counter() - start))
client.close()
"""


def steady(dep, driver):
    out = subprocess.run([PY, "-c", STEADY, driver, dep.uri], capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip().splitlines()[-1])


def import_time(what):
    """Median time of the import statement itself, measured inside fresh interpreters."""
    statement = f"from {what}" if " import " in what else f"import {what}"
    code = f"import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
    return statistics.median(float(subprocess.run([PY, "-c", code], capture_output=True,
                                                  text=True, check=True).stdout)
                             for _ in range(RUNS))


def interleaved(dep):
    """(floor, singlemongo, PyMongo) medians, the three run in turn so drift hits all alike."""
    primary = next(s for s in dep.servers if getattr(s, "role", "") in ("primary", "standalone"))
    argvs = ([PY, str(HERE / "floor.py"), primary.address_text],
             [PY, str(HERE / "one_off.py"), "singlemongo", dep.uri],
             [PY, str(HERE / "one_off.py"), "pymongo", dep.uri])
    times = [[], [], []]
    for _ in range(RUNS):
        for i, argv in enumerate(argvs):
            times[i].append(wall(argv, runs=1))
    return tuple(statistics.median(t) for t in times)


def seeding(dep, unique=False, total=100_000, batch=10_000):
    """Seconds per 10,000 small documents inserted into the simulator with insert_many."""
    from singlemongo import MongoClient
    client = MongoClient(dep.uri)
    coll = client.bench["seed_unique" if unique else "seed"]
    if unique:
        coll.create_index("i", unique=True)
    start = time.perf_counter()
    for first in range(0, total, batch):
        coll.insert_many([{"i": i, "s": "x"} for i in range(first, first + batch)])
    client.close()
    return (time.perf_counter() - start) / (total / 10_000)


def seed(dep):
    dep.store.seed("bench", "c", [{"_id": 1, "name": "bench", "n": 42}])
    return dep


def main():
    # An installed package has its bytecode compiled; a checkout under
    # PYTHONDONTWRITEBYTECODE would otherwise recompile every module in every process.
    import compileall
    compileall.compile_dir(str(ROOT / "singlemongo"), quiet=1)
    os.environ["PYTHONPATH"] = str(ROOT)
    rows, results = [], {}
    with Standalone() as sa, ReplicaSet(3) as rs, ReplicaSet(3) as slow:
        for s in slow.servers:
            s.latency_s = 0.020
        for dep in (sa, rs, slow):
            seed(dep)
        for name, dep in (("standalone", sa), ("replica set", rs), ("replica set, 20 ms", slow)):
            fl, sm, pm = interleaved(dep)
            results[name] = (fl, sm, pm)
            rows.append((f"cold one-off find_one, {name}", f"{sm * 1000:.1f} ms",
                         f"{pm * 1000:.1f} ms", f"{fl * 1000:.1f} ms", f"{sm / pm:.2f}",
                         f"{sm / fl:.2f}"))
        cache = ROOT / "bench-results" / "topology-cache.json"
        cache.parent.mkdir(exist_ok=True)
        cached = type("Cached", (), {"uri": f"{rs.uri}&topologyCacheFile={cache}",
                                     "servers": rs.servers,
                                     "total_connections": rs.total_connections})()
        subprocess.run([PY, str(HERE / "one_off.py"), "singlemongo", cached.uri], check=True,
                       capture_output=True)
        warm = one_off(cached, "singlemongo")
        rows.append(("cold one-off find_one, replica set, warm topology cache",
                     f"{warm * 1000:.1f} ms", "", f"{results['replica set'][0] * 1000:.1f} ms",
                     f"{warm / results['replica set'][2]:.2f}",
                     f"{warm / results['replica set'][0]:.2f}"))
        warm_conns = per_query_counts(cached, "singlemongo")
        rows.append(("connections / commands per one-off, warm topology cache",
                     "{:.0f} / {:.0f}".format(*warm_conns), "", "1 / 2", "", ""))
        conns = {d: per_query_counts(rs, d) for d in ("singlemongo", "pymongo")}
        rows.append(("connections / commands per one-off (replica set)",
                     "{:.0f} / {:.0f}".format(*conns["singlemongo"]),
                     "{:.0f} / {:.0f}".format(*conns["pymongo"]), "1 / 2", "", ""))
        plain, unique = seeding(sa), seeding(sa, unique=True)
        rows.append(("simulator: insert_many 100,000 small documents (s per 10,000)",
                     f"{plain:.2f} (unique index {unique:.2f})", "", "", "", ""))
        sm_ops, pm_ops = steady(rs, "singlemongo"), steady(rs, "pymongo")
        rows.append(("steady loop, 2000 find_one (ops/s)", f"{sm_ops:.0f}", f"{pm_ops:.0f}", "",
                     f"{sm_ops / pm_ops:.2f}", ""))
    bson_t = import_time("bson")
    lazy_t = import_time("singlemongo")
    rows.append(("`import singlemongo` (ms)", f"{lazy_t * 1000:.1f}",
                 "", f"bson {bson_t * 1000:.1f}", "", f"{(lazy_t - bson_t) * 1000:+.1f} ms vs bson"))
    sm_t, pm_t = import_time("singlemongo import MongoClient"), import_time("pymongo import MongoClient")
    rows.append(("`from ... import MongoClient` (ms)", f"{sm_t * 1000:.1f}", f"{pm_t * 1000:.1f}",
                 f"bson {bson_t * 1000:.1f}", f"{sm_t / pm_t:.2f}",
                 f"{(sm_t - bson_t) * 1000:+.1f} ms vs bson"))
    sel_sm, sel_pm = selection_bench.singlemongo_rate(), selection_bench.pymongo_rate()
    rows.append(("selection, 50-member replica set (per s)", f"{sel_sm:.0f}", f"{sel_pm:.0f}",
                 "", f"{sel_sm / sel_pm:.2f}", ""))
    header = ("measure", "singlemongo", "PyMongo", "floor", "sm / PyMongo", "sm / floor")
    table = [header, tuple("---" for _ in header)] + rows
    text = "\n".join("| " + " | ".join(r) + " |" for r in table)
    machine = (f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
               f"{RUNS} runs per median, {time.strftime('%Y-%m-%d')}")
    print(text + "\n\n" + machine)
    out = ROOT / "bench-results"
    out.mkdir(exist_ok=True)
    (out / "latest.md").write_text(text + "\n\n" + machine + "\n")


if __name__ == "__main__":
    main()
