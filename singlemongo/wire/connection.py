"""Moved to ``singlemongo.engine.connection`` (issue 61: the socket and TLS code left ``wire/``,
which keeps the codec). The old import path is the same module object."""
import sys

from singlemongo.engine import connection as _moved

sys.modules[__name__] = _moved
