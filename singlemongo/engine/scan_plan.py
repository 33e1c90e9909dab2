"""The scanning order in n log n (server monitoring spec, "Scanning order").

``plan_next_check`` in scanner.py is the spec's pseudocode, O(n) for each pick: fine for
replica sets, quadratic for a seed list of thousands. ``ScanPlan`` makes the same picks from a
heap: each server is pushed with its key (its rank, then its lastUpdateTime, then a random
tie-break), and a popped entry is checked against the current description; one whose key
changed is pushed again with its new key, one removed or already checked is dropped. Servers a
reply announces are pushed when they appear.
"""
import itertools

try:  # heapq's C functions, without heapq.py's Python (half the import's cost)
    from _heapq import heapify, heappop, heappush, heapreplace
except ImportError:  # an interpreter without the accelerator
    from heapq import heapify, heappop, heappush, heapreplace

from singlemongo.sdam.server_description import ServerType as S
from singlemongo.engine.scanner import in_cooldown

_UNCHECKED = float("-inf")  # never checked: "infinity ago"


# A primary, then a possible primary, whatever their age; then the known servers; then the
# Unknown and RSGhost ones (any other type ranks 2). A table: each pick reads one key.
_RANKS = {S.RS_PRIMARY: 0, S.POSSIBLE_PRIMARY: 1, S.UNKNOWN: 3, S.RS_GHOST: 3}


def _key(sd):
    """A primary, then a possible primary, whatever their age; then the oldest known server,
    then the oldest Unknown or RSGhost."""
    rank = _RANKS.get(sd.server_type, 2)
    if rank < 2:
        return (rank, 0.0)
    return (rank, _UNCHECKED if sd.last_update_time is None else sd.last_update_time)


class ScanPlan:
    """Which server to check next in one scan, for any number of servers.

    An entry is (rank, age, random tie-break, position, serial, description): flat, so that
    comparing two (a heap compares a few each pick) meets equal ranks and ages by identity;
    the serial is unique, so no comparison reaches the description, the one the entry was
    made from (a server whose description is still that one has its key unchanged)."""

    def __init__(self, td, scan_start, random_key):
        self.scan_start = scan_start
        self.random_key = random_key  # ties of equal age are broken at random
        self.position = {}  # first appearance: ties go in description order, as in the spec
        self.pushed = {}  # address -> the key of its entry in the heap
        self.covered = None  # announced lists whose every address is in pushed
        self.cooling = {}  # address -> its description when dropped in its cooldown
        self.serials = itertools.count()
        self.heap = list(map(self._entry, td.servers.values()))
        heapify(self.heap)

    @property
    def seen(self):
        return self.position

    def _entry(self, sd):
        position = self.position.setdefault(sd.address, len(self.position))
        rank, age = self.pushed[sd.address] = _key(sd)
        return (rank, age, self.random_key(), position, next(self.serials), sd)

    def add(self, servers):
        for sd in servers:
            heappush(self.heap, self._entry(sd))

    def _removed(self, address):
        """A server dropped from the plan because it was removed: if a reply announces it
        again, it is pushed again (a new Unknown, checked in this scan)."""
        self.pushed.pop(address, None)
        self.cooling.pop(address, None)
        self.covered = None

    def announced(self, td, sd):
        """After a check: push the servers its reply made appear (new hosts, a possible primary)."""
        if sd is None:
            return
        pushed, servers = self.pushed, td.servers
        if self.cooling:
            for address, cooled in list(self.cooling.items()):
                now = servers.get(address)
                if now is not cooled:  # removed, or removed and announced again (not cooling)
                    self._removed(address)
                    if now is not None:
                        self.add([now])
        # A server appears only as one the reply announces. The replies of a set announce
        # the same lists (the very same tuples: server_description reads each list once),
        # so a list already covered is known by identity, not looked up host by host.
        covered, named = self.covered, sd.primary
        covered = covered is not None and sd.hosts is covered[0] and \
            sd.passives is covered[1] and sd.arbiters is covered[2]
        if not (covered and (named is None or named in pushed)) and \
                not servers.keys() <= pushed.keys():
            fresh = [servers[a] for a in (*sd.all_hosts, named)
                     if a is not None and a not in pushed and a in servers]
            self.add(fresh or [s for a, s in servers.items() if a not in pushed])
        if not covered and all(a in pushed for a in sd.all_hosts):
            self.covered = (sd.hosts, sd.passives, sd.arbiters)
        # The server the reply names primary has just become a PossiblePrimary: pushed with
        # that key (any other change of a key is met when its entry comes up, in next()).
        primary = servers.get(named) if named is not None else None
        if primary is not None and primary.server_type is S.POSSIBLE_PRIMARY and \
                pushed.get(named) != _key(primary):
            self.add([primary])

    def next(self, td, checked):
        """The next server to check, or None when the scan is complete."""
        heap, servers = self.heap, td.servers
        while heap:
            entry = heap[0]
            made = entry[5]
            address = made.address
            sd = servers.get(address)
            # Only a network failure can be in its cooldown.
            if sd is None or address in checked or (sd.error_is_network
                                                    and in_cooldown(sd, self.scan_start)):
                heappop(heap)
                if sd is None:
                    self._removed(address)
                elif address not in checked:
                    self.cooling[address] = sd
                continue
            if sd is not made and _key(sd) != (entry[0], entry[1]):
                heapreplace(heap, self._entry(sd))  # changed since pushed: its key now
                continue
            return address
        return None
