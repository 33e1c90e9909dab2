"""Validated client configuration from a connection string plus keyword arguments.

Precedence: a keyword argument overrides the same option in the connection string, which
overrides a TXT record. The one exception is serverSelectionTryOnce, where a keyword and a URI
value that disagree are an error (server selection spec). Invalid values in a connection
string are dropped with a SingleMongoWarning (connection-string spec); invalid keyword
arguments and conflicting options raise ConfigurationError.
"""
from __future__ import annotations

import warnings
TYPE_CHECKING = False  # typing's, without importing it at run time
if TYPE_CHECKING:
    from typing import Any, Mapping, Optional, Tuple
from singlemongo.records import dataclass, replace
from types import MappingProxyType

from singlemongo import errors
from singlemongo.errors import ConfigurationError
from singlemongo.options.table import (ALIASES, COMPRESSORS, OPTIONS, PROXY_OPTIONS, canonical_name, defaults,
                    keyword_value)
from singlemongo.sdam.address import DEFAULT_PORT
from singlemongo.options.uri import REDACTED, SecretText, mention, redact_value, parse_uri
from singlemongo.selection import ReadPreference

if TYPE_CHECKING:
    from singlemongo.options.credentials import Credentials

# uri-options spec, "Conflicting TLS options".
TLS_CONFLICTS = (
    ("tlsInsecure", "tlsAllowInvalidCertificates"), ("tlsInsecure", "tlsAllowInvalidHostnames"),
    ("tlsInsecure", "tlsDisableOCSPEndpointCheck"),
    ("tlsInsecure", "tlsDisableCertificateRevocationCheck"),
    ("tlsAllowInvalidCertificates", "tlsDisableOCSPEndpointCheck"),
    ("tlsAllowInvalidCertificates", "tlsDisableCertificateRevocationCheck"),
    ("tlsDisableOCSPEndpointCheck", "tlsDisableCertificateRevocationCheck"))
# bson.binary.UuidRepresentation's values, by uuidRepresentation name.
UUID_REPRESENTATION_CODES = {"unspecified": 0, "standard": 4, "pythonLegacy": 3,
                             "javaLegacy": 5, "csharpLegacy": 6}
# Initial DNS Seedlist Discovery, "TXT records".
TXT_ALLOWED = frozenset({"authSource", "replicaSet", "loadBalanced"})
@dataclass(frozen=True)
class ClientOptions:
    """Every option of a client, validated: the seeds, the option values by their spec
    names and the credentials (a frozen record; no I/O)."""
    seeds: Tuple[Tuple[str, Optional[int]], ...]
    values: Mapping[str, Any]
    specified: frozenset
    srv_host: Optional[str] = None
    database: Optional[str] = None
    credentials: Optional["Credentials"] = None
    read_preference: ReadPreference = ReadPreference()
    # (name, given as None) of the options in the order given (the URI's, then the
    # keywords'), for a repr in PyMongo's order.
    given: Tuple[Tuple[str, bool], ...] = ()
    # The hosts as written, a repeated one counted again: loadBalanced and directConnection
    # take exactly one (PyMongo counts them so: "localhost,localhost:27017" is two).
    hosts_given: int = 0

    def __getattr__(self, attr):
        name = canonical_name(attr)
        if name is None or attr.startswith("_"):
            raise AttributeError(attr)
        value = self.values[name]
        # Kept on the instance: the next read is a plain attribute (a scan reads options
        # for every server it checks). The values never change after validation.
        object.__setattr__(self, attr, value)
        return value

    def __repr__(self):
        shown = {k: redact_value(k, v) for k, v in self.values.items() if k in self.specified}
        return (f"ClientOptions(seeds={list(self.seeds)}, srv_host={self.srv_host!r}, "
                f"options={shown}, credentials={self.credentials!r})")

    @property
    def is_srv(self):
        """Whether the seed list comes from a mongodb+srv lookup."""
        return self.srv_host is not None

    def specified_options(self):
        """The options that were given explicitly, by canonical name."""
        return {k: v for k, v in self.values.items() if k in self.specified}

    def codec_options(self):
        """The CodecOptions replies are decoded with (and documents encoded with): PyMongo's
        defaults, naive UTC datetimes included, unless the keywords say otherwise."""
        from bson.codec_options import CodecOptions, DatetimeConversion
        v = self.values
        kwargs = {"document_class": v["document_class"], "tz_aware": v["tz_aware"],
                  "uuid_representation": UUID_REPRESENTATION_CODES[v["uuidRepresentation"]],
                  "unicode_decode_error_handler": v["unicode_decode_error_handler"],
                  "tzinfo": v["tzinfo"],
                  "datetime_conversion": v["datetime_conversion"] or DatetimeConversion.DATETIME}
        if v["type_registry"] is not None:
            kwargs["type_registry"] = v["type_registry"]
        return CodecOptions(**kwargs)


def client_options(uri, default_port=DEFAULT_PORT, **kwargs):
    """Parse and validate; no DNS (``mongodb+srv`` seeds come later from ``srv.py``).
    ``default_port``: the port of the hosts the connection string gives without one
    (MongoClient's ``port``, as PyMongo's ``parse_uri``)."""
    uri = SecretText(uri) if isinstance(uri, str) else uri  # frames below can raise
    parsed = parse_uri(uri)
    found = _read_uri_options(parsed.raw_options, parsed.password, parsed.ambiguous)
    values = defaults()
    values.update(found.values)
    specified = set(found.values)
    given = {}  # option -> (first keyword, its value): ssl= and tls=, ...
    order = dict.fromkeys(found.values, False)  # option -> given as None (a keyword)
    for key, value in kwargs.items():
        name = canonical_name(key)
        order[name] = value is None
        value = validate_keyword(key, value)
        _check_spellings_agree(given.setdefault(name, (key, value)), name, key, value)
        if key.lower() in ("tls", "ssl") and value is not None:
            # The same name as a keyword overrides the URI's; the other name must agree.
            found.tls_values[:] = [(k, v) for k, v in found.tls_values
                                   if k.lower() != key.lower()] + [(key, value)]
        if name == "compressors":  # as in a connection string: the usable ones, warned
            value = _known_compressors(list(value), found.warnings)
        if name == "serverSelectionTryOnce" and name in found.values and found.values[name] != value:
            raise ConfigurationError(
                f"serverSelectionTryOnce={str(found.values[name]).lower()} in the connection "
                f"string conflicts with the keyword argument {key}={value}")
        values[name] = value
        if value is None:  # None as a keyword overrides the URI's value and sets nothing
            specified.discard(name)
        else:
            specified.add(name)
    options = ClientOptions(**_where(parsed, default_port), values=values,
                            specified=frozenset(specified), database=parsed.database,
                            given=tuple(order.items()))
    for message in found.warnings:
        warnings.warn(message, errors.SingleMongoWarning, stacklevel=2)
    username = values["username"] if "username" in specified else parsed.username
    if username == "":  # PyMongo: username="" overrides the connection string's, with none
        username = None
    password = values["password"] if "password" in specified else parsed.password
    return _finish(options, username, password, found.tls_values,
                   "authMechanismProperties" in found.invalid)


def _where(parsed, default_port):
    # A host named twice is one seed (PyMongo: a set).
    return {"seeds": tuple(dict.fromkeys(h.address(default_port) for h in parsed.hosts))
            if not parsed.is_srv else (),
            "srv_host": parsed.hosts[0].host if parsed.is_srv else None,
            "hosts_given": len(parsed.hosts)}


def check_combinations(uri, default_port=DEFAULT_PORT):
    """For a connection string alone (``uri_parser.parse_uri``): the URI options spec's
    options that cannot be given together (tls and ssl that disagree, tlsInsecure beside what
    it implies, loadBalanced with several hosts, SRV options in a mongodb:// string, a proxy
    half given), refused as a client refuses them. Nothing else a client checks."""
    uri = SecretText(uri) if isinstance(uri, str) else uri  # frames below can raise
    parsed = parse_uri(uri)
    found = _read_uri_options(parsed.raw_options, parsed.password, parsed.ambiguous)
    values = defaults()
    values.update(found.values)
    _check_conflicts(ClientOptions(**_where(parsed, default_port), values=values,
                                   specified=frozenset(found.values)), found.tls_values)


def _check_spellings_agree(first, name, key, value):
    """An old name and the new one given as keywords with different values are refused
    (connection string spec: ssl and tls); two casings of one name are PyMongo's
    case-insensitive dict, the last wins (mongoengine passes a connection string's
    uuidrepresentation with its caller's uuidRepresentation)."""
    first_key, first_value = first
    if first_value != value and (key.lower() in ALIASES) != (first_key.lower() in ALIASES):
        raise errors.InvalidURI(
            f"conflicting values for option {name}: {first_key}="
            f"{redact_value(name, first_value)!r} and {key}={redact_value(name, value)!r}")


def validate_keyword(key, value):
    """The validated value of the keyword option ``key``; ConfigurationError for an unknown
    option (with the nearest names, as PyMongo) or a bad value."""
    name = canonical_name(key)
    if name is None:
        raise ConfigurationError(unknown_option_message(key))
    if name == "readPreferenceTags" and value is not None:
        value = value if isinstance(value, (list, tuple)) else [value]
    try:
        return keyword_value(name, value)
    except (ValueError, TypeError) as exc:
        kind = errors.ConfigurationTypeError if isinstance(exc, TypeError) else ConfigurationError
        raise kind(f"invalid value for option {key}: {redact_value(name, value)!r} "
                   f"({exc})") from None


def unknown_option_message(key, uri=False):
    """"Unknown option: retryWrite. Did you mean one of (retryWrites, ...)", as PyMongo
    says it (difflib is only imported for a mistake); ``uri``: connection string names only."""
    from difflib import get_close_matches
    from singlemongo.options.table import OPTIONS as table
    names = sorted(set(table) | (set() if uri else {opt.attr for opt in table.values()}))
    by_lower = {n.lower(): n for n in names}
    close = get_close_matches(key.lower(), list(by_lower), n=3, cutoff=0.6)
    message = f"Unknown option: {key}."
    if close:
        message += f" Did you mean one of ({', '.join(by_lower[c] for c in close)})?"
    return message


def with_srv_results(options, seeds, txt_pairs):
    """The options after SRV and TXT resolution; URI and keyword values beat TXT values."""
    values = dict(options.values)
    specified = set(options.specified)
    for key, value in txt_pairs:
        name = canonical_name(key)
        if name not in TXT_ALLOWED:
            raise ConfigurationError(
                f"TXT record for {options.srv_host} sets {key!r}; only authSource, replicaSet "
                f"and loadBalanced may be set there")
        if name in specified:
            continue
        try:
            values[name] = OPTIONS[name].validate(value)
        except (ValueError, TypeError) as exc:
            raise ConfigurationError(
                f"invalid value {value!r} for {key} in TXT record for {options.srv_host} ({exc})"
            ) from None
        specified.add(name)
    new = replace(options, seeds=tuple(seeds), values=values, specified=frozenset(specified))
    creds = options.credentials
    return _finish(new, creds.username if creds else None, creds.password if creds else None, ())


# A plain class, not a record: a one-off makes this class, and a record class costs 0.1 M
# instructions more to make.
class _Found:
    __slots__ = ("values", "warnings", "tls_values", "invalid")

    def __init__(self, values: dict, warnings: list, tls_values: list, invalid: set) -> None:
        self.values, self.warnings, self.tls_values = values, warnings, tls_values
        self.invalid = invalid  # options given with a value that was dropped with a warning


def _read_uri_options(pairs, password=None, ambiguous=False):
    """The options of the connection string's query. Connection string spec, "Credential
    disclosure": no option value is quoted (a password typed in the wrong place would be),
    and no key either if the ``password`` is in it (``mention``) or if the string is
    ``ambiguous`` (a password with an unencoded '?' may have become a key)."""
    found = _Found({}, [], [], set())
    present = {canonical_name(k) for k, _ in pairs if k.lower() not in ALIASES}
    for key, raw in pairs:
        name = canonical_name(key)
        if name is None or (key.lower() not in ALIASES and key.lower() != name.lower()):
            found.warnings.append(_unsupported(key, password, ambiguous))
            continue
        if key.lower() in ALIASES and name in present and name != "tls":
            found.warnings.append(f"deprecated option {key!r} ignored: {name} is also given")
            continue
        opt = OPTIONS[name]
        if opt.keyword_only:
            found.warnings.append(f"{key!r} is a MongoClient keyword, not a connection string "
                                  f"option; ignored")
            continue
        if raw == "" and name == "authSource":  # auth spec: an empty authSource is an error
            raise ConfigurationError("authSource must not be empty in the connection string")
        if raw == "" and not opt.is_list:
            found.warnings.append(f"connection option {key} has an empty value; ignored")
            continue
        if name in PROXY_OPTIONS and name in found.values:
            raise ConfigurationError(f"connection option {name} is given more than once")
        try:
            value = opt.validate(raw)
        except (ValueError, TypeError) as exc:
            reason = str(exc) if raw.lower() not in str(exc).lower() else "not a valid value"
            found.warnings.append(f"invalid value for connection option {key} (the value is "
                                  f"not shown; {reason}); option ignored")
            found.invalid.add(name)
            continue
        if name == "tls":
            found.tls_values.append((key, value))
        elif opt.is_list:
            value = list(found.values.get(name, ())) + value
        elif name in found.values:
            found.warnings.append(f"connection option {name} is repeated; the last value "
                                  f"is used")
        if name == "compressors":
            value = _known_compressors(value, found.warnings)
        found.values[name] = value
    return found


def _unsupported(key, password, ambiguous=False):
    """The warning for an unknown option, with the nearest names if the key is no secret."""
    shown = mention(key, password) if not ambiguous else repr(REDACTED)
    message = f"unsupported connection option {shown}; ignored"
    if shown == repr(key):  # no secret in it: the nearest names may be said
        close = unknown_option_message(key, uri=True).partition(" Did you mean ")[2]
        if close:
            message += f". Did you mean {close}"
    return message


# Compression: the modules each optional compressor can use, and the package to install.
COMPRESSOR_PACKAGES = {"snappy": (("snappy",), "python-snappy"),
                       "zstd": (("compression.zstd", "backports.zstd", "zstandard"),
                                "backports.zstd")}


def _installed(modules):
    from importlib.util import find_spec  # whether it is installed, without loading it
    for module in modules:
        try:
            if find_spec(module) is not None:
                return True
        except ImportError:  # a parent package that is not there ("compression" before 3.14)
            continue
    return False


def _known_compressors(names, warn):
    known = [n for n in names if n in COMPRESSORS]
    for unknown in sorted(set(names) - set(known)):
        warn.append(f"unsupported compressor {unknown!r} in compressors; ignored")
    for name in [n for n in known if n in COMPRESSOR_PACKAGES]:
        modules, package = COMPRESSOR_PACKAGES[name]
        if not _installed(modules):
            warn.append(f"compressor {name!r} needs the {package} package (pip install "
                        f"'singlemongo[{name}]'); ignored")
            known.remove(name)
    return known


# PyMongo's rule: a value for these options means TLS (False for the last three: checks the
# user turned off still say TLS is wanted).
TLS_IMPLYING = ("tlsCertificateKeyFile", "tlsCertificateKeyFilePassword", "tlsCAFile",
                "tlsCRLFile")
TLS_IMPLYING_WHEN_FALSE = ("tlsAllowInvalidCertificates", "tlsAllowInvalidHostnames",
                           "tlsDisableOCSPEndpointCheck")


def _tls_implied_by(values, specified):
    return [name for name in TLS_IMPLYING if values.get(name)] + [
        name for name in TLS_IMPLYING_WHEN_FALSE if name in specified and not values[name]]


def _finish(options, username, password, tls_values, properties_dropped=False):
    _check_conflicts(options, tls_values)
    values = dict(options.values)
    if options.is_srv and "tls" not in options.specified:
        values["tls"] = True  # SRV implies TLS unless the user said otherwise.
    implying = _tls_implied_by(values, options.specified)
    if implying and "tls" not in options.specified:
        values["tls"] = True  # as PyMongo: asking for a CA or a check means TLS
    elif implying and not values["tls"]:
        raise ConfigurationError(
            f"TLS has not been enabled but the following tls parameters have been set: "
            f"{', '.join(name.lower() for name in implying)}. Please set `tls=True` or remove.")
    if values.get("maxPoolSize") and values.get("minPoolSize") and \
            values["minPoolSize"] > values["maxPoolSize"]:  # 0 is "no maximum"
        raise ConfigurationError("minPoolSize must be smaller or equal to maxPoolSize")
    try:
        read_pref = ReadPreference(values["readPreference"],
                                   tuple(values["readPreferenceTags"]) or ({},),
                                   values["maxStalenessSeconds"])
    except ConfigurationError as exc:
        raise ConfigurationError(f"invalid read preference options: {exc}") from None
    return replace(options, values=MappingProxyType(values), read_preference=read_pref,
                   credentials=_credentials(options.values, options.database, username,
                                            password, properties_dropped))


def _credentials(values, database, username, password, properties_dropped):
    """``credentials.credentials``; a client that configures no authentication at all does
    not load the authentication options' rules."""
    if username is None and password is None and not properties_dropped and all(
            values[name] is None for name in ("authMechanism", "authSource",
                                              "authMechanismProperties")):
        return None
    from singlemongo.options.credentials import credentials
    return credentials(values, database, username, password, properties_dropped)


def _check_conflicts(options, tls_values):
    v, given = options.values, options.specified
    seeds = max(len(options.seeds), options.hosts_given)
    if len({value for _, value in tls_values}) > 1:
        raise errors.InvalidURI(
            "conflicting tls and ssl values: " + ", ".join(f"{k}={str(x).lower()}" for k, x in tls_values))
    for first, second in TLS_CONFLICTS:
        if first in given and second in given:  # PyMongo's class: InvalidURI
            raise errors.InvalidURI(f"options {first} and {second} cannot both be given")
    if v["directConnection"] and (options.is_srv or seeds > 1):
        raise ConfigurationError(
            "directConnection=true needs exactly one host" + (
                f", not {seeds}" if not options.is_srv else ", not a mongodb+srv:// URI"))
    if v["loadBalanced"]:
        if seeds > 1:
            raise ConfigurationError(f"loadBalanced=true needs exactly one host, not {seeds}")
        if v["directConnection"]:
            raise ConfigurationError("loadBalanced=true cannot be combined with directConnection=true")
        if v["replicaSet"] is not None:
            raise ConfigurationError("loadBalanced=true cannot be combined with replicaSet")
    if v.get("srv_host_validator") is not None and not options.is_srv:
        raise ConfigurationError("The srv_host_validator option is only allowed with "
                                 "'mongodb+srv://' URIs")
    if not options.is_srv:
        for name in ("srvServiceName", "srvMaxHosts"):
            if name in given:
                raise ConfigurationError(f"{name} is only valid with a mongodb+srv:// connection string")
    elif v["srvMaxHosts"]:
        if v["replicaSet"] is not None:
            raise ConfigurationError("srvMaxHosts cannot be combined with replicaSet")
        if v["loadBalanced"]:
            raise ConfigurationError("srvMaxHosts cannot be combined with loadBalanced=true")
    _check_proxy(v, given)


def _check_proxy(v, given):
    if "proxyHost" not in given:
        others = [name for name in PROXY_OPTIONS[1:] if name in given]
        if others:
            raise ConfigurationError(f"{', '.join(others)} given without proxyHost")
    if ("proxyUsername" in given) != ("proxyPassword" in given):
        raise ConfigurationError("proxyUsername and proxyPassword must be given together")
