"""Moved to ``singlemongo.testing.auth.sasl`` (the simulator's authentication sides live in
``testing/auth/``). The old import path is the same module object."""
import sys

from singlemongo.testing.auth import sasl as _moved

sys.modules[__name__] = _moved
