"""examples/wsgi_app.py on PyMongo, as PyMongo's documentation advises: one client per
process, made at import (connected lazily), shared by the process's threads. The app is the
example's own; only the client it gets differs."""
import os
import pathlib
import sys

from pymongo import MongoClient

# The example from the checkout, or the copy beside this file where a server runs a copy.
here = pathlib.Path(__file__).resolve().parent
sys.path[:0] = [str(here), str(here.parent.parent.parent / "examples")]
import wsgi_app  # noqa: E402 (the example, from the checkout)

client = MongoClient(os.environ["MONGODB_URI"], connect=False)
wsgi_app.get_client = lambda uri, **options: client
application = wsgi_app.application
