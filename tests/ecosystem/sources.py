"""Libraries' own test suites, taken from their source distributions on the package index at
the versions pinned in the ``test`` extra (or, where the installed package ships them, from
the installed package), cached under ``.ecosystem/`` (never committed)."""
import io
import pathlib
import shutil
import tarfile
from importlib.metadata import version
from importlib.util import find_spec

from tests.spec_sources import ROOT, download_sdist

CACHE = ROOT / ".ecosystem"
# mongoengine's sdist ships its top-level test files but not tests/__init__.py and
# tests/utils.py, which three of them import: the stand-ins are ours (mongoengine_utils.py).
STAND_INS = {"tests/__init__.py": "mongoengine_init.py", "tests/utils.py": "mongoengine_utils.py"}


def mongoengine_tests():
    """The directory holding mongoengine's ``tests`` package, fetched when missing."""
    name = f"mongoengine-{version('mongoengine')}"
    root = CACHE / name
    if not (root / ".complete").exists():
        data = download_sdist("mongoengine", version("mongoengine"))
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for member in tar.getmembers():
                parts = pathlib.PurePosixPath(member.name).parts
                if member.isfile() and len(parts) > 2 and parts[1] in ("tests", "docs") and \
                        ".." not in parts:
                    target = root.joinpath(*parts[1:])
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(tar.extractfile(member).read())
        here = pathlib.Path(__file__).parent
        for target, source in STAND_INS.items():
            if not (root / target).exists():
                (root / target).write_text((here / source).read_text())
        (root / "pytest.ini").write_text("[pytest]\n")  # its rootdir, not this project's
        (root / ".complete").write_text("extracted by tests/ecosystem/sources.py\n")
    return root


def ming_tests():
    """The directory holding Ming's ``tests`` package: Ming installs it (``ming/tests``)."""
    root = CACHE / f"Ming-{version('Ming')}"
    if not (root / ".complete").exists():
        shutil.rmtree(root, ignore_errors=True)
        installed = pathlib.Path(find_spec("ming").origin).parent / "tests"
        shutil.copytree(installed, root / "tests",
                        ignore=shutil.ignore_patterns("__pycache__"))
        (root / "pytest.ini").write_text("[pytest]\n")  # its rootdir, not this project's
        (root / ".complete").write_text("copied by tests/ecosystem/sources.py\n")
    return root
