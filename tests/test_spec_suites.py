"""Every official JSON suite file, each case a pytest item named by the file's path."""
import pytest

from . import spec_dns, spec_sdam, spec_selection, spec_uri
from .spec_files import NOT_APPLICABLE, collect, revision_difference

ITEMS = [item for item in collect() if item[2] != "unified"]  # test_unified.py runs those


def _run(path, fmt, case):
    if fmt in NOT_APPLICABLE:
        pytest.skip(f"{fmt}: {NOT_APPLICABLE[fmt]}")
    reason = revision_difference(case)
    if reason:
        pytest.skip(f"the seed revision differs: {reason}")
    if fmt in ("sdam", "sdam-monitoring"):
        spec_sdam.run_file(case)
    elif fmt == "selection":
        spec_selection.run_selection(case)
    elif fmt == "rtt":
        spec_selection.run_rtt(case)
    elif fmt == "uri":
        spec_uri.run_case(case)
    elif fmt == "credential-disclosure":
        spec_uri.run_disclosure_case(case)
    elif fmt == "dns-seedlist":
        spec_dns.run_file(path, case)
    else:
        pytest.fail(f"{path}: format not recognised ({fmt}): the runner must learn it")


def test_spec_suites_found():
    assert ITEMS, "no spec files found: set SINGLEMONGO_SPEC_TESTS or put ../shared beside the checkout"


@pytest.mark.parametrize("path,fmt,case", [i[1:] for i in ITEMS], ids=[i[0] for i in ITEMS])
def test_spec(path, fmt, case):
    _run(path, fmt, case)
