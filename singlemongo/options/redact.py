"""Keep credentials out of every message, repr and log line."""
import re

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
