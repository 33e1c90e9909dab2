"""One cold one-off find_one in a fresh process, with the driver named on the command line.
With BENCH_RSS set, prints the process's peak RSS (KiB, Linux) to stderr."""
import os
import sys

driver, uri = sys.argv[1], sys.argv[2]
if driver == "singlemongo":
    import singlemongo
    client = singlemongo.MongoClient(uri)
else:
    import pymongo
    client = pymongo.MongoClient(uri)
print(client.bench.c.find_one())
client.close()
if os.environ.get("BENCH_RSS"):
    # VmHWM: the peak of this program's own memory (ru_maxrss would include the forked
    # parent's pages from before exec).
    with open("/proc/self/status") as status:
        print(next(line.split()[1] for line in status if line.startswith("VmHWM")),
              file=sys.stderr)
