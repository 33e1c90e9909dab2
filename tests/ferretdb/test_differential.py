"""The differential property tests (tests/test_differential.py and
tests/test_differential_commands.py) with FerretDB as the server: the same generated
arguments given to PyMongo and to singlemongo on one FerretDB instance, the results or errors
(class, code, labels), the commands sent and the collection afterwards equal. What FerretDB
does not implement fails the same way for both drivers, so it is compared too."""
import inspect

import pytest
from hypothesis import reject

from .. import test_differential, test_differential_commands
from ..test_differential import _Side


class _FerretSide(_Side):
    """A side whose examples with a w:0 write are not compared: FerretDB answers a message
    sent with moreToCome, and the drivers read that stray answer differently
    (tests/ferretdb/unsupported.py, MORE_TO_COME)."""

    def run(self, call, seed):
        outcome = super().run(call, seed)
        if any((body.get("writeConcern") or {}).get("w") == 0
               for _, body in self.recorder.commands):
            reject()
        return outcome



@pytest.fixture(scope="module")
def sides(ferretdb_deployment):
    pair = (_FerretSide("pymongo", ferretdb_deployment),
            _FerretSide("singlemongo", ferretdb_deployment))
    yield pair
    for side in pair:
        side.client.close()


def _server_tests(module):
    """The module's tests that talk to a server (they take ``sides``)."""
    return {name: test for name, test in vars(module).items() if name.startswith("test_")
            and "sides" in inspect.signature(getattr(test, "hypothesis", test).inner_test
                                             if hasattr(test, "hypothesis") else test).parameters}


for _name, _test in {**_server_tests(test_differential),
                     **_server_tests(test_differential_commands)}.items():
    globals()[_name] = _test
