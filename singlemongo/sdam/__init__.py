"""Server discovery and monitoring: the pure core (no sockets, no clock).

Names are loaded from their modules on first use (PEP 562): a client loads the modules it
runs, not the error handling it has not needed yet."""

_NAMES = {
    "ServerType": "server_description", "TopologyType": "server_description",
    "ServerDescription": "server_description", "average_rtt": "server_description",
    "parse_address": "address", "format_address": "address",
    "TopologyDescription": "topology_description",
    "ApplicationError": "error_handling", "ErrorDecision": "error_handling",
    "ErrorKind": "error_handling", "classify_code": "error_handling",
    "classify_reply": "error_handling", "handle_application_error": "error_handling",
}
__all__ = list(_NAMES)


def __getattr__(name):
    import importlib
    if name not in _NAMES:
        raise AttributeError(f"module 'singlemongo.sdam' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
    globals()[name] = value
    return value
