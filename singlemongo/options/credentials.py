"""Credentials from a connection string and options (auth spec, "MongoCredential").

Each mechanism's rules are checked here, before any connection: what a mechanism needs, what
it forbids, and which mechanism properties it takes. The password lives only in the frozen
``Credentials`` record, whose ``repr`` and ``str`` redact it.
"""
from typing import Any, Mapping, Optional

from singlemongo.errors import ConfigurationError
from singlemongo.records import dataclass, field
from singlemongo.options.uri import REDACTED
from singlemongo.options.table import AUTH_MECHANISMS

EXTERNAL_MECHANISMS = ("MONGODB-X509", "GSSAPI", "MONGODB-AWS", "MONGODB-OIDC")
MECHANISM_PROPERTIES = {
    "GSSAPI": {"SERVICE_NAME", "CANONICALIZE_HOST_NAME", "SERVICE_REALM", "SERVICE_HOST"},
    "MONGODB-AWS": {"AWS_SESSION_TOKEN"},
    "MONGODB-OIDC": {"ENVIRONMENT", "TOKEN_RESOURCE", "OIDC_CALLBACK", "OIDC_HUMAN_CALLBACK",
                     "ALLOWED_HOSTS"},
}
# GSSAPI: "Valid values for CANONICALIZE_HOST_NAME".
CANONICALIZE_VALUES = {"true": True, "false": False, "none": "none", "forward": "forward",
                       "forwardAndReverse": "forwardAndReverse"}
# MONGODB-OIDC: "Built-in OIDC Environment Integrations"; azure and gcp need TOKEN_RESOURCE.
OIDC_ENVIRONMENTS = ("test", "azure", "gcp", "k8s")
OIDC_TOKEN_RESOURCE_ENVIRONMENTS = ("azure", "gcp")
NEEDS_USERNAME = ("SCRAM-SHA-1", "SCRAM-SHA-256", "PLAIN", "GSSAPI")
NEEDS_PASSWORD = ("SCRAM-SHA-1", "SCRAM-SHA-256", "PLAIN")
NO_PASSWORD = ("MONGODB-X509", "MONGODB-OIDC")


@dataclass(frozen=True)
class Credentials:
    """Who to authenticate as; ``repr`` and ``str`` show neither the username nor the
    password (connection string spec, "Credential disclosure": a client's representation
    names no credential; ``username`` is there to read)."""
    username: Optional[str]
    password: Optional[str] = field(repr=False)
    source: str
    mechanism: Optional[str]
    mechanism_properties: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def __repr__(self):
        secret = REDACTED if self.password is not None else None
        user = REDACTED if self.username is not None else None
        return (f"Credentials(username={user!r}, password={secret!r}, "
                f"source={self.source!r}, mechanism={self.mechanism!r})")

    __str__ = __repr__


def _fail(text):
    raise ConfigurationError(text)


def _check_gssapi(username, password, props, properties_dropped=False):
    value = props.get("CANONICALIZE_HOST_NAME")
    if value is not None:
        if value not in CANONICALIZE_VALUES and not isinstance(value, bool):
            _fail(f"authMechanismProperties CANONICALIZE_HOST_NAME must be one of "
                  f"{', '.join(CANONICALIZE_VALUES)}, not {value!r}")
        props["CANONICALIZE_HOST_NAME"] = CANONICALIZE_VALUES.get(value, value)
    props.setdefault("SERVICE_NAME", "mongodb")


def _check_aws(username, password, props, properties_dropped=False):
    # "Obtaining Credentials": an access key id goes with its secret key.
    if (username is None) != (password is None):
        _fail("authMechanism MONGODB-AWS needs both a username (access key id) and a "
              "password (secret access key), or neither")


def _check_oidc(username, password, props, properties_dropped=False):
    environment = props.get("ENVIRONMENT")
    callbacks = [k for k in ("OIDC_CALLBACK", "OIDC_HUMAN_CALLBACK") if k in props]
    if properties_dropped:
        return  # the warning about the dropped properties already names the problem
    if len(callbacks) == 2:
        _fail("authMechanismProperties OIDC_CALLBACK and OIDC_HUMAN_CALLBACK cannot both be "
              "given: one is for machines, the other for people")
    if environment is None and not callbacks:
        _fail("authMechanism MONGODB-OIDC needs authMechanismProperties ENVIRONMENT "
              f"({', '.join(OIDC_ENVIRONMENTS)}) or an OIDC callback")
    if environment is not None:
        if environment not in OIDC_ENVIRONMENTS:
            _fail(f"authMechanismProperties ENVIRONMENT must be one of "
                  f"{', '.join(OIDC_ENVIRONMENTS)}, not {environment!r}")
        if callbacks:
            _fail(f"authMechanismProperties ENVIRONMENT cannot be combined with {callbacks[0]}")
        if environment == "test" and username is not None:
            _fail("authMechanism MONGODB-OIDC with ENVIRONMENT test takes no username")
    if ("TOKEN_RESOURCE" in props) != (environment in OIDC_TOKEN_RESOURCE_ENVIRONMENTS):
        _fail("authMechanismProperties TOKEN_RESOURCE is required with ENVIRONMENT "
              f"{' or '.join(OIDC_TOKEN_RESOURCE_ENVIRONMENTS)}, and only then")


def _check_plain(username, password, props, properties_dropped):
    # PLAIN (RFC 4616): NUL separates the message's fields, so neither may contain one.
    if "\x00" in (username or "") or "\x00" in str.__str__(password or ""):
        _fail("PLAIN credentials cannot contain NUL characters (the username or password "
              "has one)")


MECHANISM_CHECKS = {"GSSAPI": _check_gssapi, "MONGODB-AWS": _check_aws,
                    "MONGODB-OIDC": _check_oidc, "PLAIN": _check_plain}


def credentials(values, database, username, password, properties_dropped=False):
    """The Credentials the options describe, or None; ConfigurationError for what is invalid."""
    mechanism = values["authMechanism"]
    source = values["authSource"]
    if source == "":  # connection string spec: an empty authSource is an error
        _fail("authSource must not be empty")
    if mechanism is not None and mechanism not in AUTH_MECHANISMS:
        # Not quoted (connection string spec, "Credential disclosure"): it may be a password.
        _fail(f"unsupported authMechanism (the value is not shown): expected one of "
              f"{', '.join(AUTH_MECHANISMS)}, spelled exactly so")
    if username is None and mechanism in (None,) + NEEDS_USERNAME:
        if mechanism is not None:
            _fail(f"authMechanism {mechanism} needs a username")
        return None
    if mechanism in EXTERNAL_MECHANISMS:
        if source not in (None, "$external"):
            _fail(f"authMechanism {mechanism} authenticates against $external, not "
                  f"authSource {source!r}")
        source = "$external"
    if password is not None and mechanism in NO_PASSWORD:
        _fail(f"authMechanism {mechanism} takes no password")
    if password is None and mechanism in NEEDS_PASSWORD:
        _fail(f"authMechanism {mechanism} needs a password")
    props = dict(values["authMechanismProperties"] or {})
    unknown = sorted(set(props) - MECHANISM_PROPERTIES.get(mechanism, set()))
    if unknown:
        _fail(f"authMechanismProperties {unknown} are not valid for authMechanism {mechanism}")
    check = MECHANISM_CHECKS.get(mechanism)
    if check is not None:
        check(username, password, props, properties_dropped)
    default_source = "$external" if mechanism == "PLAIN" and database is None else (
        database or "admin")
    return Credentials(username, password, source or default_source, mechanism, props)


_SCRAM_OR_DEFAULT = (None, "SCRAM-SHA-1", "SCRAM-SHA-256")


def check_authenticates(creds: Credentials) -> None:
    """ConfigurationError if a client could not authenticate with ``creds``: the default
    mechanism negotiates SCRAM, which needs a password ("MongoCredential Properties"). A
    connection string with a username alone is still valid to parse (connection string spec);
    like PyMongo, the client refuses it before it connects."""
    if creds.mechanism is None and creds.password is None:
        _fail("a username was given without a password: the default authMechanism (SCRAM) "
              "needs one; for a mechanism without a password (MONGODB-X509, MONGODB-OIDC, "
              "GSSAPI, MONGODB-AWS) set authMechanism")
    if creds.mechanism in _SCRAM_OR_DEFAULT and creds.password == "":
        # PyMongo raises "password can't be empty" (a ValueError) at the first operation.
        _fail(f"the password is empty: authMechanism "
              f"{creds.mechanism or 'SCRAM (the default)'} needs one")
