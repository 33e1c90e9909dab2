"""The simulated replica set the servers tier and its measurements serve from: seeded with the
guides' product, its members' ports, and a failover on cue."""
import contextlib
import pathlib
import threading

from singlemongo import MongoClient
from singlemongo.testing import ReplicaSet

MEMBERS = 3


@contextlib.contextmanager
def seeded_replica_set():
    """A replica set of MEMBERS holding ``shop.products`` sku a1 (the CGI example's)."""
    with ReplicaSet(MEMBERS) as rs:
        with MongoClient(rs.uri) as client:
            client.shop.products.insert_one({"sku": "a1", "name": "kettle", "price": 30})
        yield rs


def shop_uri(rs, query=""):
    """The set's connection string with ``shop`` as the default database."""
    return rs.uri.replace("/?", "/shop?") + query


def member_ports(rs):
    return {int(server.address_text.rsplit(":", 1)[1]) for server in rs.servers}


def start_failover(rs):
    """The primary steps down at 1 s, member 1 is elected at 2 s: join the timers returned."""
    timers = [threading.Timer(1.0, rs.step_down), threading.Timer(2.0, rs.elect, (1,))]
    for timer in timers:
        timer.start()
    return timers


def remove_cache(name):
    """The topology cache file ``name`` a CGI process wrote: Apache passes it no TMPDIR, so
    it is under /tmp, in the web server user's private directory."""
    for path in pathlib.Path("/tmp").glob(f"singlemongo-*/{name}.bson"):
        path.unlink()
