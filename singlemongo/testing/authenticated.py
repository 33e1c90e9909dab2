"""Moved to ``singlemongo.testing.auth.authenticated`` (the simulator's authentication sides live in
``testing/auth/``). The old import path is the same module object."""
import sys

from singlemongo.testing.auth import authenticated as _moved

sys.modules[__name__] = _moved
