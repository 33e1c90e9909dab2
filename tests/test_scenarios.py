"""Single-threaded behaviour scenarios from fixtures/, under a fake clock and under freezegun."""
import pytest

from .scenarios import files, run_file


@pytest.mark.parametrize("mode", ["fake", "freezegun"])
@pytest.mark.parametrize("path", files(), ids=lambda p: p.name)
def test_scenario(path, mode):
    run_file(path, mode)


def test_scenarios_exist():
    assert len(files()) >= 8
