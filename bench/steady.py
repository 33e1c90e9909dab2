"""One steady-state workload in a fresh process: ``steady.py DRIVER URI ROW PHASE``.

PHASE ``setup`` imports the driver, connects, runs a small workload of the same kind on another
collection (so that each driver has imported and built what the workload uses: the steady
state) and builds the workload's input; ``work`` does the same, then runs the workload. The bench counts each phase's instructions
and takes the difference: what the workload costs the client, start-up and input left out.
``work`` prints the workload's CPU seconds (this process only: the simulated server runs in
the bench's process). The bench seeds the collection before each run (``SEEDS``)."""
import sys
import time

# What the bench puts in bench.steady before each run of a row: (count, document maker).
SEEDS = {
    "find_one": (2_000, lambda i: {"_id": i, "name": f"user{i}", "n": i, "tags": ["a", "b"]}),
    "insert_many": (0, None),
    "iterate": (100_000, lambda i: {"_id": i, "i": i, "s": "x"}),
    "bulk_write": (6_000, lambda i: {"_id": i, "n": i, "s": "x" * 20}),
    "client_bulk_write": (6_000, lambda i: {"_id": i, "n": i, "s": "x" * 20}),
    "update_many": (10_000, lambda i: {"_id": i, "n": i, "g": i % 10}),
    "delete_many": (10_000, lambda i: {"_id": i, "n": i, "g": i % 10}),
    "aggregate": (10_000, lambda i: {"_id": i, "n": i, "g": i % 10, "s": "x"}),
}


def bulk_requests(models, **namespace):
    """10,000 mixed write models, unordered-friendly: 2,000 each of inserts, updates by
    ``_id``, replacements, upserts of new ``_id``s, and deletes (each with ``namespace=``
    for a client bulk write)."""
    requests = []
    for i in range(2_000):
        requests += [models.InsertOne({"_id": 100_000 + i, "n": i, "s": "y" * 20}, **namespace),
                     models.UpdateOne({"_id": i}, {"$set": {"n": -i}, "$inc": {"v": 1}},
                                      **namespace),
                     models.ReplaceOne({"_id": 2_000 + i}, {"n": i, "s": "z" * 20}, **namespace),
                     models.UpdateOne({"_id": 200_000 + i}, {"$set": {"n": i}}, upsert=True,
                                      **namespace),
                     models.DeleteOne({"_id": 4_000 + i}, **namespace)]
    return requests


def warm_up(row, coll, models):
    """The row's operations, once each, on a collection of their own."""
    coll.insert_many([{"_id": i, "g": i % 2} for i in range(4)])
    coll.find_one({"_id": 1})
    list(coll.find({}))
    list(coll.aggregate([{"$match": {"g": {"$gte": 0}}}]))
    coll.bulk_write([models.InsertOne({"_id": 10}), models.UpdateOne({"_id": 1}, {"$set": {"n": 1}}),
                     models.ReplaceOne({"_id": 2}, {"n": 2}),
                     models.UpdateOne({"_id": 11}, {"$set": {"n": 1}}, upsert=True),
                     models.DeleteOne({"_id": 3})], ordered=False)
    coll.database.client.bulk_write([models.InsertOne({"_id": 12}, namespace="bench.warm"),
                                     models.DeleteOne({"_id": 12}, namespace="bench.warm")],
                                    ordered=False)
    coll.update_many({"g": 0}, {"$inc": {"n": 1}})
    coll.delete_many({"g": 1})
    coll.drop()


def workload(row, coll, models):
    """The function the row times, its input built."""
    if row == "find_one":
        return lambda: [coll.find_one({"_id": i}) for i in range(2_000)]
    if row == "insert_many":
        docs = [{"i": i, "s": "x", "n": i * 0.5} for i in range(100_000)]
        return lambda: coll.insert_many(docs)
    if row == "iterate":
        return lambda: sum(1 for _ in coll.find({}))
    if row == "bulk_write":
        requests = bulk_requests(models)
        return lambda: coll.bulk_write(requests, ordered=False)
    if row == "client_bulk_write":
        requests = bulk_requests(models, namespace="bench.steady")
        return lambda: coll.database.client.bulk_write(requests, ordered=False)
    if row == "update_many":
        return lambda: [coll.update_many({"g": g}, {"$inc": {"n": 1}}) for g in range(10)]
    if row == "delete_many":
        return lambda: [coll.delete_many({"g": g}) for g in range(10)]
    if row == "aggregate":
        pipeline = [{"$match": {"g": {"$gte": 0}}}, {"$addFields": {"twice": {"$add": ["$n",
                                                                                     "$n"]}}}]
        return lambda: list(coll.aggregate(pipeline))
    raise SystemExit(f"steady.py: unknown row {row!r}")


def main(driver, uri, row, phase):
    module = __import__(driver)
    models = module if driver == "pymongo" else __import__("singlemongo.operations").operations
    # Under callgrind a run lasts 50 to 100 times longer: no heartbeat (PyMongo's monitors,
    # singlemongo's scan when one is due) and no idle-socket check may fall inside it by the
    # clock alone, or the counts would depend on when they fell. Natively none would.
    options = {"heartbeatFrequencyMS": 3_600_000}
    if driver == "singlemongo":
        options["socketCheckIntervalMS"] = 3_600_000
    client = module.MongoClient(uri, **options)
    coll = client.bench.steady
    warm_up(row, client.bench.warm, models)
    run = workload(row, coll, models)
    if phase == "work":
        cpu = time.process_time()
        run()
        print(time.process_time() - cpu)
    client.close()


if __name__ == "__main__":
    main(*sys.argv[1:5])
