#!/usr/bin/env python3
"""examples/cgi_lookup.py with PyMongo: the control of the web servers' measurements."""
import json
import os
import sys
from urllib.parse import parse_qs

from pymongo import MongoClient
from pymongo.errors import ConnectionFailure


def respond(status, body):
    sys.stdout.write(f"Status: {status}\r\nContent-Type: application/json\r\n\r\n")
    sys.stdout.write(json.dumps(body, default=str) + "\n")


def main():
    sku = parse_qs(os.environ.get("QUERY_STRING", "")).get("sku", [""])[0]
    with MongoClient(os.environ["MONGODB_URI"], timeoutMS=2000) as client:
        try:
            product = client.get_database().products.find_one({"sku": sku}, {"_id": 0})
        except ConnectionFailure as exc:
            return respond("503 Service Unavailable", {"error": str(exc)})
    if product is None:
        return respond("404 Not Found", {"error": f"no product {sku!r}"})
    respond("200 OK", product)


if __name__ == "__main__":
    main()
