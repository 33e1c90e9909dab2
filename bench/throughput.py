"""Bulk throughput in one process: insert_many of N small documents, then find() of them all.
Prints documents per second for each."""
import sys
import time

driver, uri, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
client = __import__(driver).MongoClient(uri)
coll = client.bench[f"bulk_{driver}"]
coll.drop()
docs = [{"i": i, "s": "x"} for i in range(n)]
start = time.perf_counter()
coll.insert_many(docs)
inserted = n / (time.perf_counter() - start)
start = time.perf_counter()
found = sum(1 for _ in coll.find({}, {"_id": 0}))
read = found / (time.perf_counter() - start)
assert found == n, found
coll.drop()
client.close()
print(inserted, read)
