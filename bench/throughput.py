"""Bulk throughput in one process: insert_many of N small documents, then find() of them all.
Prints documents per second for each, by the wall clock (what the script waits, the simulated
server's time included) and by this process's CPU time (what the driver itself costs: a real
server answers far faster than the simulated one, so this is the figure that tells drivers
apart)."""
import sys
import time

driver, uri, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
client = __import__(driver).MongoClient(uri)
coll = client.bench[f"bulk_{driver}"]
coll.drop()
docs = [{"i": i, "s": "x"} for i in range(n)]
wall, cpu = time.perf_counter(), time.process_time()
coll.insert_many(docs)
inserted = (n / (time.perf_counter() - wall), n / (time.process_time() - cpu))
wall, cpu = time.perf_counter(), time.process_time()
found = sum(1 for _ in coll.find({}, {"_id": 0}))
read = (found / (time.perf_counter() - wall), found / (time.process_time() - cpu))
assert found == n, found
coll.drop()
client.close()
print(inserted[0], read[0], inserted[1], read[1])
