"""Moved to ``singlemongo.engine.signal_deferral`` (issue 61: the socket and TLS code left ``wire/``,
which keeps the codec). The old import path is the same module object."""
import sys

from singlemongo.engine import signal_deferral as _moved

sys.modules[__name__] = _moved
