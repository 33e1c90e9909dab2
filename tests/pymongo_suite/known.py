"""PyMongo's tests that cannot pass on singlemongo, each with its reason. Filled from the
comparison (``compare.py``); a test is listed here only after reading why it fails.

- ``INTERNALS``: the test reads or patches a PyMongo internal (named), which singlemongo does
  not have and will not grow to please a test.
- ``DIFFERENCES``: a deliberate difference, each a line of README "Differences from PyMongo".
- ``CONTROL_FAILS``: PyMongo itself fails on the simulator, with the cause (issue 48)."""

INTERNALS: dict = {}
_PLUS = ("'+' in a connection string is a plus sign, as the connection string spec says "
         "(its 'Subdelimiters in user/pass' test); PyMongo decodes it as a space")
DIFFERENCES: dict = {
    "test/test_uri_parser.py::TestURI::test_special_chars": _PLUS,
    "test/test_uri_parser.py::TestURI::test_unquote_during_parsing": _PLUS,
    "test/test_uri_parser.py::TestURI::test_validate_userinfo": _PLUS,
    "test/test_uri_parser.py::TestURI::test_do_not_include_password_in_port_message":
        "mongodb://user:1234/@host is refused as ambiguous (a password with a '/' may be "
        "anywhere in it; nothing of it is quoted); PyMongo reads host 'user', port 1234",
    "test/test_client.py::TestClient::test_constants":
        "a port outside 1..65535 (MongoClient.PORT = 123456789) is refused when the client is "
        "made; PyMongo fails when it connects",
}
CONTROL_FAILS: dict = {}


def known_reason(test):
    """Why ``test`` may fail on singlemongo, or None. A key ending in ``::`` covers a class."""
    for table in (INTERNALS, DIFFERENCES):
        if test in table:
            return table[test]
        for key, reason in table.items():
            if key.endswith("::") and test.startswith(key):
                return reason
    return None
