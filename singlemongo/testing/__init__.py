"""Test support users can use too: simulated deployments on loopback and a fake DNS resolver."""
from .deployments import LoadBalancer, ReplicaSet, Sharded, Standalone, hellos
from .dns import FakeResolver
from .failpoints import Fault
from .server import SimServer

__all__ = ["FakeResolver", "Fault", "LoadBalancer", "ReplicaSet", "Sharded", "SimServer",
           "Standalone", "hellos"]
