"""CPU of applying one scan's hellos of an n-member replica set (SDAM), both drivers' pure
description updates on the same replies."""
import statistics
import time

from bson import ObjectId


def replies(n):
    hosts = [f"h{i}.example.com:27017" for i in range(n)]
    out = []
    for i in range(n):
        r = {"ok": 1, "isWritablePrimary": i == 0, "secondary": i != 0, "setName": "rs",
             "hosts": hosts, "me": hosts[i], "primary": hosts[0], "minWireVersion": 0,
             "maxWireVersion": 21, "logicalSessionTimeoutMinutes": 30, "setVersion": 1}
        if i == 0:
            r["electionId"] = ObjectId("000000000000000000000001")
        out.append(r)
    return [("h%d.example.com" % i, 27017) for i in range(n)], out


def singlemongo_scan(n):
    from singlemongo.sdam import address
    from singlemongo.sdam import server_description
    from singlemongo.sdam.server_description import ServerDescription
    from singlemongo.sdam.topology_description import TopologyDescription
    addrs, hellos = replies(n)

    def run():
        address._ANNOUNCED.clear()  # every scan of a fresh process parses the hosts
        server_description._LISTS.clear()
        td = TopologyDescription.initial([addrs[0]], "rs")
        for a, h in zip(addrs, hellos):
            td = td.update(ServerDescription.from_hello(a, h, 0.001, 1.0))
        assert td.compatible and len(td.servers) == n
    return run


def pymongo_scan(n):
    from pymongo.hello import Hello
    from pymongo.server_description import ServerDescription
    from pymongo.synchronous.settings import TopologySettings
    from pymongo.topology_description import (TOPOLOGY_TYPE, TopologyDescription,
                                              updated_topology_description)
    addrs, hellos = replies(n)
    settings = TopologySettings(seeds=[addrs[0]], replica_set_name="rs")

    def run():
        td = TopologyDescription(TOPOLOGY_TYPE.ReplicaSetNoPrimary,
                                 {addrs[0]: ServerDescription(addrs[0])}, "rs", None, None,
                                 settings)
        for a, h in zip(addrs, hellos):
            td = updated_topology_description(td, ServerDescription(a, Hello(h), 0.001))
        assert len(td.server_descriptions()) == n
    return run


def median_ms(make, n, runs=31):
    run = make(n)
    run()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, min(times) * 1000, max(times) * 1000
