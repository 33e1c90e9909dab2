"""Moved to ``singlemongo.engine.cmap_events`` (issue 61: singlemongo has no pool; the module
publishes CMAP's events for the one connection per server). The old import path is the same
module object."""
import sys

from singlemongo.engine import cmap_events as _moved

sys.modules[__name__] = _moved
