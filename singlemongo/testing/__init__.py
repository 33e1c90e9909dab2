"""Test support that users can use too: fake DNS (and, later, simulated deployments)."""
from .dns import FakeResolver

__all__ = ["FakeResolver"]
