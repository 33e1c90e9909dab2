"""The engine: the topology (all state), scans, selection loop, handshake, operations with
their retries and backpressure, sessions and the topology cache. All I/O and time."""
