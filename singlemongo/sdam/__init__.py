"""Server discovery and monitoring: the pure core (no sockets, no clock)."""
from .server_type import ServerType, TopologyType
from .server_description import ServerDescription, average_rtt
from .address import parse_address, format_address
from .topology_description import TopologyDescription
from .error_handling import (ApplicationError, ErrorDecision, ErrorKind, classify_code,
                             classify_reply, handle_application_error)

__all__ = ["ServerType", "TopologyType", "ServerDescription", "TopologyDescription",
           "parse_address", "format_address", "average_rtt", "ApplicationError",
           "ErrorDecision", "ErrorKind", "classify_code", "classify_reply",
           "handle_application_error"]
