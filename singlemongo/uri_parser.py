"""Parsing connection strings the way PyMongo's ``pymongo.uri_parser`` reports them:
``parse_uri(uri)`` returns ``{"nodelist", "username", "password", "database", "collection",
"options", "fqdn"}`` with the options by their canonical names and PyMongo's value types
(timeouts in seconds, ``uuidRepresentation`` as its bson code, ``readPreference`` as the mode
name). Libraries read connection strings with it (mongoengine, Flask-PyMongo).

The syntax is singlemongo's parser (``options/uri.py``, the connection-string spec) and the
values its option table; a ``mongodb+srv://`` string is resolved (SRV and TXT), as PyMongo
does. The password stays a redacted string (``SecretText``): it works as a ``str``, and its
repr shows ``<redacted>``.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Iterator, Mapping, MutableMapping, Optional

from singlemongo.errors import ConfigurationError, InvalidURI
from singlemongo.options import uri as _uri
from singlemongo.options.client_options import unknown_option_message
from singlemongo.options.table import ALIASES as _DEPRECATED
from singlemongo.options.table import OPTIONS, canonical_name, keyword_value

# The authentication mechanisms PyMongo's validators accept (auth spec).
MECHANISMS = frozenset({"DEFAULT", "GSSAPI", "MONGODB-AWS", "MONGODB-OIDC", "MONGODB-X509",
                        "PLAIN", "SCRAM-SHA-1", "SCRAM-SHA-256"})
from singlemongo.sdam.address import DEFAULT_PORT

SCHEME = _uri.SCHEME
SRV_SCHEME = _uri.SRV_SCHEME
# Options PyMongo reports in seconds (it takes milliseconds).
_SECONDS = frozenset({"connectTimeoutMS", "socketTimeoutMS", "serverSelectionTimeoutMS",
                      "heartbeatFrequencyMS", "maxIdleTimeMS", "waitQueueTimeoutMS",
                      "timeoutMS"})
_UUID_CODES = {"unspecified": 0, "standard": 4, "pythonLegacy": 3, "javaLegacy": 5,
               "csharpLegacy": 6}

# MongoClient keywords PyMongo's validate_options knows too (its "non-spec" options); the
# other keyword-only ones (document_class, username, ...) are unknown to it.
_VALIDATED_KEYWORDS = frozenset({"driver", "server_api"})

__all__ = ["parse_host", "parse_ipv6_literal_host", "parse_uri", "parse_userinfo",
           "split_hosts", "split_options", "validate_options"]


# The options PyMongo's parse_uri reports under a lower-cased key.
_PYMONGO_KEYS = {name: name.lower() for name in (
    "enableOverloadRetargeting", "maxAdaptiveRetries", "timeoutMS", "uuidRepresentation",
    "waitQueueMultiple")}
# The start of PyMongo's message for a bad value of these options.
_PYMONGO_LEADS = {
    "readPreference": "Not a valid read preference. Must be one of: primary, "
                      "primaryPreferred, secondary, secondaryPreferred, nearest; ",
    "authMechanismProperties": "Malformed auth mechanism properties; "}
# Files PyMongo opens to check while validating (a missing one: FileNotFoundError).
_READABLE = frozenset({"tlsCAFile", "tlsCertificateKeyFile", "tlsCRLFile"})


def _pymongo_value(name: str, value: Any) -> Any:
    if name == "timeoutMS" and isinstance(value, (int, float)):
        return value / 1000.0  # 0 is kept: timeoutMS=0 means "no timeout", not unset
    if name in _SECONDS and isinstance(value, (int, float)) and not isinstance(value, bool):
        return value / 1000.0 if value else (None if name != "serverSelectionTimeoutMS" else 0)
    if name in _READABLE and isinstance(value, str):
        try:
            open(value, "rb").close()
        except FileNotFoundError:
            from singlemongo.errors import ConfigurationFileNotFoundError
            raise ConfigurationFileNotFoundError(f"{name} {value!r} does not exist",
                                                 value) from None
    if name == "compressors" and isinstance(value, (list, tuple)):
        # PyMongo reports the compressors it can use: unknown names and missing packages out
        # (warned, as a client warns for them).
        from singlemongo.options.client_options import _known_compressors
        dropped: list[str] = []
        value = _known_compressors(list(value), dropped)
        for message in dropped:
            warnings.warn(message, stacklevel=4)
        return value
    if name == "authMechanismProperties" and isinstance(value, dict):
        return {k: {"true": True, "false": False}.get(v, v)
                if k == "CANONICALIZE_HOST_NAME" else v for k, v in value.items()}
    if name == "localThresholdMS":
        return float(value)
    if name == "uuidRepresentation":
        return _UUID_CODES[value]
    return value


class _CaseInsensitiveDictionary(MutableMapping[str, Any]):
    """Options as PyMongo's validate_options and split_options return them: a key is found
    whatever its casing (``options["replicaset"]``); iterating gives each key as it was
    set."""

    def __init__(self, items: Any = ()) -> None:
        self._items: dict[str, tuple[str, Any]] = {}  # lower-case key -> (key, value)
        self.update(items)

    def __getitem__(self, key: str) -> Any:
        return self._items[key.lower()][1]

    def __setitem__(self, key: str, value: Any) -> None:
        self._items[key.lower()] = (key, value)

    def __delitem__(self, key: str) -> None:
        del self._items[key.lower()]

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._items

    def __iter__(self) -> Iterator[str]:
        return (key for key, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return NotImplemented
        return len(self) == len(other) and all(k in self and self[k] == other[k] for k in other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def cased_key(self, key: str) -> str:
        """The key as it was set (``"replicaSet"`` for ``"REPLICASET"``)."""
        return self._items[key.lower()][0]


def validate_options(opts: Mapping[str, Any], warn: bool = False,
                     from_uri: bool = False) -> MutableMapping[str, Any]:
    """Each option validated (``{canonical name: value}``, found whatever the casing); an
    unknown or invalid one raises ConfigurationError, or with ``warn`` is dropped with a
    warning. A None means what it means as a MongoClient keyword. ``from_uri``: the keys
    came out of a connection string, and an unknown one is not named (it may be a
    password typed in the wrong place)."""
    valid = _CaseInsensitiveDictionary()
    for key, raw in opts.items():
        name = canonical_name(key)
        try:
            if name is None or (OPTIONS[name].keyword_only and name not in _VALIDATED_KEYWORDS):
                raise ConfigurationError(_unknown(key, from_uri))
            if name == "authMechanism" and raw not in MECHANISMS:  # PyMongo checks it here
                raise ValueError(f"authMechanism must be in {tuple(sorted(MECHANISMS))}")
            value: Any = keyword_value(name, raw)
        except (ValueError, TypeError) as exc:  # ConfigurationError is a ValueError too
            # Connection string spec, "Credential disclosure": the value is not quoted.
            reason = str(exc) if str(raw).lower() not in str(exc).lower() else "not valid"
            if not warn:
                lead = _PYMONGO_LEADS.get(name or "", "")  # PyMongo's words, which programs match
                raise ConfigurationError(lead + (
                    reason if isinstance(exc, ConfigurationError) else
                    f"invalid value for {key} ({reason})")) from None
            warnings.warn(f"{reason} The option {key} is ignored.", stacklevel=2)
            continue
        if OPTIONS[name].is_list and name in valid:
            value = list(valid[name]) + list(value)
        valid[_PYMONGO_KEYS.get(name, name)] = _pymongo_value(name, value)
    return valid


def _unknown(key: str, from_uri: bool) -> str:
    message = unknown_option_message(key, uri=from_uri)
    return message.replace(f"Unknown option: {key}.", "Unknown option.") if from_uri \
        else message


def split_options(opts: str, validate: bool = True, warn: bool = False,
                  normalize: bool = True, from_uri: bool = True) -> MutableMapping[str, Any]:
    """The options of a connection string's query part (``"w=1&tls=true"``), as PyMongo's:
    InvalidURI for an empty authSource, mixed separators or options that cannot be given
    together; a warning for a repeated option (the last one counts)."""
    return _split_pairs(_uri._parse_query(opts), validate, warn, normalize, from_uri)


def _split_pairs(raw: Any, validate: bool, warn: bool, normalize: bool,
                 from_uri: bool) -> MutableMapping[str, Any]:
    seen: set[str] = set()
    present = {key.lower() for key, _ in raw}
    replaced = [key for key, _ in raw if key.lower() in _DEPRECATED and key.lower() != "ssl"
                and _DEPRECATED[key.lower()].lower() in present]
    for key in replaced:  # URI options spec: a deprecated name beside its replacement
        warnings.warn(f"Deprecated option '{key}' ignored in favor of "
                      f"'{_DEPRECATED[key.lower()]}'", stacklevel=3)
    raw = [(key, value) for key, value in raw if key not in replaced]
    for key, value in raw:
        name = canonical_name(key) or key
        if key.lower() in seen and not (name in OPTIONS and OPTIONS[name].is_list):
            warnings.warn(f"Duplicate URI option '{key}'.", stacklevel=3)
        seen.add(key.lower())
        if name == "authSource" and value == "":
            raise InvalidURI("the authSource database cannot be an empty string")
    _check_tls_options(raw)
    pairs = _grouped(raw)
    if validate:
        return _pymongo_tls(validate_options(dict(pairs), warn, from_uri))
    return {(canonical_name(k) or k) if normalize else k: v for k, v in pairs}


def _check_tls_options(pairs: Any) -> None:
    """URI options spec: tls and ssl must agree; tlsInsecure, tlsAllowInvalidCertificates
    and tlsDisableOCSPEndpointCheck conflict by presence, whatever their values."""
    from singlemongo.options.client_options import TLS_CONFLICTS
    present = {canonical_name(key) or key: value for key, value in pairs}
    # A repeated key's last value is the one used (with a warning), as in PyMongo: only
    # what tls and ssl end up as must agree.
    last = {key.lower(): value for key, value in pairs}
    tls = {value.lower() for key, value in last.items() if key in ("tls", "ssl")}
    if len(tls) > 1:
        raise InvalidURI("Can not specify conflicting values for URI options ssl and tls.")
    for first, second in TLS_CONFLICTS:
        if first in present and second in present:
            raise InvalidURI(f"URI options {first} and {second} cannot be specified "
                             f"simultaneously.")


def _pymongo_tls(options: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
    """tlsInsecure reported with what it implies, as PyMongo reports it."""
    if "tlsInsecure" in options:  # what it implies takes its value, true or false
        for name in ("tlsAllowInvalidCertificates", "tlsAllowInvalidHostnames",
                     "tlsDisableOCSPEndpointCheck"):
            options[name] = options["tlsInsecure"]
    return options


def parse_userinfo(userinfo: str) -> tuple[str, str]:
    """(username, password) from ``user:password`` (percent-decoded)."""
    user, password = _uri._parse_userinfo(userinfo)
    return user, password or ""


def parse_ipv6_literal_host(entity: str, default_port: Optional[int]) -> tuple[str, Any]:
    """(host, port) from ``[::1]`` or ``[::1]:27017``: the port as the text given (PyMongo's
    helper; ``parse_host`` makes it a number)."""
    if "]" not in entity:
        raise ValueError("an IPv6 address literal must be enclosed in '[' and ']' according "
                         "to RFC 2732.")
    end = entity.find("]:")
    if end == -1:
        return entity[1:-1], default_port
    return entity[1:end], entity[end + 2:]


def parse_host(entity: str, default_port: Optional[int] = DEFAULT_PORT) -> tuple[str, Any]:
    """(host, port) from ``host``, ``host:port``, an IPv6 literal or a UNIX socket path
    (percent-encoded as in a connection string, or as it is: PyMongo takes it as it is)."""
    if "/" in entity and _uri._is_socket_path(entity):
        return entity, None
    return _uri._parse_host(entity, SCHEME).address(default_port)


def split_hosts(hosts: str, default_port: Optional[int] = DEFAULT_PORT) -> list[tuple[str, Any]]:
    """[(host, port), ...] from a connection string's comma-separated host list."""
    nodes = []
    for entity in hosts.split(","):
        if not entity:
            raise ConfigurationError("Empty host (or extra comma in host list)")
        nodes.append(parse_host(entity, default_port))
    return nodes


def parse_uri(uri: str, default_port: Optional[int] = DEFAULT_PORT, validate: bool = True,
              warn: bool = False, normalize: bool = True,
              connect_timeout: Optional[float] = None, srv_service_name: Optional[str] = None,
              srv_max_hosts: Optional[int] = None,
              srv_allowed_hosts_suffix: Optional[str] = None,
              srv_host_validator: Optional[Callable[[str], bool]] = None) -> dict[str, Any]:
    """Parse and validate a connection string (PyMongo's ``parse_uri``). Raises InvalidURI
    for bad syntax, ConfigurationError for a bad option (``warn=True``: dropped with a
    warning)."""
    parsed = _uri.parse_uri(uri)
    # PyMongo 4.14+: a plain dict, by the canonical names.
    if validate:
        options: dict[str, Any] = dict(_split_pairs(parsed.raw_options, True, warn, True,
                                                    True))
        _check_combinations(uri, default_port)  # as a client would refuse them
    else:
        options = dict(parsed.raw_options)
    nodes = [h.address(default_port) for h in parsed.hosts]
    fqdn = None
    if parsed.is_srv:
        fqdn = parsed.hosts[0].host
        nodes, options = _resolve_srv(uri, options, connect_timeout, srv_service_name,
                                      srv_max_hosts, srv_host_validator)
    # PyMongo: a username without a password has the empty password.
    password = parsed.password if parsed.password is not None or parsed.username is None \
        else ""
    return {"nodelist": nodes, "username": parsed.username, "password": password,
            "database": parsed.database, "collection": parsed.collection, "options": options,
            "fqdn": fqdn}


def _check_combinations(uri: str, default_port: Optional[int]) -> None:
    """ConfigurationError for options that cannot be given together, as a client would
    refuse them (``client_options.check_combinations``), without making a client."""
    from singlemongo.options.client_options import check_combinations
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # what is ignored was said by validate_options
        check_combinations(uri, default_port or DEFAULT_PORT)


def _grouped(pairs: Any) -> list[tuple[str, Any]]:
    """readPreferenceTags may repeat: its values are gathered into one list."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        name = canonical_name(key)
        if name is not None and OPTIONS[name].is_list and not OPTIONS[name].keyword_only \
                and name != "compressors":
            out.setdefault(key, []).append(value)
        else:
            out[key] = value
    return list(out.items())


def _resolve_srv(uri: str, options: dict[str, Any], connect_timeout: Optional[float],
                 service_name: Optional[str], max_hosts: Optional[int],
                 host_validator: Optional[Callable[[str], bool]] = None
                 ) -> tuple[list[tuple[str, Any]], dict[str, Any]]:
    """The SRV hosts and the TXT options of a mongodb+srv:// string (DNS seedlist discovery)."""
    from singlemongo.clock import DEFAULT_CLOCK
    from singlemongo.engine.dns import DnsPythonResolver
    from singlemongo.options.client_options import client_options
    from singlemongo.options.srv import resolve_seedlist
    keywords: dict[str, Any] = {}
    if service_name:
        keywords["srvServiceName"] = service_name
    if max_hosts:
        keywords["srvMaxHosts"] = max_hosts
    if host_validator is not None:
        keywords["srv_host_validator"] = host_validator
    resolved = resolve_seedlist(client_options(uri, **keywords),
                                DnsPythonResolver(connect_timeout or 20.0),
                                DEFAULT_CLOCK.shuffle)
    for name in ("authSource", "replicaSet", "loadBalanced"):
        if name in resolved.specified and name not in options:
            options[name] = resolved.values[name]
    if "tls" not in options:
        options["tls"] = True
    return [tuple(seed) for seed in resolved.seeds], options


if __name__ == "__main__":  # pragma: no cover
    import pprint
    import sys
    try:
        pprint.pprint(parse_uri(sys.argv[1]))
    except InvalidURI as exc:
        print(exc)
