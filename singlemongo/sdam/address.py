"""Server addresses: parsing, formatting, and the host-name rules that URI hosts and hosts a
server announces both obey (RFC 1035 lengths, ports 1-65535)."""
TYPE_CHECKING = False  # typing's, without importing it at run time

DEFAULT_PORT = 27017

if TYPE_CHECKING:
    from typing import Optional, Tuple
    Address = Tuple[str, Optional[int]]
else:  # the subscripted alias is for type checkers only: building it costs a one-off 0.1 M
    Address = tuple
MAX_HOST_NAME = 253  # RFC 1035: a name of at most 253 characters in dotted form
MAX_LABEL = 63  # ... made of labels of 1 to 63 octets


def parse_address(text, default_port=DEFAULT_PORT):
    """'Host:27017' -> ('host', 27017); '[::1]:27018' -> ('::1', 27018). Hosts are lower-cased."""
    text = str(text)
    if text.endswith(".sock"):
        return (text, None)
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        return (host.lower(), int(rest[1:]) if rest.startswith(":") else default_port)
    host, colon, port = text.rpartition(":")
    if not colon or not port.isdigit():
        return (text.lower(), default_port)
    return (host.lower(), int(port))


def format_address(address):
    host, port = address
    if port is None:
        return host
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def is_ipv4(host):
    """A dotted quad of ASCII decimal octets (0-255): an address, not a name to resolve."""
    octets = host.split(".")
    return len(octets) == 4 and all(
        0 < len(o) <= 3 and o.isascii() and o.isdigit() and int(o) <= 255 for o in octets)


def _is_plain_name(host):
    """The everyday host name, which the character-by-character rules below would accept:
    ASCII labels of 1 to 63 letters, digits, '-' or '_' between single dots, with an optional
    final dot. Whole-string tests in C, not a regular expression (compiling one costs a
    one-off more than checking every host it sees) nor a loop over the labels."""
    name = host[:-1] if host.endswith(".") else host
    plain = name.replace("-", "a").replace("_", "a")
    labels = plain.split(".")
    return (len(host) <= MAX_HOST_NAME and plain.isascii()
            and plain.replace(".", "").isalnum() and "" not in labels
            and max(map(len, labels)) <= MAX_LABEL)


def host_name_problem(host):
    """Why ``host`` (a name or IPv4 address, not a literal or a socket path) cannot be a host
    name, or None. getaddrinfo would otherwise fail with a UnicodeError on every operation."""
    if not host:
        return "the host name is empty"
    if _is_plain_name(host):
        return None
    if any(c.isspace() or ord(c) < 32 or c in "/\\@" for c in host):
        return "a host name has no spaces, control characters, '/', '\\' or '@'"
    name = host[:-1] if host.endswith(".") else host
    try:
        encoded = name.encode("idna") if not name.isascii() else name.encode()
    except UnicodeError as exc:
        return f"it is not a valid internationalized name ({exc})"
    if len(encoded) > MAX_HOST_NAME:
        return f"a host name has at most {MAX_HOST_NAME} characters, not {len(encoded)}"
    if any(not 1 <= len(label) <= MAX_LABEL for label in encoded.split(b".")):
        return f"each dot-separated label of a host name has 1 to {MAX_LABEL} characters"
    return None


def is_ipv6(literal):
    """An IPv6 address (with an optional ASCII zone id), as written between brackets."""
    import ipaddress  # 1 ms of import that only an IPv6 literal needs
    try:
        return literal.isascii() and ipaddress.ip_address(literal).version == 6
    except ValueError:
        return False


_ANNOUNCED: dict = {}  # text -> address: every member of a set announces the same hosts
_ANNOUNCED_LIMIT = 4096


def parse_announced(text):
    """The address a server announces (hosts, passives, arbiters, me, primary), validated like a
    host in a connection string; ValueError names the problem. A server never makes the client
    open a UNIX domain socket: only a connection string configures one.

    Each distinct text is parsed once (SDAM stays linear in the hosts the replies hold)."""
    address = _ANNOUNCED.get(text) if isinstance(text, str) else None
    if address is None:
        address = _parse_announced(text)
        if len(_ANNOUNCED) >= _ANNOUNCED_LIMIT:
            _ANNOUNCED.clear()
        _ANNOUNCED[text] = address
    return address


# What a plain host name (or an IPv4 address) is made of.
_NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_"


def _parse_announced(text):
    if type(text) is str:
        # The everyday "name:port" in a few tests in C (each of a scan's hosts is parsed
        # once, 20,000 instructions by the rules below): a name of at most MAX_LABEL
        # characters has no longer label, and one made of _NAME_CHARS alone, with no empty
        # label, is what _is_plain_name accepts. Anything else takes the whole rules.
        literal, colon, port = text.rpartition(":")
        if colon and 0 < len(literal) <= MAX_LABEL and 0 < len(port) <= 5 and port.isdigit() \
                and port.isascii() and not literal.strip(_NAME_CHARS) and literal[0] != "." \
                and ".." not in literal:
            number = int(port)
            if 0 < number <= 65535:
                return (literal.lower(), number)
    if not isinstance(text, str) or not text:
        raise ValueError(f"an announced host must be a non-empty string, not {text!r}")
    shown = text if len(text) <= 80 else text[:77] + "..."
    if "/" in text or text.endswith(".sock"):
        raise ValueError(f"announced host {shown!r} is a UNIX domain socket path; only the "
                         f"connection string can name one")
    if text.startswith("["):
        literal, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ("" if not rest else None)
        if port is None or not is_ipv6(literal):
            raise ValueError(f"announced host {shown!r} is not a valid [IPv6]:port address")
    else:
        literal, colon, port = text.rpartition(":")
        if not colon:
            literal, port = text, ""
        problem = host_name_problem(literal)
        if problem:
            raise ValueError(f"announced host {shown!r} is invalid: {problem}")
    if port and not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
        raise ValueError(f"announced host {shown!r} has an invalid port: a port is an integer "
                         f"from 1 to 65535")
    return (literal.lower(), int(port) if port else DEFAULT_PORT)
