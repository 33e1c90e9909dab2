"""limits' MongoDB storage (the rate limiter behind Flask-Limiter) as its documentation
writes it: a fixed window, a moving window and a sliding window of 3 hits a minute, each hit
until refused, its stats read, then cleared. Run by the ecosystem tests with PyMongo and with
singlemongo (``install_as_pymongo()``). Before, with either driver, the simulator counted
``None`` hits (it had no ``$$NOW``, and compared a missing field as never below a date) and
refused the moving window's second hit (an array index past the end matched nothing)."""
from limits import parse, storage, strategies
from pymongo import MongoClient


def main(uri):
    MongoClient(uri).drop_database("limits")
    store = storage.storage_from_string(uri, database_name="limits")
    out = {"check": store.check()}
    item = parse("3/minute")
    for name, limiter in (("fixed", strategies.FixedWindowRateLimiter(store)),
                          ("moving", strategies.MovingWindowRateLimiter(store)),
                          ("sliding", strategies.SlidingWindowCounterRateLimiter(store))):
        hits = [limiter.hit(item, "user", name) for _ in range(5)]
        stats = limiter.get_window_stats(item, "user", name)
        out[name] = {"hits": hits, "test": limiter.test(item, "user", name),
                     "remaining": stats.remaining}
        limiter.clear(item, "user", name)
        out[name]["after_clear"] = limiter.hit(item, "user", name)
    store.reset()
    out["left"] = MongoClient(uri).limits.windows.count_documents({})
    return out
