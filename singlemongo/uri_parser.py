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

from .errors import ConfigurationError, InvalidURI
from .options import uri as _uri
from .options.client_options import unknown_option_message
from .options.table import OPTIONS, canonical_name, keyword_value
from .sdam.address import DEFAULT_PORT

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


def _pymongo_value(name: str, value: Any) -> Any:
    if name in _SECONDS and isinstance(value, (int, float)) and not isinstance(value, bool):
        return value / 1000.0 if value else (None if name != "serverSelectionTimeoutMS" else 0)
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


def validate_options(opts: Mapping[str, Any], warn: bool = False) -> MutableMapping[str, Any]:
    """Each option validated (``{canonical name: value}``, found whatever the casing); an
    unknown or invalid one raises ConfigurationError, or with ``warn`` is dropped with a
    warning. A None means what it means as a MongoClient keyword."""
    valid = _CaseInsensitiveDictionary()
    for key, raw in opts.items():
        name = canonical_name(key)
        try:
            if name is None or (OPTIONS[name].keyword_only and name not in _VALIDATED_KEYWORDS):
                raise ConfigurationError(unknown_option_message(key))
            value: Any = keyword_value(name, raw)
        except (ValueError, TypeError) as exc:  # ConfigurationError is a ValueError too
            # Connection string spec, "Credential disclosure": the value is not quoted.
            reason = str(exc) if str(raw).lower() not in str(exc).lower() else "not valid"
            if not warn:
                raise ConfigurationError(reason if isinstance(exc, ConfigurationError) else
                                         f"invalid value for {key} ({reason})") from None
            warnings.warn(f"{reason} The option {key} is ignored.", stacklevel=2)
            continue
        if OPTIONS[name].is_list and name in valid:
            value = list(valid[name]) + list(value)
        valid[name] = _pymongo_value(name, value)
    return valid


def split_options(opts: str, validate: bool = True, warn: bool = False,
                  normalize: bool = True) -> MutableMapping[str, Any]:
    """The options of a connection string's query part (``"w=1&tls=true"``)."""
    pairs = _grouped(_uri._parse_query(opts))
    if validate:
        return validate_options(dict(pairs), warn)
    return {(canonical_name(k) or k) if normalize else k: v for k, v in pairs}


def parse_userinfo(userinfo: str) -> tuple[str, str]:
    """(username, password) from ``user:password`` (percent-decoded)."""
    user, password = _uri._parse_userinfo(userinfo)
    return user, password or ""


def parse_ipv6_literal_host(entity: str, default_port: Optional[int]) -> tuple[str, Any]:
    """(host, port) from ``[::1]`` or ``[::1]:27017``."""
    return parse_host(entity, default_port)


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
    options: dict[str, Any] = dict(validate_options(dict(_grouped(parsed.raw_options)), warn)
                                   if validate else parsed.raw_options)
    nodes = [h.address(default_port) for h in parsed.hosts]
    fqdn = None
    if parsed.is_srv:
        fqdn = parsed.hosts[0].host
        nodes, options = _resolve_srv(uri, options, connect_timeout, srv_service_name,
                                      srv_max_hosts)
    return {"nodelist": nodes, "username": parsed.username, "password": parsed.password,
            "database": parsed.database, "collection": parsed.collection, "options": options,
            "fqdn": fqdn}


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
                 service_name: Optional[str], max_hosts: Optional[int]
                 ) -> tuple[list[tuple[str, Any]], dict[str, Any]]:
    """The SRV hosts and the TXT options of a mongodb+srv:// string (DNS seedlist discovery)."""
    from .clock import DEFAULT_CLOCK
    from .engine.dns import DnsPythonResolver
    from .options.client_options import client_options
    from .options.srv import resolve_seedlist
    keywords: dict[str, Any] = {}
    if service_name:
        keywords["srvServiceName"] = service_name
    if max_hosts:
        keywords["srvMaxHosts"] = max_hosts
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
