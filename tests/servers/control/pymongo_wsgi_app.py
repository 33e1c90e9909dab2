"""examples/wsgi_app.py on PyMongo, as PyMongo's documentation advises: one client per
process, made at import (connected lazily), shared by the process's threads. The app is the
example's own; only the client it gets differs."""
import os
import pathlib
import sys

from pymongo import MongoClient

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "examples"))
import wsgi_app  # noqa: E402 (the example, from the checkout)

client = MongoClient(os.environ["MONGODB_URI"], connect=False)
wsgi_app.get_client = lambda uri, **options: client
application = wsgi_app.application
