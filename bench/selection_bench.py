"""Selection throughput on a 50-member replica set description: the pure core vs PyMongo's."""
import time


def members(n=50):
    return [f"m{i}.example.com:27017" for i in range(n)]


def singlemongo_rate(seconds=1.0):
    from singlemongo.sdam import ServerDescription, TopologyDescription, parse_address
    from singlemongo.selection import Criteria, ReadPreference, SelectionSettings, select
    hosts = members()
    td = TopologyDescription.initial([parse_address(h) for h in hosts], replica_set="rs")
    for i, h in enumerate(hosts):
        hello = {"ok": 1, "setName": "rs", "hosts": hosts, "isWritablePrimary": i == 0,
                 "secondary": i != 0, "maxWireVersion": 21, "me": h, "tags": {"dc": f"d{i % 3}"}}
        td = td.update(ServerDescription.from_hello(parse_address(h), hello, 0.001 * (i % 7), 0.0))
    criteria = Criteria("read", ReadPreference("nearest", ({"dc": "d1"},)))
    settings = SelectionSettings()
    return _rate(lambda: select(td, criteria, settings), seconds)


def pymongo_rate(seconds=1.0):
    from pymongo.hello import Hello
    from pymongo.read_preferences import Nearest
    from pymongo.server_description import ServerDescription
    from pymongo.topology_description import TOPOLOGY_TYPE, TopologyDescription
    from pymongo.synchronous.settings import TopologySettings
    hosts = members()
    sds = {}
    for i, h in enumerate(hosts):
        address = (h.split(":")[0], 27017)
        hello = {"ok": 1, "setName": "rs", "hosts": hosts, "isWritablePrimary": i == 0,
                 "secondary": i != 0, "maxWireVersion": 21, "me": h, "tags": {"dc": f"d{i % 3}"}}
        sds[address] = ServerDescription(address, Hello(hello), 0.001 * (i % 7))
    td = TopologyDescription(TOPOLOGY_TYPE.ReplicaSetWithPrimary, sds, "rs", None, None,
                             TopologySettings(seeds=list(sds), replica_set_name="rs"))
    selector = Nearest(tag_sets=[{"dc": "d1"}])
    return _rate(lambda: td.apply_selector(selector), seconds)


def _rate(fn, seconds):
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for _ in range(100):
            fn()
        n += 100
    return n / (time.perf_counter() - start)


if __name__ == "__main__":
    print(singlemongo_rate(), pymongo_rate())
