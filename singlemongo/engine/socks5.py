"""The SOCKS5 handshake's messages (RFC 1928, with RFC 1929's username and password), as the
drivers' SOCKS5 support specification restricts it: "no authentication", or username and
password, then CONNECT to the destination as given, a host name passed to the proxy as it is
(never resolved here). Pure: bytes in, bytes out; the connection does the I/O.

Every refusal is a ``Socks5Error`` whose message names what the proxy said, never a
credential.
"""
import ipaddress
import struct

from singlemongo.options.uri import SecretBytes

VERSION = 5
NO_AUTHENTICATION, USERNAME_PASSWORD, NO_ACCEPTABLE = 0x00, 0x02, 0xFF
CONNECT = 0x01
IPV4, DOMAIN, IPV6 = 0x01, 0x03, 0x04

# RFC 1928, section 6: the REP field of the reply to CONNECT.
REPLIES = {
    0x01: "general SOCKS server failure",
    0x02: "connection not allowed by ruleset",
    0x03: "network unreachable",
    0x04: "host unreachable",
    0x05: "connection refused",
    0x06: "TTL expired",
    0x07: "command not supported",
    0x08: "address type not supported",
}
# The bytes of BND.ADDR after ATYP (a domain's first byte is its length, read separately).
ADDRESS_LENGTHS = {IPV4: 4, IPV6: 16}


class Socks5Error(OSError):
    """The proxy refused or broke the handshake: a network error, as the spec says."""


def greeting(with_credentials):
    """The methods offered: "no authentication", and username/password when the client has
    credentials (the spec: both then, so a proxy that needs none still accepts)."""
    methods = bytes([NO_AUTHENTICATION, USERNAME_PASSWORD] if with_credentials
                    else [NO_AUTHENTICATION])
    return bytes([VERSION, len(methods)]) + methods


def chosen_method(reply, with_credentials):
    """The method the proxy chose (its two-byte answer to the greeting)."""
    version, method = reply
    if version != VERSION:
        raise Socks5Error(f"the proxy does not speak SOCKS5 (version {version})")
    offered = (NO_AUTHENTICATION, USERNAME_PASSWORD) if with_credentials else (NO_AUTHENTICATION,)
    if method == NO_ACCEPTABLE or method not in offered:
        raise Socks5Error("the proxy accepts none of the offered authentication methods "
                          + ("(no authentication, username and password)" if with_credentials
                             else "(no authentication: it may need proxyUsername and "
                                  "proxyPassword)"))
    return method


def _field(text, what):
    data = SecretBytes(text.encode("utf-8"))  # a password's bytes: redacted in any traceback
    if not 1 <= len(data) <= 255:
        raise Socks5Error(f"the {what} must be 1 to 255 bytes in UTF-8 for SOCKS5")
    return SecretBytes(bytes([len(data)]) + data)


def credentials(username, password):
    """RFC 1929's request: version 1, the username and the password, each with its length
    (SecretBytes: shown redacted)."""
    return SecretBytes(b"\x01" + _field(username, "proxy username")
                       + _field(password, "proxy password"))


def authenticated(reply):
    """RFC 1929: status 0 is success; anything else is a refusal (the credentials are not
    repeated in the error)."""
    version, status = reply
    if version != 1 or status != 0:
        raise Socks5Error("the proxy refused the proxy username and password")


def connect_request(host, port):
    """CONNECT to ``host``:``port``: an IP literal as an address, any other name as a domain
    name, which the proxy resolves."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        destination = bytes([DOMAIN]) + _field(host, "destination host name")
    else:
        destination = bytes([IPV4 if address.version == 4 else IPV6]) + address.packed
    return bytes([VERSION, CONNECT, 0]) + destination + struct.pack(">H", port)


def reply_length(head):
    """The length of the whole reply to CONNECT from its first five bytes (VER, REP, RSV,
    ATYP and the address's first byte)."""
    version, rep, _, atyp, first = head
    if version != VERSION:
        raise Socks5Error(f"the proxy does not speak SOCKS5 (version {version})")
    if rep != 0:
        raise Socks5Error(f"the proxy could not connect: {REPLIES.get(rep, f'reply {rep}')}")
    if atyp == DOMAIN:
        return 4 + 1 + first + 2
    if atyp not in ADDRESS_LENGTHS:
        raise Socks5Error(f"the proxy answered an unknown address type {atyp}")
    return 4 + ADDRESS_LENGTHS[atyp] + 2
