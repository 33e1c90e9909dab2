"""The documentation site builds as ``make docs`` builds it, with warnings as errors: a broken
internal link, a missing anchor, an unresolved reference or a docstring docutils cannot read
fails the build (issue 49). The examples themselves run through Sybil (``conftest.py``)."""
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
GUIDES = ["getting-started", "coming-from-pymongo", "process-per-request", "testing", "cli",
          "failures", "security", "performance", "conformance"]


def start_build():
    """Start building the site in a process of its own: (output directory, process). The
    test run starts it when it collects these tests, so it builds beside the other tests."""
    out = tempfile.mkdtemp(prefix="singlemongo-site-")
    process = subprocess.Popen([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q",
                                "-E", "-j", "2", "-b", "html", str(ROOT / "docs"), out],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return out, process


@pytest.fixture(scope="module")
def site(request):
    out, process = getattr(request.config, "singlemongo_site_build", None) or start_build()
    _, errors = process.communicate(timeout=240)
    assert process.returncode == 0, f"the site's build warned or failed:\n{errors}"
    yield pathlib.Path(out)
    shutil.rmtree(out, ignore_errors=True)


def test_every_guide_and_the_api_reference_are_built(site):
    pages = {p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    for guide in GUIDES + ["index", "changelog", "api/index", "api/collection"]:
        assert f"{guide}.html" in pages
    collection = (site / "api" / "collection.html").read_text()
    for method in ("find", "find_raw_batches", "bulk_write", "create_index",
                   "find_one_and_update", "watch"):  # its parts' methods are the class's
        assert f'id="singlemongo.collection.Collection.{method}"' in collection


def test_the_index_links_every_guide(site):
    index = (site / "index.html").read_text()
    for guide in GUIDES:
        assert f'href="{guide}.html"' in index


def test_references_to_python_and_pymongo_link_to_their_documentation(site):
    """intersphinx, from the inventories conf.py writes (no network during a build)."""
    guide = (site / "process-per-request.html").read_text()
    assert "https://docs.python.org/3/library/os.html#os.fork" in guide
    coming = (site / "coming-from-pymongo.html").read_text()
    assert "https://pymongo.readthedocs.io/en/stable/api/pymongo/mongo_client.html" \
           "#pymongo.mongo_client.MongoClient" in coming


def test_the_performance_guide_shows_the_latest_bench_table(site):
    latest = (ROOT / "docs" / "bench" / "latest.md").read_text()
    first_row = latest.splitlines()[2].split("|")[1].strip()
    assert first_row.split(",")[0] in (site / "performance.html").read_text()


def test_the_readmes_links_point_at_files_of_the_checkout():
    """The README is not part of the site, so its relative links are checked here."""
    readme = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme)
    assert targets, "the README links into the guides"
    for target in targets:
        if not target.startswith("http"):
            assert (ROOT / target).is_file(), f"README links to a missing {target}"


def test_the_readme_is_a_landing_page():
    """Issue 49: at most 250 lines, and no development history in user-facing text."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    for page in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        text = page.read_text()
        for history in (r"\bstop \d+\b", r"\bthis stop\b", r"stops? earlier", r"\bissue \d+"):
            assert not re.search(history, text, re.I), f"{page.name}: {history}"
