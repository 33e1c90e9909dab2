"""PyMongo's ``test/`` tree, from the source distribution of the installed PyMongo version on
the package index, cached under ``.pymongo-suite/`` (never committed)."""
import io
import pathlib
import tarfile

from tests.spec_sources import ROOT, download_sdist, pymongo_version

CACHE = ROOT / ".pymongo-suite"
# The suite's own configuration (its pyproject.toml's pytest section), less what writes files
# or needs plugins not installed here: its markers, and warnings as errors but for its list.
PYTEST_INI = """[pytest]
markers =
    auth_aws: tests that rely on pymongo-auth-aws
    auth_oidc: tests that rely on oidc auth
    auth: tests that rely on authentication
    ocsp: tests that rely on ocsp
    atlas_connect: tests that rely on an atlas connection
    sfp: tests that rely on an Atlas Secure Frontend Processor connection
    perf: benchmark tests
    search_index: search index helper tests
    kms: client-side field-level encryption tests using kms
    encryption: encryption tests
    load_balancer: load balancer tests
    mockupdb: tests that rely on mockupdb
    default: default test suite
    default_async: default async test suite
    async: async tests
"""


def pymongo_suite():
    """The directory holding PyMongo's ``test`` package (fetched when missing)."""
    name = f"pymongo-{pymongo_version()}"
    root = CACHE / name
    if not (root / ".complete").exists():
        data = download_sdist("pymongo", pymongo_version())
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for member in tar.getmembers():
                parts = pathlib.PurePosixPath(member.name).parts
                if member.isfile() and len(parts) > 2 and parts[1] == "test" and \
                        ".." not in parts:
                    target = root.joinpath(*parts[1:])
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(tar.extractfile(member).read())
        (root / "pytest.ini").write_text(PYTEST_INI)
        (root / ".complete").write_text("extracted by tests/pymongo_suite/sources.py\n")
    return root
