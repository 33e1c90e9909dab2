"""Options the suites do not cover: single-threaded defaults, keywords, conflicts, redaction."""
import warnings

import pytest

from singlemongo import ConfigurationError, InvalidURI, SingleMongoWarning
from singlemongo.options.client_options import client_options
from singlemongo.options.table import OPTIONS
from singlemongo.options.uri import redact_uri


def test_single_threaded_defaults():
    o = client_options("mongodb://h")
    assert o.heartbeat_frequency_ms == 60_000
    assert o.server_selection_try_once is True
    assert o.socket_check_interval_ms == 5_000
    assert o.local_threshold_ms == 15
    assert o.server_selection_timeout_ms == 30_000
    assert o.max_adaptive_retries == 5
    assert o.enable_overload_retargeting is True
    assert o.retry_reads is True and o.retry_writes is True
    assert o.seeds == (("h", 27017),)


def test_heartbeat_below_500_is_dropped_with_warning_in_uri_and_an_error_as_keyword():
    """A connection string's value is not quoted (it may be a password typed in the wrong
    place: connection string spec, "Credential disclosure"); a keyword's is."""
    with pytest.warns(SingleMongoWarning, match="heartbeatFrequencyMS.*at least 500") as caught:
        o = client_options("mongodb://h/?heartbeatFrequencyMS=499")
    assert "499" not in str(caught[0].message)
    assert o.heartbeat_frequency_ms == 60_000
    with pytest.raises(ConfigurationError, match="heartbeat_frequency_ms.*499.*at least 500"):
        client_options("mongodb://h", heartbeat_frequency_ms=499)


@pytest.mark.parametrize("key", ["serverSelectionTryOnce", "server_selection_try_once",
                                 "SERVERSELECTIONTRYONCE"])
def test_keyword_names_any_spelling(key):
    assert client_options("mongodb://h", **{key: False}).server_selection_try_once is False


def test_try_once_uri_and_keyword_conflict_is_an_error():
    with pytest.raises(ConfigurationError, match="serverSelectionTryOnce=false.*conflicts"):
        client_options("mongodb://h/?serverSelectionTryOnce=false", serverSelectionTryOnce=True)
    # Agreeing values are fine.
    assert client_options("mongodb://h/?serverSelectionTryOnce=false",
                          serverSelectionTryOnce=False).server_selection_try_once is False


def test_keyword_overrides_uri():
    o = client_options("mongodb://h/?localThresholdMS=5", localThresholdMS=20)
    assert o.local_threshold_ms == 20


def test_unknown_keyword_is_an_error_naming_it():
    """PyMongo's message, with the nearest option names (issue 19: "did you mean")."""
    with pytest.raises(ConfigurationError, match=r"Unknown option: conectTimeoutMS\. Did you "
                                                 r"mean one of \(connectTimeoutMS"):
        client_options("mongodb://h", conectTimeoutMS=5)


def test_unknown_uri_option_warns_and_is_ignored():
    with pytest.warns(SingleMongoWarning, match="'connectMS'"):
        client_options("mongodb://h/?connectMS=5")


def test_repeated_option_warns():
    with pytest.warns(SingleMongoWarning, match="repeated"):
        o = client_options("mongodb://h/?localThresholdMS=5&localThresholdMS=7")
    assert o.local_threshold_ms == 7


def test_load_balanced_rules():
    for uri in ("mongodb://a,b/?loadBalanced=true",
                "mongodb://a/?loadBalanced=true&directConnection=true",
                "mongodb://a/?loadBalanced=true&replicaSet=rs"):
        with pytest.raises(ConfigurationError, match="loadBalanced"):
            client_options(uri)


def test_password_never_in_errors_or_reprs():
    secret = "s3cr%40t"
    with pytest.raises(ConfigurationError) as info:
        client_options(f"mongodb://alice:{secret}@h/?authMechanism=NOPE")
    assert "s3cr" not in str(info.value)
    o = client_options(f"mongodb://alice:{secret}@h/?tlsCertificateKeyFilePassword=kfp")
    assert "s3cr" not in repr(o) and "s3cr" not in str(o.credentials)
    assert "kfp" not in repr(o)
    with pytest.raises(InvalidURI) as info:
        client_options("mongodb://alice:pa:ss@h")
    assert "pa:ss" not in str(info.value)


def test_redact_uri():
    assert redact_uri("mongodb://u:p@h/?proxyPassword=x&w=1") == \
        "mongodb://u:<redacted>@h/?proxyPassword=<redacted>&w=1"
    assert redact_uri("mongodb://u@h") == "mongodb://u@h"


def test_error_messages_name_the_value():
    with pytest.raises(InvalidURI, match="65536"):
        client_options("mongodb://h:65536")
    with pytest.raises(InvalidURI, match="mongodb://"):
        client_options("http://h")
    with pytest.raises(InvalidURI, match="must be a str"):
        client_options(None)


def test_srv_implies_tls_unless_given():
    assert client_options("mongodb+srv://x.y.z").tls is True
    assert client_options("mongodb+srv://x.y.z/?tls=false").tls is False
    assert client_options("mongodb://x.y.z").tls is False


def test_read_preference_from_uri():
    o = client_options("mongodb://h/?readPreference=secondary&readPreferenceTags=dc:ny,rack:1"
                       "&readPreferenceTags=&maxStalenessSeconds=120")
    assert o.read_preference.document() == {
        "mode": "secondary", "tags": [{"dc": "ny", "rack": "1"}, {}], "maxStalenessSeconds": 120}
    with pytest.raises(ConfigurationError, match="primary"):
        client_options("mongodb://h/?readPreferenceTags=dc:ny")


def test_backpressure_options():
    o = client_options("mongodb://h/?maxAdaptiveRetries=0&enableOverloadRetargeting=false")
    assert o.max_adaptive_retries == 0 and o.enable_overload_retargeting is False


def test_no_warning_for_valid_uri():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        client_options("mongodb://u:p@a,b/db?replicaSet=rs&w=majority&appname=x")


def test_repeated_key_with_same_value_still_warns():
    with pytest.warns(SingleMongoWarning, match="repeated"):
        client_options("mongodb://h/?replicaSet=a&replicaSet=a")


def test_deprecated_alias_loses_to_its_replacement_in_any_order():
    for uri in ("mongodb://h/?wtimeout=5&wTimeoutMS=10", "mongodb://h/?wTimeoutMS=10&wtimeout=5"):
        with pytest.warns(SingleMongoWarning):
            assert client_options(uri).wtimeout_ms == 10


def test_empty_values_are_ignored_with_a_warning():
    with pytest.warns(SingleMongoWarning, match="empty value"):
        o = client_options("mongodb://h/?journal=&maxIdleTimeMS=")
    assert o.journal is None and o.max_idle_time_ms is None


def test_tls_and_ssl_agreeing_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert client_options("mongodb://h/?tls=true&ssl=true").tls is True
    with pytest.raises(ConfigurationError, match="conflicting tls and ssl"):
        client_options("mongodb://h/?tls=true&ssl=false")


@pytest.mark.parametrize("pair,conflict", [
    (("tlsInsecure", "tlsAllowInvalidCertificates"), True),
    (("tlsInsecure", "tlsAllowInvalidHostnames"), True),
    (("tlsInsecure", "tlsDisableOCSPEndpointCheck"), True),
    (("tlsInsecure", "tlsDisableCertificateRevocationCheck"), True),
    (("tlsAllowInvalidCertificates", "tlsDisableOCSPEndpointCheck"), True),
    (("tlsAllowInvalidCertificates", "tlsDisableCertificateRevocationCheck"), True),
    (("tlsDisableOCSPEndpointCheck", "tlsDisableCertificateRevocationCheck"), True),
    (("tlsAllowInvalidCertificates", "tlsAllowInvalidHostnames"), False),
    (("tlsAllowInvalidHostnames", "tlsDisableOCSPEndpointCheck"), False),
    (("tlsAllowInvalidHostnames", "tlsDisableCertificateRevocationCheck"), False),
])
def test_tls_conflict_table(pair, conflict):
    uri = f"mongodb://h/?{pair[0]}=true&{pair[1]}=false"
    if conflict:
        with pytest.raises(ConfigurationError, match=pair[0]):
            client_options(uri)
    else:
        client_options(uri)


@pytest.mark.parametrize("text,ok", [("1", True), ("+1", True), ("-12", True), ("007", True),
                                     ("1\n", False), (" 1", False), ("\u0661", False),
                                     ("\u00b2", False), ("", False), ("+", False),
                                     ("1.0", False)])
def test_an_integer_option_is_an_optional_sign_and_ascii_digits(text, ok):
    """Rule (URI options spec: integers in the connection string): a value is an integer when
    it is a sign and ASCII digits only. Before, a regular expression also took a value ending
    in a newline, and digits of other scripts."""
    from singlemongo.options.table import integer
    check = integer(minimum=-100)
    if ok:
        assert check(text) == int(text)
    else:
        with pytest.raises(ValueError, match="must be an integer"):
            check(text)


@pytest.mark.parametrize("uri", ["mongodb://alice@127.0.0.1", "mongodb://%40l%3Ace@h/db"])
def test_a_username_without_a_password_parses_but_the_client_refuses_it(uri):
    """Rule (auth spec, "MongoCredential Properties"; connection string spec, "Username
    without password"): the URI is valid to parse, but the default mechanism negotiates
    SCRAM, which needs a password, so the client refuses it before connecting (as PyMongo),
    rather than sending an empty password and reporting a failed authentication."""
    from singlemongo import MongoClient
    assert client_options(uri).credentials.password is None
    with pytest.raises(ConfigurationError, match="without a password.*set authMechanism"):
        MongoClient(uri)
    x509 = "mongodb://CN%3Dme@h/?authMechanism=MONGODB-X509&tls=true&tlsCAFile=/nonexistent"
    assert client_options(x509).credentials.mechanism == "MONGODB-X509"


# Credential keywords, and what PyMongo's client makes of them (the oracle, below).
CREDENTIAL_KEYWORDS = [
    ("mongodb://h", {"username": ""}), ("mongodb://h", {"username": "", "password": ""}),
    ("mongodb://h", {"username": "", "password": "x"}), ("mongodb://h", {"password": "x"}),
    ("mongodb://u:p@h", {"username": ""}), ("mongodb://u:p@h", {"username": "v"}),
    ("mongodb://h/db", {"username": "", "authSource": "x"}),
    ("mongodb://h", {"username": "u", "password": "p"}),
]


def _pymongo_credentials(uri, keywords):
    import pymongo
    client = pymongo.MongoClient(uri, connect=False, **keywords)
    creds = client.options.pool_options._credentials
    return creds and (creds.username, creds.password, creds.source)


@pytest.mark.parametrize("uri,keywords", CREDENTIAL_KEYWORDS)
def test_credential_keywords_mean_what_they_mean_to_pymongo(uri, keywords):
    """Rule (PyMongo, the oracle): ``username=""`` is no username, as PyMongo's client takes
    it: no credentials without an authMechanism (a password beside it is ignored), and it
    overrides the connection string's user. mongodb-migrations passes its configuration's
    empty defaults (``username="", password=""``); singlemongo refused them before."""
    from singlemongo import MongoClient
    creds = MongoClient(uri, **keywords)._topology.options.credentials
    ours = creds and (creds.username, str.__str__(creds.password), creds.source)
    assert ours == _pymongo_credentials(uri, keywords)


@pytest.mark.parametrize("uri,keywords", [("mongodb://u:@h", {}),
                                          ("mongodb://h", {"username": "u", "password": ""}),
                                          ("mongodb://u:@h/?authMechanism=SCRAM-SHA-1", {})])
def test_an_empty_password_for_scram_is_refused_before_connecting(uri, keywords):
    """Rule (bad input gets a clear error): SCRAM cannot use an empty password. PyMongo raises
    ValueError("password can't be empty") at the first operation; singlemongo raises its
    ConfigurationError (a ValueError) before connecting, where it refuses a missing password,
    instead of sending it and reporting a failed authentication (it did before)."""
    from singlemongo import MongoClient
    with pytest.raises(ConfigurationError, match="password is empty"):
        MongoClient(uri, **keywords)
    assert client_options(uri, **keywords).credentials.password == ""  # parses, as the spec


# PyMongo's keywords that take None, and what None means there: no timeout for the two
# timeouts ("0 or None means no timeout"), the codec's default for document_class and tz_aware,
# no maximum for maxPoolSize (read back as None).
NONE_MEANS = {"connectTimeoutMS": 0, "socketTimeoutMS": 0, "document_class": dict,
              "tz_aware": False, "maxPoolSize": None}


@pytest.mark.parametrize("name", sorted(set(OPTIONS) - {"connect"}))
def test_a_keyword_set_to_none_means_what_pymongo_says_or_is_refused_by_name(name):
    """Rule (bad input gets a clear error naming the option and the value): a keyword given
    as None (kombu passes connectTimeoutMS=None) is the option's default where that is None,
    what PyMongo makes of None where it takes one, and otherwise a ConfigurationError naming
    the option, never None put in place of a default for the engine to trip over later
    (before: connectTimeoutMS=None failed the first operation with a TypeError from deep
    inside, and uuidRepresentation=None raised KeyError)."""
    from singlemongo.options.table import NONE_REFUSED_TYPE, NONE_REFUSED_VALUE
    opt = OPTIONS[name]
    if (opt.default is None or name in NONE_MEANS) and \
            name not in NONE_REFUSED_TYPE | NONE_REFUSED_VALUE:  # refused by PyMongo too
        options = client_options("mongodb://h", **{name: None})
        assert options.values[name] == NONE_MEANS.get(name, opt.default)
    else:
        with pytest.raises(ConfigurationError, match=f"option {name}: (None|'<redacted>')"):
            client_options("mongodb://h", **{name: None})


def test_connect_timeout_none_runs_operations_without_a_connect_timeout():
    """Rule: connectTimeoutMS=None (as kombu's MongoDB transport passes it) is PyMongo's "no
    timeout": the client connects and runs a command (before: TypeError at the first one)."""
    from singlemongo import MongoClient
    from singlemongo.testing import Standalone
    with Standalone() as sa:
        client = MongoClient(sa.uri, connectTimeoutMS=None, socketTimeoutMS=None)
        try:
            assert client.admin.command("ping")["ok"] == 1
            assert client.options.pool_options.connect_timeout is None
        finally:
            client.close()


def test_the_port_argument_is_the_default_port_of_a_connection_strings_hosts():
    """Rule (PyMongo's MongoClient and parse_uri): ``MongoClient(uri, port)`` connects hosts
    the connection string gives without a port to ``port``; a host with its own port keeps
    it. Before, the port was ignored and the client silently went to 27017 (and
    ``pymongo.uri_parser.parse_uri(uri, default_port)`` ignored its default_port)."""
    from singlemongo import MongoClient, uri_parser
    client = MongoClient("mongodb://a,b:2", 5, connect=False)
    assert client._settings.seeds == (("a", 5), ("b", 2))
    assert MongoClient("mongodb://a", connect=False)._settings.seeds == (("a", 27017),)
    assert uri_parser.parse_uri("mongodb://a,[::1],b:2", 7)["nodelist"] == [
        ("a", 7), ("::1", 7), ("b", 2)]


@pytest.mark.parametrize("port", [0, -1, 65536, 123456789])
def test_a_port_argument_out_of_range_fails_at_the_first_operation_naming_it(port):
    """Accept what PyMongo accepts: ``MongoClient("127.0.0.1", port)`` with a port no server
    can have is made (pymongoarrow and PyMongo's own suite make one), and the first operation
    fails, naming the address. Before: refused in the constructor; earlier still, 0 went to
    27017 without a word."""
    import pymongo
    from singlemongo import MongoClient, errors
    pymongo.MongoClient("127.0.0.1", port, connect=False).close()
    client = MongoClient("127.0.0.1", port, serverSelectionTimeoutMS=200)
    with pytest.raises(errors.ServerSelectionTimeoutError, match=f"127.0.0.1:{port}"):
        client.admin.command("ping")
    client.close()


@pytest.mark.parametrize("keywords", [{"ssl": True, "tls": False}, {"j": True, "journal": False},
                                      {"wtimeout": 5, "wTimeoutMS": 6}])
def test_two_keywords_for_one_option_that_disagree_are_refused(keywords):
    """Rule (connection string spec: conflicting tls and ssl are an error; a keyword is never
    silently dropped): two spellings of one option given as keywords with different values
    raise ConfigurationError naming both. Before, the last one won without a word."""
    with pytest.raises(ConfigurationError, match="conflicting"):
        client_options("mongodb://h", **keywords)
    same = dict.fromkeys(keywords, list(keywords.values())[0])
    client_options("mongodb://h", **same)  # the same value twice is no conflict


def test_two_casings_of_one_keyword_the_last_wins_as_in_pymongo():
    """Rule (PyMongo's options are a case-insensitive dict): mongoengine passes a connection
    string's ``uuidrepresentation`` and its caller's ``uuidRepresentation`` together, and the
    caller's (the last) must win, as with PyMongo (mongoengine's own test says so)."""
    options = client_options("mongodb://h", uuidrepresentation="csharpLegacy",
                             uuidRepresentation="javaLegacy")
    assert options.values["uuidRepresentation"] == "javaLegacy"


@pytest.mark.parametrize("uri, keywords", [
    ("mongodb://h/?tz_aware=true&connect=false", {}),
    ("mongodb://h/?fsync=true&waitQueueMultiple=4", {}),
    ("mongodb://h", {"fsync": True, "w": 2, "waitQueueMultiple": 4}),
    ("mongodb://h/?w=majority", {"fsync": False})])
def test_pymongos_own_options_mean_what_they_mean_in_pymongo(uri, keywords):
    """Rule (PyMongo, the oracle: its MongoClient reads connect, tz_aware, fsync and
    waitQueueMultiple from a connection string and as keywords): ``tz_aware=true`` in a
    connection string gives timezone-aware datetimes, ``fsync`` goes in the write concern,
    waitQueueMultiple is accepted and has no effect (PyMongo 4 ignores it too). Before,
    tz_aware in a connection string was ignored with a warning (naive datetimes), and fsync
    and waitQueueMultiple were unknown options."""
    import pymongo
    from singlemongo import MongoClient
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours = MongoClient(uri, **keywords)
    theirs = pymongo.MongoClient(uri, connect=False, **keywords)
    assert ours.codec_options.tz_aware == theirs.codec_options.tz_aware
    assert ours.write_concern.document == theirs.write_concern.document
    assert ours.options.write_concern.document == theirs.options.write_concern.document
    theirs.close()


def test_fsync_and_journal_together_are_refused_as_in_pymongo():
    """Rule (read/write concern spec, "FSync": fsync is treated like journal; PyMongo: "Can't
    set both j and fsync"): the client refuses both when it is made, not at the first write."""
    from singlemongo import MongoClient
    with pytest.raises(ConfigurationError, match="j and fsync"):
        MongoClient("mongodb://h/?journal=true", fsync=True)
