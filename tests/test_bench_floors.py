"""The raw floors of ``make bench`` do only what their protocol needs: a module a floor loads
and its path never uses counts against the floor, and flatters the driver's ratio."""
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
HASHING = {"hashlib", "_hashlib", "hmac", "base64", "binascii", "datetime", "ssl"}
# What every floor needs: the socket, the message framing, bson (which loads datetime).
NEEDED = "import socket, struct, bson"


def _modules_after(code):
    """The modules ``code`` loads beyond what every floor needs."""
    out = subprocess.run([sys.executable, "-c", f"import sys\n{NEEDED}\n"
                          "before = set(sys.modules)\n"
                          f"{code}\n"
                          "print('\\n'.join(sorted(set(sys.modules) - before)))"],
                         cwd=BENCH, capture_output=True, text=True, check=True).stdout
    return set(out.split())


@pytest.mark.parametrize("floor", ["floor", "floor_auth"])
def test_a_floor_imports_no_hashing_nor_tls_until_its_path_needs_them(floor):
    """Rule: the plain and TLS floors load no hashing module (SCRAM's and SigV4's floors
    import theirs where they use them), and ssl only when a path connects with TLS."""
    loaded = _modules_after(f"import {floor}")
    assert not loaded & HASHING, sorted(loaded & HASHING)


def test_the_scram_floor_brings_only_what_scram_uses():
    """Rule: SCRAM-SHA-256's floor adds hashlib, hmac and base64, and no TLS until it
    connects."""
    loaded = _modules_after("import floor_auth\n"
                            "floor_auth._scram_final('u', 'p', 'n', 'r=nx,s=c2FsdA==,i=4096')")
    assert {"hashlib", "hmac", "base64"} <= loaded and "ssl" not in loaded
