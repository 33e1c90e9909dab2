"""A WSGI app: each worker process (and thread) reuses one client through ``get_client()``,
created on the first request and never shared between threads or across a fork.

    MONGODB_URI=mongodb://localhost/shop gunicorn wsgi_app:application
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable, Iterable
from urllib.parse import parse_qs

from singlemongo import get_client

StartResponse = Callable[[str, list[tuple[str, str]]], Any]


def application(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
    """GET /visits?page=NAME counts a visit to a page and answers the running total."""
    page = parse_qs(environ.get("QUERY_STRING", "")).get("page", ["home"])[0]
    client = get_client(os.environ.get("MONGODB_URI", "mongodb://localhost/shop"))
    counters = client.get_database().visits
    counters.update_one({"_id": page}, {"$inc": {"n": 1}}, upsert=True)
    doc = counters.find_one({"_id": page})
    body = json.dumps({"page": page, "visits": doc["n"] if doc else 0}).encode()
    start_response("200 OK", [("Content-Type", "application/json"),
                              ("Content-Length", str(len(body)))])
    return [body]
