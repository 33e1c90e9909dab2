"""The API reference builds from the docstrings without a single warning (issue 18): what
``make docs`` runs, into a temporary directory."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_the_api_reference_builds_without_warnings(tmp_path):
    spec = importlib.util.spec_from_file_location("docs_build", ROOT / "docs" / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    build.build(str(tmp_path))  # raises SystemExit naming every warning pdoc gave
    pages = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.html")}
    for page in ("singlemongo.html", "singlemongo/collection.html", "singlemongo/gridfs.html",
                 "singlemongo/drop_in.html", "singlemongo/uri_parser.html"):
        assert page in pages
    collection = (tmp_path / "singlemongo" / "collection.html").read_text()
    assert "find_raw_batches" in collection and "bulk_write" in collection
