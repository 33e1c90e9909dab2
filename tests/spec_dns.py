"""Runner for the DNS seedlist suite: a fake resolver serving the records the suite's README
lists, then one scan of a simulated deployment through the pure SDAM core.

The deployment the suite's README prescribes depends on the directory a file sits in
(replica set "repl0" on localhost:27017-27019, mongoses on 27017-27018, or load balancers);
a file elsewhere gets a load balancer if its options say so and the replica set otherwise.
"""
import pathlib
import random
import warnings

import pytest

from singlemongo.options.client_options import client_options
from singlemongo.errors import SingleMongoError
from singlemongo.sdam import ServerDescription, ServerType, TopologyDescription, format_address
from singlemongo.options.srv import resolve_seedlist
from singlemongo.testing import FakeResolver

from .spec_uri import check_options

RECORDS = pathlib.Path(__file__).resolve().parent.parent / "fixtures" / "dns_seedlist_records.json"
RS_MEMBERS = [f"localhost:{port}" for port in (27017, 27018, 27019)]


def _hello(kind, port):
    if kind == "sharded":
        return {"ok": 1, "msg": "isdbgrid", "maxWireVersion": 21}
    return {"ok": 1, "setName": "repl0", "hosts": RS_MEMBERS, "me": f"localhost:{port}",
            "isWritablePrimary": port == 27017, "secondary": port != 27017,
            "maxWireVersion": 21}


def scan(options, kind):
    td = TopologyDescription.from_options(options)
    if options.load_balanced:
        return td.update(ServerDescription(options.seeds[0], ServerType.LOAD_BALANCER))
    checked = set()
    while set(td.servers) - checked:
        address = sorted(set(td.servers) - checked)[0]
        checked.add(address)
        td = td.update(ServerDescription.from_hello(address, _hello(kind, address[1]), 0.0, 0.0))
    return td


def deployment_kind(path, options):
    parts = pathlib.Path(path).parts
    for kind in ("load-balanced", "sharded", "replica-set"):
        if kind in parts:
            return kind
    return "load-balanced" if options.load_balanced else "replica-set"


def resolve(uri):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        options = client_options(uri)
        return resolve_seedlist(options, FakeResolver.from_file(RECORDS),
                                random.Random(0).shuffle)


def run_file(path, doc):
    if doc.get("error"):
        with pytest.raises(SingleMongoError):
            resolve(doc["uri"])
        return
    options = resolve(doc["uri"])
    seeds = sorted(format_address(s) for s in options.seeds)
    if "seeds" in doc:
        assert seeds == sorted(doc["seeds"])
    if "numSeeds" in doc:
        assert len(seeds) == doc["numSeeds"]
    if doc.get("options"):
        check_options(doc["options"], options)
    parsed = doc.get("parsed_options") or {}
    creds = options.credentials
    for key, actual in (("user", creds and creds.username), ("password", creds and creds.password),
                        ("auth_database", options.database),
                        ("defaultDatabase", options.database)):
        if key in parsed:
            assert actual == parsed[key], f"{key}: expected {parsed[key]!r}, got {actual!r}"
    td = scan(options, deployment_kind(path, options))
    hosts = sorted(format_address(a) for a in td.servers)
    if "hosts" in doc:
        assert hosts == sorted(doc["hosts"])
    if "numHosts" in doc:
        assert len(hosts) == doc["numHosts"]
