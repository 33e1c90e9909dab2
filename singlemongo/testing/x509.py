"""Moved to ``singlemongo.testing.auth.x509`` (the simulator's authentication sides live in
``testing/auth/``). The old import path is the same module object."""
import sys

from singlemongo.testing.auth import x509 as _moved

sys.modules[__name__] = _moved
