#!/usr/bin/env python3
"""A CGI script: one product by its SKU, as JSON. The web server runs it once per request;
a one-off query costs one connection and one round trip (no threads, nothing left behind).

    QUERY_STRING="sku=a1" MONGODB_URI=mongodb://localhost/shop python3 cgi_lookup.py
"""
from __future__ import annotations

import json
import os
import sys
from typing import Any
from urllib.parse import parse_qs

from singlemongo import MongoClient
from singlemongo.errors import ConnectionFailure


def respond(status: str, body: dict[str, Any]) -> None:
    sys.stdout.write(f"Status: {status}\r\nContent-Type: application/json\r\n\r\n")
    sys.stdout.write(json.dumps(body, default=str) + "\n")


def main() -> int:
    sku = parse_qs(os.environ.get("QUERY_STRING", "")).get("sku", [""])[0]
    if not sku:
        respond("400 Bad Request", {"error": "the sku parameter is required"})
        return 0
    uri = os.environ.get("MONGODB_URI", "mongodb://localhost/shop")
    # timeoutMS bounds the whole request: a hung server never holds the web server's worker.
    with MongoClient(uri, timeoutMS=2000) as client:
        try:
            product = client.get_database().products.find_one({"sku": sku}, {"_id": 0})
        except ConnectionFailure as exc:
            respond("503 Service Unavailable", {"error": str(exc)})
            return 0
    if product is None:
        respond("404 Not Found", {"error": f"no product {sku!r}"})
    else:
        respond("200 OK", product)
    return 0


if __name__ == "__main__":
    sys.exit(main())
