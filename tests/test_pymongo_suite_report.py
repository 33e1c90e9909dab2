"""The report of ``make pymongo-suite`` on PyMongo's own results (issue 48): each failure of
PyMongo on the simulator comes with its cause, or is flagged as unexplained; each skip with
the reason PyMongo's suite gives."""
import pytest

from tests.pymongo_suite.compare import report_control
from tests.pymongo_suite.known import TIMING, control_reason


def test_each_machine_cause_covers_its_tests_and_nothing_else():
    assert "container" in control_reason("test/test_client.py::TestClient::test_handshake_04_vercel")
    assert "SRV" in control_reason(
        "test/test_uri_spec.py::TestAllScenarios::test_test_uri_options_srv-options_SRV_URI_with_srvMaxHosts")
    assert control_reason("test/test_client.py::TestClient::test_list_databases") is None


def test_the_report_explains_failures_and_flags_the_rest(capsys):
    control = {"test/test_client.py::ClientUnitTest::test_metadata": "failed",
               "test/test_cursor.py::TestCursor::test_where": "failed",
               "test/test_client.py::TestClient::test_ipv6": "skipped",
               "test/test_bulk.py::TestBulk::test_ok": "passed"}
    messages = {"test/test_cursor.py::TestCursor::test_where": "E AssertionError",
                "test/test_client.py::TestClient::test_ipv6": "No IPv6"}
    unexplained = report_control(control, messages)
    out = capsys.readouterr().out
    assert unexplained == ["test/test_cursor.py::TestCursor::test_where"]
    assert "failures on the simulator: 2, of which 1 not explained" in out and "NOT EXPLAINED: E AssertionError" in out
    assert "test_ipv6: No IPv6" in out and "test_ok" not in out


@pytest.mark.parametrize("test", sorted(TIMING))
def test_a_timing_test_is_known_for_either_driver_never_a_regression(test):
    """A test that fails now and then for either driver (a wall-clock test the machine's load
    fails, a reply FerretDB words differently from one call to the next: with PyMongo in one
    run, with singlemongo in another) is reported with that cause and does not fail the
    gate, whichever driver it failed with."""
    from tests.pymongo_suite.compare import compare
    rows, regressions, known = compare({test: "passed"}, {test: "failed"})
    assert regressions == [] and known[test] == TIMING[test]
    assert control_reason(test) == TIMING[test]


def test_on_ferretdb_a_failure_is_explained_by_what_its_message_shows():
    """PyMongo's own failures on FerretDB: each row of FERRETDB_CONTROL explains the message
    it names; a failure whose message shows none of them keeps the simulator's cause (no
    DNS) or is not explained."""
    from tests.pymongo_suite.known import FERRETDB_CONTROL
    test = "test/test_bulk.py::TestBulk::test_x"
    for text, cause in FERRETDB_CONTROL:
        assert control_reason(test, f"E OperationFailure: {text} here", "ferretdb") == cause
    assert control_reason(test, "E AssertionError: 2 != 1", "ferretdb") is None
    assert control_reason(test, "E OperationFailure: is not implemented") is None  # simulator
    assert "container" in control_reason(
        "test/test_client.py::TestClient::test_handshake_04_vercel", "E mismatch", "ferretdb")
