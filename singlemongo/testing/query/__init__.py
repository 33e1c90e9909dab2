"""The simulated server's data and query engine (mongomock-ng behind MongoDB's commands)."""
from singlemongo.testing.query.store import Store

__all__ = ["Store"]
