"""Server selection: the pure rules (read preferences, suitability, latency window)."""
from .read_preference import PRIMARY, ReadPreference
from .selector import (READ, WRITE, Criteria, Selection, SelectionSettings, latency_window,
                       select, suitable_servers)

__all__ = ["PRIMARY", "ReadPreference", "READ", "WRITE", "Criteria", "Selection",
           "SelectionSettings", "latency_window", "select", "suitable_servers"]
