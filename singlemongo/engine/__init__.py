"""The engine: the topology (all state), scans, selection loop, handshake, operations with
their retries and backpressure, sessions and the topology cache. All I/O and time."""


def moved_names(module, moved):
    """A module ``__getattr__`` that serves the names issue 61 moved out of ``module`` from
    their new modules (``moved``: name -> module in this package), so old import paths keep
    working; looked up only when asked for, so nothing more loads on a one-off."""
    def __getattr__(name):
        if name in moved:
            return getattr(__import__(f"{__name__}.{moved[name]}", fromlist=[name]), name)
        if name == "__path__":  # asked by every `from <module> import ...`: no message to build
            raise AttributeError(name)
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    return __getattr__
