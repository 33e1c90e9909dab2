"""Runner for the connection-string and uri-options suites, and the connection string's
credential-disclosure cases."""
import traceback
import warnings

from singlemongo.options.client_options import client_options
from singlemongo.errors import ConfigurationError, SingleMongoWarning
from singlemongo.options.table import canonical_name
from singlemongo.options.uri import parse_uri


def parse_with_warnings(uri):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            opts = client_options(uri)
        except ConfigurationError as exc:
            opts = exc
    ours = [w for w in caught if issubclass(w.category, SingleMongoWarning)]
    return opts, ours


def check_options(expected, opts):
    for key, value in expected.items():
        name = canonical_name(key)
        assert name is not None, f"option {key!r} is unknown to singlemongo"
        actual = opts.values[name]
        if name == "readPreferenceTags":
            actual = list(actual)
        assert actual == value, f"option {key}: expected {value!r}, parsed {actual!r}"


def run_case(case):
    opts, warned = parse_with_warnings(case["uri"])
    valid = not isinstance(opts, Exception)
    assert valid == case["valid"], (
        f"{case['description']}: expected valid={case['valid']}, got "
        f"{'options' if valid else repr(opts)}")
    if case.get("warning") is not None:
        assert bool(warned) == case["warning"], (
            f"{case['description']}: expected warning={case['warning']}, got "
            f"{[str(w.message) for w in warned]}")
    if not valid:
        return
    parsed = parse_uri(case["uri"])
    if case.get("hosts") is not None:
        assert len(parsed.hosts) == len(case["hosts"])
        for host, want in zip(parsed.hosts, case["hosts"]):
            assert host.host == want["host"]
            if want.get("port") is not None:
                assert host.port == want["port"]
            if want.get("type") is not None:
                assert host.kind == want["type"]
    auth = case.get("auth")
    if auth is not None:
        assert _as_pymongo_reads(parsed.username, auth.get("username"))
        assert _as_pymongo_reads(parsed.password, auth.get("password"))
        db = parsed.database
        if parsed.collection:
            db = f"{db}.{parsed.collection}"
        assert db == auth.get("db")
    if case.get("options") is not None:
        check_options(case["options"], opts)
    if "credential" in case:  # the auth spec's connection-string tests share this format
        check_credential(case["credential"], opts.credentials)


def _as_pymongo_reads(got, want):
    """The spec's user info, or PyMongo's reading of it: singlemongo decodes user info as
    PyMongo does (unquote_plus, a '+' is a space: a password quoted with quote_plus
    round-trips), where the spec keeps a '+' as it is (docs/coming-from-pymongo.md,
    "Differences"; PyMongo's own runner compares the same way)."""
    if got == want:
        return True
    return isinstance(got, str) and isinstance(want, str) and got == want.replace("+", " ")


def check_credential(want, creds):
    if want is None:
        assert creds is None, f"expected no credential, got {creds!r}"
        return
    assert creds is not None, "expected a credential"
    assert _as_pymongo_reads(creds.username, want.get("username"))
    assert _as_pymongo_reads(creds.password, want.get("password"))
    assert creds.source == want.get("source")
    assert creds.mechanism == want.get("mechanism")
    assert dict(creds.mechanism_properties or {}) == dict(want.get("mechanism_properties") or {})


# The disclosure cases' sentinel, as written in the URI or fully percent-encoded; drivers
# lowercase option keys, so both are looked for case-insensitively.
SENTINEL = "sentinelpassword1234"
SENTINEL_FORMS = (SENTINEL, "".join(f"%{ord(c):02x}" for c in "SENTINELpassword1234").lower())


def run_disclosure_case(case):
    """Connection string spec, credential disclosure: whatever parsing a URI does (accept it,
    warn, or refuse it), the password never shows: not in the error, not in its traceback
    (what an uncaught error prints, causes included), not in a warning."""
    from singlemongo import uri_parser  # pymongo.uri_parser's stand-in parses it too
    texts = []
    for parse in (client_options, lambda uri: uri_parser.parse_uri(uri, warn=True)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                parse(case["uri"])
            except Exception as exc:
                texts.append(("error", str(exc)))
                texts.append(("traceback", "".join(traceback.format_exception(exc))))
        texts.extend(("warning", str(w.message)) for w in caught)
    for where, text in texts:
        for form in SENTINEL_FORMS:
            assert form not in text.lower(), (
                f"{case['description']}: the {where} discloses the password: {text}")
