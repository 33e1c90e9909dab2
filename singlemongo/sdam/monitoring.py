"""Moved to ``singlemongo.monitoring.sdam_events`` (issue 61: SDAM's event records beside
the pool and command events). The old import path is the same module object."""
import sys

from singlemongo.monitoring import sdam_events as _moved

sys.modules[__name__] = _moved
