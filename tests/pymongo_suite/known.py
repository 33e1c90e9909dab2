"""PyMongo's tests that cannot pass on singlemongo, each with its reason. Filled from the
comparison (``compare.py``); a test is listed here only after reading why it fails.

- ``INTERNALS``: the test reads or patches a PyMongo internal (named), which singlemongo does
  not have and will not grow to please a test.
- ``DIFFERENCES``: a deliberate difference, each a line of README "Differences from PyMongo".
- ``CONTROL_FAILS``: PyMongo itself fails on the simulator, with the cause (issue 48)."""

INTERNALS: dict = {}
DIFFERENCES: dict = {}
CONTROL_FAILS: dict = {}


def known_reason(test):
    """Why ``test`` may fail on singlemongo, or None. A key ending in ``::`` covers a class."""
    for table in (INTERNALS, DIFFERENCES):
        if test in table:
            return table[test]
        for key, reason in table.items():
            if key.endswith("::") and test.startswith(key):
                return reason
    return None
