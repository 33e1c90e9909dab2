"""Connection string syntax (connection-string spec): scheme, userinfo, hosts, database,
options; and keeping credentials out of every message, repr and log line (``SecretText``,
``redact_uri``), which starts with the connection string.

This module only splits and decodes. What each option means and which values are valid is in
``client_options.py`` and ``table.py``; ``mongodb+srv`` resolution is in ``srv.py``. No DNS, no
sockets.
"""
from __future__ import annotations

import re
TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Optional, Sequence, Tuple, Union

from singlemongo import errors
from singlemongo.records import dataclass, field
from singlemongo.sdam.address import (DEFAULT_PORT, host_name_problem, is_ipv4, is_ipv6,
                                      parse_announced)

# ----- redaction ------------------------------------------------------------------------------

# Any scheme, even a mistyped one, and leading whitespace: redaction happens before parsing.
# Patterns are compiled on first use (re's cache), not at import: a one-off query
# compiles only those it needs.
_SCHEME = r"^\s*[A-Za-z][A-Za-z0-9+.\-]*:(//)?"
_SECRET_OPTIONS = (r"(?i)((?:^|[?&;])(?:proxyPassword|tlsCertificateKeyFilePassword|password)=)"
                   r"[^&;]*")
SECRET_OPTION_NAMES = frozenset(
    {"proxypassword", "tlscertificatekeyfilepassword", "authmechanismproperties", "password"})
REDACTED = "<redacted>"


def userinfo_span(uri):
    """(start, end) of the user information in ``uri`` (end is its last '@'), or None. When
    the authority holds no '@' but the rest does (an unencoded '/' or '?' in the password, or
    an '@' in an option), everything up to the last '@' counts: more is hidden, never less."""
    if "@" not in uri:
        return None
    match = re.match(_SCHEME, uri)
    start = match.end() if match else len(uri) - len(uri.lstrip())
    cut = min((i for i in (uri.find("/", start), uri.find("?", start)) if i >= 0),
              default=len(uri))
    end = uri.rfind("@", start, cut)
    return start, (end if end >= 0 else uri.rfind("@"))


def redact_uri(uri):
    """The connection string with its password and secret options replaced, whatever its
    mistakes; the username stays when it is clearly separate from the password."""
    if not isinstance(uri, str):
        return repr(type(uri))
    uri = str.__str__(uri)
    span = userinfo_span(uri)
    if span is not None:
        start, end = span
        user, colon, _ = uri[start:end].partition(":")
        clear_scheme = bool(re.match(_SCHEME, uri)) and re.match(_SCHEME, uri).group(1)
        shown = f"{user}:{REDACTED}" if colon and clear_scheme else (
            uri[start:end] if clear_scheme else REDACTED)
        password = uri[start:end].partition(":")[2]
        rest = re.sub(_SECRET_OPTIONS, lambda m: m.group(1) + REDACTED, uri[end:])
        if _recognisable(password):  # written again by mistake (an option named after it)
            rest = rest.replace(password, REDACTED)
        return uri[:start] + shown + rest
    return re.sub(_SECRET_OPTIONS, lambda m: m.group(1) + REDACTED, uri)


def _recognisable(secret):
    """A secret long enough to be told apart when it occurs in other text (one character
    occurs everywhere and says nothing)."""
    return bool(secret) and len(secret) >= 2


def mention(text, secret):
    """``text`` quoted for a message, or ``<redacted>`` if the ``secret`` is in it (an option
    key that is the password, typed into the query by mistake)."""
    text = str.__str__(text)
    if _recognisable(secret) and str.__str__(secret) in text:
        return repr(REDACTED)
    return repr(text)


def redact_value(name, value):
    """An option value fit for a message: secrets are replaced."""
    return REDACTED if name.lower() in SECRET_OPTION_NAMES else value


class SecretText(str):
    """A password or other secret string: it works as the ``str`` it is (hashing, encoding,
    comparison), but ``repr``, ``str`` and formatting show ``<redacted>``, so a secret held in a
    local variable never reaches a traceback with locals, an error tracker or a log line."""
    __slots__ = ()

    def __new__(cls, value: str = "") -> "SecretText":
        if isinstance(value, SecretText):  # str() of one is redacted: never copy through it
            return value
        return super().__new__(cls, value)

    def __repr__(self) -> str:
        return f"'{REDACTED}'"

    def __str__(self) -> str:
        return REDACTED

    def __format__(self, spec: str) -> str:
        return REDACTED

    def reveal(self) -> str:
        """The plain value, for an expression that hands it straight to a library."""
        return str.__str__(self)

    def utf8(self) -> "SecretBytes":
        return SecretBytes(self.encode("utf-8"))


class SecretBytes(bytes):
    """Bytes that must not be shown (salted passwords, keys, proofs, an authentication
    message): ``repr`` and ``str`` are redacted, everything else is ``bytes``."""
    __slots__ = ()

    def __repr__(self) -> str:
        return f"b'{REDACTED}'"

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return repr(self)


# ----- the connection string ----------------------------------------------------------------

def _scheme_fixed(uri: str) -> str:
    """``uri`` with a mistyped scheme mended (``mongodb//h``, ``mongodb:/h``, ``mongodb:h``),
    else with the scheme added: what a suggestion offers."""
    for scheme in ("mongodb+srv", "mongodb"):
        if uri.lower().startswith(scheme) and uri[len(scheme):len(scheme) + 1] in (":", "/"):
            return f"{scheme}://{uri[len(scheme):].lstrip(':/')}"
    return SCHEME + uri


SCHEME = "mongodb://"
SRV_SCHEME = "mongodb+srv://"
# Patterns are compiled on first use (re's cache), not at import: a one-off query
# compiles only those it needs.
_ESCAPE = r"(?:%[0-9A-Fa-f]{2})+"
_BAD_PERCENT = r"%(?![0-9A-Fa-f]{2})"
# "Auth Database": characters that MUST NOT appear once decoded.
_BAD_DB_CHARS = frozenset('/\\ "$')


def unquote(text):
    """Decode %XX escapes as UTF-8, like urllib.parse.unquote (without importing it)."""
    if "%" not in text:
        return text
    return re.sub(_ESCAPE, lambda m: bytes.fromhex(m.group(0).replace("%", "")).decode(
        "utf-8", "replace"), text)


class Host:
    """A host of the connection string (a plain class: a record class costs a one-off more
    to make)."""

    __slots__ = ("host", "port", "_kind", "_parsed")

    def __init__(self, host: str, port: Optional[int], kind: Optional[str],
                 parsed: Optional[tuple] = None) -> None:
        self.host = host
        self.port = port  # None: the connection string gives none (or a UNIX socket)
        # None: a name or an IPv4 address, told apart when first read (only the SRV rules
        # ask, and a 50-host seed list would otherwise test each host)
        self._kind = kind
        # The address parse_announced keeps for this text: the very tuple a server's reply
        # announcing this host is read as, so that the seed's key in every table is found by
        # identity, without comparing tuples (a scan looks members up a few times each).
        self._parsed = parsed

    @property
    def kind(self) -> str:
        """"hostname", "ipv4", "ip_literal" or "unix"."""
        if self._kind is None:
            self._kind = "ipv4" if is_ipv4(self.host) else "hostname"
        return self._kind

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Host) and (self.host, self.port, self.kind) == (
            other.host, other.port, other.kind)

    def __hash__(self) -> int:
        return hash((self.host, self.port, self.kind))

    def __repr__(self) -> str:
        return f"Host(host={self.host!r}, port={self.port!r}, kind={self.kind!r})"

    def address(self, default_port=DEFAULT_PORT):
        """(host, port): ``default_port`` where the connection string gives no port."""
        if self.port is None and self.kind != "unix":
            address = (self.host, default_port)
        else:
            address = (self.host, self.port)
        return self._parsed if address == self._parsed else address


@dataclass(frozen=True)
class ParsedURI:
    scheme: str
    hosts: Tuple[Host, ...]
    username: Optional[str] = None
    password: Optional[str] = field(default=None, repr=False)
    database: Optional[str] = None
    collection: Optional[str] = None
    raw_options: Tuple[Tuple[str, str], ...] = ()
    # An '@' after the authority: a password with an unencoded '/' or '?' may have ended up
    # in the path or the options, so no option key is quoted in a message either.
    ambiguous: bool = False

    @property
    def is_srv(self):
        return self.scheme == SRV_SCHEME


def parse_uri(uri):
    """Split a connection string into its parts; raise InvalidURI naming the problem.

    The password never reaches a message (connection string spec, "Credential disclosure"):
    a message quotes no fragment that could hold it (a host's port, a database name with an
    '@', an option written without '=', the user information), and when the user
    information cannot be told apart from the rest (an unencoded '/' or '?' in the
    password) no fragment of the string is quoted at all. The error is raised here, outside
    the parser's frames, whose locals hold pieces of the string."""
    if not isinstance(uri, str):
        raise errors.InvalidURI(f"connection string must be a str, not {type(uri).__name__}")
    uri = SecretText(uri)
    problem = None
    try:
        return _parse(uri)
    except errors.InvalidURI as exc:
        problem = str(exc) if _unambiguous(uri) else (
            "invalid connection string: it cannot be parsed (not shown: an '@' comes after a "
            "'/' or '?', so a password may be anywhere in it). If the username or password "
            "contains '@', ':', '/', '?' or '%', percent-encode it (urllib.parse.quote_plus)")
    raise errors.InvalidURI(problem)


def _unambiguous(uri):
    """No '@', or the last '@' of the authority separates user information from hosts."""
    rest = uri.partition("://")[2]
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    return "@" not in uri or "@" in rest[:cut]


def _parse(uri):
    if uri.startswith(SCHEME):
        scheme = SCHEME
    elif uri.startswith(SRV_SCHEME):
        scheme = SRV_SCHEME
    else:
        # PyMongo's words, which programs and their tests match (flask-mongoengine's).
        hint = " (it starts with whitespace)" if uri[:1].isspace() else ""
        raise errors.InvalidURI(f"Invalid URI scheme: URI must begin with 'mongodb://' or "
                                f"'mongodb+srv://'{hint}")
    rest = uri[len(scheme):]
    cut = min((i for i in (rest.find("/"), rest.find("?")) if i >= 0), default=len(rest))
    authority, tail = rest[:cut], rest[cut:]
    username = password = None
    if "@" in authority:
        userinfo, _, authority = authority.rpartition("@")
        username, password = _parse_userinfo(userinfo)
    if not authority:
        raise errors.InvalidURI(f"connection string {redact_uri(uri)!r} names no host")
    hosts = tuple(_parse_host(h, uri) for h in authority.split(","))
    if scheme == SRV_SCHEME:
        _check_srv_hosts(hosts, uri, authority)
    database = collection = None
    query = ""
    if tail.startswith("/"):
        path, _, query = tail[1:].partition("?")
        if path:
            database, collection = _parse_database(path, uri)
    elif tail.startswith("?"):
        query = tail[1:]
    return ParsedURI(scheme, hosts, username, password, database, collection,
                     _parse_query(query), not _unambiguous(uri))


def _parse_userinfo(userinfo):
    if "@" in userinfo or userinfo.count(":") > 1 or (
            "%" in userinfo and re.search(_BAD_PERCENT, userinfo)):
        raise errors.InvalidURI(
            "invalid user information in the connection string (not shown): a username or "
            "password containing '@', ':' or '%' must be percent-encoded "
            "(urllib.parse.quote_plus)")
    user, colon, pwd = userinfo.partition(":")
    if not user:
        raise errors.InvalidURI("invalid user information in the connection string: the username "
                                "is empty")
    # As PyMongo (urllib.parse.unquote_plus): '+' is a space, so a username or password quoted
    # with quote_plus, as PyMongo's documentation says to, round-trips. The connection string
    # spec keeps '+' (docs/coming-from-pymongo.md, "Differences").
    return unquote(user.replace("+", " ")), (
        SecretText(unquote(SecretText(pwd.replace("+", " ")))) if colon else None)


def _shown_host(text):
    """A host for a message: its name, and nothing after a ':' (a port that is not a number
    may be a password written without the '@' that ends the user information)."""
    name, colon, _ = text.partition(":")
    return repr(name + (":…" if colon else "")) if not name.startswith("[") else "an IPv6 host"


def _parse_host(text, uri):
    if not text:
        raise errors.InvalidURI(f"connection string {redact_uri(uri)!r} has an empty host")
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            raise errors.InvalidURI("unterminated IPv6 literal in connection string (expected "
                                    "'[address]' or '[address]:port')")
        host, rest = text[1:end], text[end + 1:]
        if not is_ipv6(host):
            raise errors.InvalidURI("invalid IPv6 literal in connection string (not shown: it may "
                                    "be a password written without '@')")
        if rest and not rest.startswith(":"):
            raise errors.InvalidURI("unexpected text after an IPv6 literal in connection string "
                                    "(expected ':port' or nothing)")
        # An IPv6 zone index is percent-encoded: fe80::1%25eth0 is fe80::1%eth0.
        return Host(unquote(host).lower(), _parse_port(rest[1:], text) if rest else None,
                    "ip_literal")
    decoded = unquote(text)
    if "%" in text and not decoded.endswith(".sock"):
        # Connection string spec, "Host": percent-encoding is for UNIX socket paths (and an
        # IPv6 zone index, inside the brackets above); "a%2Cb" is not two hosts.
        raise errors.InvalidURI(f"invalid host {_shown_host(text)}: Percent-encoding is only "
                                f"allowed in Unix domain socket paths and IPv6 zone indexes, "
                                f"not in hostnames")
    if "/" in decoded:
        if not decoded.endswith(".sock"):
            raise errors.InvalidURI(
                f"unsupported host {decoded!r}: a UNIX domain socket path must "
                f"end in '.sock' and be percent-encoded")
        if "/" in text:
            raise errors.InvalidURI(
                f"unsupported host {decoded!r}: UNIX domain socket paths must be "
                f"percent-encoded")
        return Host(decoded, None, "unix")
    host, colon, port = text.partition(":")
    if not host or ":" in port:
        raise errors.InvalidURI(
            f"invalid host {_shown_host(text)}: expected host or host:port (if "
            f"that is a username and password, end them with '@')")
    if port or not colon:
        # The rules for a host a server announces are the connection string's, and their
        # parse is kept: a scan's replies find each seed already parsed. Where they refuse
        # (a name ending in .sock), the connection string's own below decide.
        try:
            parsed = parse_announced(text)
        except ValueError:
            pass
        else:
            return Host(parsed[0], parsed[1] if colon else None, None, parsed)
    return _named_host(text, decoded, colon, port)


def _named_host(text, decoded, colon, port):
    """The host by the connection string's own rules, in its own words when it is invalid."""
    host = decoded.partition(":")[0].lower()
    kind = "ipv4" if is_ipv4(host) else "hostname"
    problem = host_name_problem(host) if kind == "hostname" else None
    if problem:
        raise errors.InvalidURI(f"invalid host {_shown_host(text)}: {problem}")
    return Host(host, _parse_port(port, text) if colon else None, kind)


def _parse_port(port, text):
    numeric = port.isascii() and port.isdigit()
    if not numeric or not 1 <= int(port) <= 65535:
        shown = f"{port!r}" if numeric else "not shown: it is not a number"
        # PyMongo's words first (programs match them), then what is wrong and a hint.
        lead = "Port contains whitespace character" if any(c.isspace() for c in port) else \
            "Port must be an integer between 0 and 65535"
        raise errors.InvalidURI(
            f"{lead}: invalid port in host {_shown_host(text)} ({shown}); a port is an "
            f"integer from 1 to 65535 (if that is a username and password, end "
            f"them with '@')")
    return int(port)


def _check_srv_hosts(hosts, uri, authority):
    if len(hosts) != 1:
        raise errors.InvalidURI(f"a mongodb+srv:// connection string names exactly one host, "
                                f"not {len(hosts)} ({redact_uri(uri)!r})")
    if hosts[0].kind in ("ipv4", "ip_literal"):  # PyMongo's words
        raise errors.InvalidURI(f"Invalid URI host: an IP address is not a valid hostname for "
                                f"'mongodb+srv://'. Did you mean to use 'mongodb://'? "
                                f"({redact_uri(uri)!r})")
    if hosts[0].kind == "unix" or ":" in authority:
        raise errors.InvalidURI(
            f"a mongodb+srv:// host must not include a port ({redact_uri(uri)!r})")


def _parse_database(path, uri):
    # Only the database (before the first '.') is checked: a collection may hold any
    # character, as in PyMongo ("test.name/with \"delimiters").
    database, _, collection = unquote(path).partition(".")
    bad = sorted(_BAD_DB_CHARS.intersection(database))
    if bad:
        # Not quoted: the "database" may be the end of a password with a '/' in it.
        raise errors.InvalidURI(f"invalid database name in connection string (not shown): it "
                                f"must not contain {' '.join(repr(c) for c in bad)}")
    return database, (collection or None)


def _parse_query(query):
    if not query:
        return ()
    if "&" in query and ";" in query:
        raise errors.InvalidURI("Can not mix '&' and ';' for option separators")
    separator = "&" if "&" in query or ";" not in query else ";"
    pairs = []
    for item in query.split(separator):
        if not item:
            continue
        key, eq, value = item.partition("=")
        if not eq:  # not quoted: "proxyPassword" and its value may be run together
            raise errors.InvalidURI(f"invalid connection option #{len(pairs) + 1} (not shown): "
                                    f"options must be written key=value")
        pairs.append((unquote(key), unquote(value)))
    return tuple(pairs)


# ----- PyMongo's host and port arguments ------------------------------------------------------

def connection_string(host: Union[str, Sequence[str], None], port: Optional[int]) -> str:
    """One connection string for PyMongo's ``MongoClient(host, port)``: ``host`` is a
    connection string, a ``host[:port]`` list (``"a,b:2"``) or a list of them, ``port`` the
    default port of every host. As in PyMongo, an entry with a '/' is a connection string (a
    host name has none; a bare UNIX socket path ending in '.sock' is a host here), at most one,
    and the other entries' hosts join its host list."""
    hosts = ["localhost" if host is None else host] if isinstance(host, (str, type(None))) \
        else list(host)
    if not all(isinstance(h, str) for h in hosts):
        raise TypeError(f"host must be a string or a list of strings, not {host!r}")
    if not hosts:
        raise errors.ConfigurationError("need to specify at least one host: host is an empty "
                                        "list")
    if isinstance(port, bool) or (port is not None and not isinstance(port, int)):
        raise TypeError(f"port must be an integer, not {port!r}")
    # A port outside 0-65535 is taken, as PyMongo takes it: connecting to it fails, at the
    # first operation (a ServerSelectionTimeoutError naming it), not here.
    port = DEFAULT_PORT if port is None else port
    uris = [h for h in hosts if "/" in h and not _is_socket_path(h)]
    if len(uris) > 1:
        raise errors.ConfigurationError(
            f"host must not contain multiple MongoDB URIs (it holds {len(uris)}): give one "
            f"connection string with every host in it")
    plain = [h for h in hosts if h not in uris]
    if any("@" in h for h in plain):  # checked whole: a part of it is no SecretText
        raise errors.InvalidURI(
            "invalid host (not shown: it holds an '@'): credentials go in a connection string "
            "('mongodb://user:password@host') or the username= and password= keywords")
    seeds = [_seed_text(part, port) for h in plain for part in h.split(",")]
    if not uris:
        return SecretText(SCHEME + ",".join(seeds))
    uri = uris[0]
    if not uri.startswith((SCHEME, SRV_SCHEME)) and "://" not in uri:
        raise errors.InvalidURI(
            f"invalid host {redact_uri(uri)!r}: a host name has no '/', and a connection "
            f"string begins with 'mongodb://' "
            f"(did you mean {redact_uri(_scheme_fixed(uri))!r}?)")
    if not seeds:
        return uri
    if uri.startswith(SRV_SCHEME):
        raise errors.ConfigurationError(
            "a mongodb+srv:// connection string takes its hosts from DNS: it cannot be given "
            "with other hosts")
    start = uri.index("://") + 3
    cut = min((i for i in (uri.find("/", start), uri.find("?", start)) if i >= 0),
              default=len(uri))
    return SecretText(uri[:cut] + "," + ",".join(seeds) + uri[cut:])


def _is_socket_path(text: str) -> bool:
    return text.endswith(".sock") and "://" not in text and "," not in text


def _seed_text(host: str, port: int) -> str:
    """``host`` as it goes in a connection string's host list (``host`` gets ``port``), or
    InvalidURI (PyMongo: a ValueError) naming what is wrong with it."""
    host = str.__str__(host)  # no secret: a host with an '@' was refused before
    if not host:
        raise errors.InvalidURI("empty host in the host list (or an extra comma)")
    if _is_socket_path(host):
        from urllib.parse import quote_plus
        return quote_plus(host)
    if not 1 <= port <= 65535:  # no connection string has it: the host takes it as the
        port_text = ""           # default port (``client_options(uri, port)``)
    else:
        port_text = f":{port}"
    if host.startswith("["):
        return host if "]:" in host else f"{host}{port_text}"
    if host.count(":") > 1:
        shown = repr(host) if is_ipv6(host) else "(not shown)"
        raise errors.InvalidURI(
            f"invalid host {shown}: an IPv6 address goes in brackets, '[address]' or "
            f"'[address]:port' (RFC 2732)")
    return host if ":" in host else f"{host}{port_text}"
