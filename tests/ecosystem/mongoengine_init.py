"""Stand-in for mongoengine's tests/__init__.py, which its sdist does not ship."""
import os

DOCS_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")
