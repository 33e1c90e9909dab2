"""Server selection: the pure rules (read preferences, suitability, latency window)."""
from .selector import (PRIMARY, READ, WRITE, Criteria, ReadPreference, Selection,
                       SelectionSettings, latency_window, select, suitable_servers)

__all__ = ["PRIMARY", "ReadPreference", "READ", "WRITE", "Criteria", "Selection",
           "SelectionSettings", "latency_window", "select", "suitable_servers"]
