"""Sphinx configuration of singlemongo's documentation site (``make docs``).

The guides are Markdown (MyST); the API reference is autodoc over the docstrings. The build
runs with warnings as errors in ``make test`` (``tests/test_docs.py``), and every code example
of the guides runs there too (Sybil, ``docs/conftest.py``).

Links to Python's and PyMongo's documentation go through intersphinx inventories written from
``external_names.py`` at build time: this machine and CI have no network beyond the package
registries, so the published inventories cannot be fetched during a build.
"""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import external_names  # noqa: E402
import singlemongo  # noqa: E402

project = "singlemongo"
author = "the singlemongo authors"
copyright = "2026, the singlemongo authors"
release = singlemongo.__version__
version = release

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.intersphinx"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "bench"]
root_doc = "index"

myst_enable_extensions = ["colon_fence", "deflist"]
# Every heading up to level 3 gets an anchor, so "[x](failures.md#timeouts)" is checked.
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_default_options = {"members": True, "show-inheritance": True}

intersphinx_mapping = external_names.mapping(HERE / "_build" / "inventories")

html_theme = "furo"
html_title = f"singlemongo {release}"
html_static_path = []
nitpicky = False
