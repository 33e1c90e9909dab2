"""The scanning order in n log n (server monitoring spec, "Scanning order").

``plan_next_check`` in scanner.py is the spec's pseudocode, O(n) for each pick: fine for
replica sets, quadratic for a seed list of thousands. ``ScanPlan`` makes the same picks from a
heap: each server is pushed with its key (its rank, then its lastUpdateTime, then a random
tie-break), and a popped entry is checked against the current description; one whose key
changed is pushed again with its new key, one removed or already checked is dropped. Servers a
reply announces are pushed when they appear.
"""
import heapq

from singlemongo.sdam.server_description import ServerType as S
from singlemongo.engine.scanner import in_cooldown

_UNCHECKED = float("-inf")  # never checked: "infinity ago"


def _rank(sd):
    if sd.server_type is S.RS_PRIMARY:
        return 0
    if sd.server_type is S.POSSIBLE_PRIMARY:
        return 1
    return 3 if sd.server_type in (S.UNKNOWN, S.RS_GHOST) else 2


def _key(sd):
    """A primary, then a possible primary, whatever their age; then the oldest known server,
    then the oldest Unknown or RSGhost."""
    rank = _rank(sd)
    if rank < 2:
        return (rank, 0.0)
    return (rank, _UNCHECKED if sd.last_update_time is None else sd.last_update_time)


class ScanPlan:
    """Which server to check next in one scan, for any number of servers."""

    def __init__(self, td, scan_start, random_key):
        self.scan_start = scan_start
        self.random_key = random_key  # ties of equal age are broken at random
        self.heap = []
        self.position = {}  # first appearance: ties go in description order, as in the spec
        self.add(td.servers.values())

    @property
    def seen(self):
        return self.position

    def _entry(self, sd):
        position = self.position.setdefault(sd.address, len(self.position))
        return (_key(sd), self.random_key(), position, sd.address)

    def add(self, servers):
        for sd in servers:
            heapq.heappush(self.heap, self._entry(sd))

    def announced(self, td, sd):
        """After a check: push the servers its reply made appear (new hosts, a possible primary)."""
        if sd is None:
            return
        seen = self.position
        if td.servers.keys() <= seen.keys():  # nothing new (one set test, not one per host)
            fresh = []
        else:
            fresh = [td.servers[a] for a in (*sd.all_hosts, sd.primary)
                     if a is not None and a not in seen and a in td.servers]
            if not fresh:
                fresh = [s for a, s in td.servers.items() if a not in seen]
        self.add(fresh)
        if sd.primary is not None and sd.primary in td.servers:
            self.add([td.servers[sd.primary]])  # it may just have become a PossiblePrimary

    def next(self, td, checked):
        """The next server to check, or None when the scan is complete."""
        while self.heap:
            key, _, _, address = self.heap[0]
            sd = td.servers.get(address)
            if sd is None or address in checked or in_cooldown(sd, self.scan_start):
                heapq.heappop(self.heap)
                continue
            if _key(sd) != key:  # changed since it was pushed: again, with its key now
                heapq.heapreplace(self.heap, self._entry(sd))
                continue
            return address
        return None
