"""Protocol constants and the single-threaded defaults (DESIGN.md, "Default timings")."""

# clientMinWireVersion / clientMaxWireVersion: MongoDB 4.2 and newer.
MIN_SUPPORTED_WIRE_VERSION = 8
MAX_SUPPORTED_WIRE_VERSION = 25
MIN_SUPPORTED_SERVER_VERSION = "4.2"

DEFAULT_PORT = 27017

# Single-threaded monitoring defaults, all in milliseconds.
HEARTBEAT_FREQUENCY_MS = 60_000
MIN_HEARTBEAT_FREQUENCY_MS = 500
COOLDOWN_MS = 5_000
SOCKET_CHECK_INTERVAL_MS = 5_000
LOCAL_THRESHOLD_MS = 15
SERVER_SELECTION_TIMEOUT_MS = 30_000
CONNECT_TIMEOUT_MS = 10_000

# Max staleness.
IDLE_WRITE_PERIOD_MS = 10_000
SMALLEST_MAX_STALENESS_SECONDS = 90

# Round trip time moving average weight (server selection, "Calculation of Average Round Trip Times").
RTT_ALPHA = 0.2

# Client backpressure (seed document).
MAX_ADAPTIVE_RETRIES = 5
