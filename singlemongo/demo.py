"""`make demo`: a one-off query against an embedded simulated 3-member replica set, showing
what the scanner did, then a stepdown and the rescan that finds the new primary.
"""
from singlemongo.client import MongoClient
from singlemongo.errors import NotPrimaryError
from singlemongo.sdam.address import format_address
from singlemongo.testing import ReplicaSet, hellos


def _scan_report(client, rs, scan):
    names = {s.address: f"member {i}" for i, s in enumerate(rs.servers)}
    rows = [(n, a, t, e) for n, a, t, e in client._topology.scanner.history if n == scan]
    for order, (_, address, server_type, error) in enumerate(rows, 1):
        sd = client.topology_description.servers.get(address)
        rtt = f"{sd.round_trip_time * 1000:6.2f} ms" if sd and sd.round_trip_time else "      -  "
        print(f"    {order}. {format_address(address):<17} {names[address]:<9} "
              f"{str(server_type):<12} rtt {rtt}" + (f"  error: {error}" if error else ""))


def _counters(rs):
    for i, s in enumerate(rs.servers):
        print(f"    member {i} {s.address_text:<17} connections {s.connections}  "
              f"hellos {hellos(s)}  commands {sum(s.commands.values())}")


def _topology(client):
    print("   Topology (read without I/O): " +
          client.topology_description.summary().replace("\n", "\n   "))


def main():
    with ReplicaSet(3) as rs:
        print(f"Simulated replica set 'rs' on loopback: {rs.uri}\n")
        rs.store.seed("shop", "orders", [{"_id": 1, "item": "tea", "qty": 3},
                                         {"_id": 2, "item": "jam", "qty": 1}])
        client = MongoClient(rs.uri)
        print("1. One-off query: client.shop.orders.find_one({'item': 'jam'})")
        print(f"   -> {client.shop.orders.find_one({'item': 'jam'})}")
        print("   The scanner checked, in this order (scan 1):")
        _scan_report(client, rs, 1)
        print("   What each simulated member saw:")
        _counters(rs)
        _topology(client)
        print()

        print("2. The primary steps down and member 2 is elected.")
        old = rs.primary
        rs.elect(2)
        print("   A write to the old primary fails and marks the topology stale:")
        try:
            client.admin.command({"insert": "demo", "documents": [{"x": 1}]})  # not retried
        except NotPrimaryError as exc:  # an AutoReconnect, as PyMongo raises it
            print(f"   -> {type(exc).__name__}: {str(exc).splitlines()[0]}")
        print(f"   stale: {client._topology.stale}; old primary {old.address_text} is now "
              f"{client.topology_description.servers[old.address].server_type}")
        print("3. The next operation waits out minHeartbeatFrequencyMS (500 ms), rescans and "
              "selects the new primary:")
        result = client.shop.orders.insert_one({"item": "oat", "qty": 2})
        print(f"   insert_one -> inserted_id {result.inserted_id} "
              f"(scan {client._topology.scan_count}):")
        _scan_report(client, rs, client._topology.scan_count)
        _counters(rs)
        _topology(client)
        client.close()


if __name__ == "__main__":
    main()
