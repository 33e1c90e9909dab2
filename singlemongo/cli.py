"""`singlemongo` / `python -m singlemongo`: one-off queries from the command line.

Input and output are Extended JSON (relaxed by default, canonical with --canonical); many
documents are written as JSON Lines. Quiet by default; no telemetry. Exit codes:

  0 success   2 usage or unreadable input   3 configuration (URI, options, DNS)
  4 server selection or connection   5 server error   6 authentication
"""
import argparse
import os
import sys
from .records import replace
from types import MappingProxyType

from bson import json_util
from bson.json_util import CANONICAL_JSON_OPTIONS, RELAXED_JSON_OPTIONS

from .auth import AuthenticationFailed
from .client import MongoClient
from .errors import (ConfigurationError, ConnectionFailure, InvalidDocument, OperationFailure,
                     ServerSelectionError, SingleMongoError)
from .sdam.address import format_address

EXIT_OK, EXIT_USAGE, EXIT_CONFIG, EXIT_CONNECT, EXIT_SERVER, EXIT_AUTH = 0, 2, 3, 4, 5, 6
# Most specific first: AuthenticationFailed is an OperationFailure.
EXIT_CODES = ((AuthenticationFailed, EXIT_AUTH), (ConfigurationError, EXIT_CONFIG),
              (ServerSelectionError, EXIT_CONNECT), (ConnectionFailure, EXIT_CONNECT),
              (OperationFailure, EXIT_SERVER), (InvalidDocument, EXIT_USAGE),
              (SingleMongoError, EXIT_SERVER))


class UsageError(Exception):
    pass


def _json(text, what):
    try:
        return json_util.loads(text)
    except ValueError as exc:
        raise UsageError(f"{what} is not valid Extended JSON: {exc}") from None


def _namespace(text):
    db, dot, coll = text.partition(".")
    if not dot or not db or not coll:
        raise UsageError(f"expected DATABASE.COLLECTION, not {text!r}")
    return db, coll


def _parser():
    p = argparse.ArgumentParser(prog="singlemongo", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=__doc__.split("\n\n", 1)[1])
    p.add_argument("--uri", default=os.environ.get("MONGODB_URI", "mongodb://localhost"),
                   help="connection string (default: $MONGODB_URI or mongodb://localhost)")
    p.add_argument("--canonical", action="store_true", help="canonical Extended JSON output")
    p.add_argument("--explain", action="store_true",
                   help="print what the scanner and selector did, to stderr")
    sub = p.add_subparsers(dest="action", required=True, metavar="COMMAND")

    def ns_command(name, help_text, filter_arg=True):
        c = sub.add_parser(name, help=help_text)
        c.add_argument("namespace", metavar="DB.COLLECTION")
        if filter_arg:
            c.add_argument("--filter", default="{}", help="query filter (Extended JSON)")
        return c

    c = ns_command("find", "documents matching a filter, as JSON Lines")
    c.add_argument("--projection")
    c.add_argument("--sort")
    c.add_argument("--limit", type=int, default=0)
    c.add_argument("--skip", type=int, default=0)
    ns_command("find-one", "the first document matching a filter, or null")
    ns_command("count", "how many documents match a filter")
    c = ns_command("insert", "insert documents given as arguments or on stdin", False)
    c.add_argument("documents", nargs="*", help="documents; none: read JSON Lines or an array from stdin")
    c = ns_command("update", "update documents matching a filter")
    c.add_argument("--update", required=True, help="update operators, e.g. '{\"$set\": {...}}'")
    c.add_argument("--many", action="store_true")
    c.add_argument("--upsert", action="store_true")
    c = ns_command("delete", "delete documents matching a filter")
    c.add_argument("--many", action="store_true")
    c = ns_command("aggregate", "run a pipeline, output as JSON Lines", False)
    c.add_argument("pipeline", help="the pipeline, a JSON array")
    c = sub.add_parser("command", help="run a database command")
    c.add_argument("database")
    c.add_argument("command", help="the command document, e.g. '{\"buildInfo\": 1}'")
    c.add_argument("--read-preference", default=None)
    sub.add_parser("ping", help="health probe: ping the first seed that answers (one connection)")
    c = sub.add_parser("topology", help="scan and show the discovered topology")
    c.add_argument("--json", action="store_true")
    return p


class Output:
    def __init__(self, stream, canonical):
        self.stream = stream
        self.options = CANONICAL_JSON_OPTIONS if canonical else RELAXED_JSON_OPTIONS

    def doc(self, value):
        self.stream.write(json_util.dumps(value, json_options=self.options) + "\n")


def _stdin_documents(stdin):
    text = stdin.read().strip()
    if not text:
        raise UsageError("no documents given, and nothing on stdin")
    if text.startswith("["):
        return _json(text, "stdin")
    return [_json(line, f"stdin line {i}") for i, line in enumerate(text.splitlines(), 1)
            if line.strip()]


def _single_seed(options, address):
    values = dict(options.values)
    if not values["loadBalanced"]:
        values["directConnection"] = True
    return replace(options, seeds=(address,), srv_host=None, values=MappingProxyType(values))


def _ping(args, out):
    """A health probe on one connection: each seed in turn, directly, until one answers."""
    base = MongoClient(args.uri)
    options = base.options
    if options.is_srv:
        base._topology.open()  # resolves the seed list; no connection yet
        options = base._topology.options
    last = None
    for address in options.seeds:
        client = MongoClient.from_options(_single_seed(options, address))
        try:
            reply = client.admin.command("ping")
            sd = client.topology_description.servers[address]
            out.doc({"ok": reply.get("ok"), "server": format_address(address),
                     "type": str(sd.server_type),
                     "rtt_ms": round((sd.round_trip_time or 0) * 1000, 3)})
            return client
        except (ServerSelectionError, ConnectionFailure) as exc:
            last = exc
            client.close()
    raise last or ServerSelectionError("the connection string names no seed to ping")


def _topology(client, args, out):
    topology = client._topology
    topology.open()
    topology.scan()
    td = client.topology_description
    if args.json:
        out.doc({"topologyType": str(td.topology_type), "setName": td.set_name, "servers": [
            {"address": format_address(s.address), "type": str(s.server_type),
             "rtt_ms": round(s.round_trip_time * 1000, 3) if s.round_trip_time else None,
             "setName": s.set_name, "tags": dict(s.tags), "error": s.error}
            for s in td.servers.values()]})
    else:
        out.stream.write(td.summary() + "\n")


def _run(args, out, stdin):
    if args.action == "ping":
        return _ping(args, out)
    client = MongoClient(args.uri)
    if args.action == "topology":
        _topology(client, args, out)
        return client
    if args.action == "command":
        out.doc(client[args.database].command(_json(args.command, "command"),
                                              read_preference=args.read_preference))
        return client
    db, name = _namespace(args.namespace)
    coll = client[db][name]
    filt = _json(args.filter, "--filter") if hasattr(args, "filter") else None
    if args.action == "find":
        cursor = coll.find(filt, _json(args.projection, "--projection") if args.projection else None,
                           list(_json(args.sort, "--sort").items()) if args.sort else None,
                           skip=args.skip, limit=args.limit)
        for doc in cursor:
            out.doc(doc)
    elif args.action == "find-one":
        out.doc(coll.find_one(filt))
    elif args.action == "count":
        out.doc(coll.count_documents(filt))
    elif args.action == "insert":
        docs = [_json(d, "document") for d in args.documents] or _stdin_documents(stdin)
        out.doc({"insertedIds": coll.insert_many(docs).inserted_ids})
    elif args.action == "update":
        method = coll.update_many if args.many else coll.update_one
        r = method(filt, _json(args.update, "--update"), upsert=args.upsert)
        out.doc({"matchedCount": r.matched_count, "modifiedCount": r.modified_count,
                 "upsertedId": r.upserted_id})
    elif args.action == "delete":
        r = (coll.delete_many if args.many else coll.delete_one)(filt)
        out.doc({"deletedCount": r.deleted_count})
    elif args.action == "aggregate":
        for doc in coll.aggregate(_json(args.pipeline, "pipeline")):
            out.doc(doc)
    return client


def _explain(client, err):
    if client is None:
        return
    topology = client._topology
    err.write(f"explain: {topology.scan_count} scan(s), {topology.connections_opened} "
              f"connection(s) opened\n")
    for scan, address, server_type, error in topology.scanner.history:
        err.write(f"explain: scan {scan}: checked {format_address(address)} -> {server_type}"
                  + (f" ({error})" if error else "") + "\n")
    err.write("explain: " + topology.description.summary().replace("\n", "\nexplain: ") + "\n")


def main(argv=None, stdout=None, stderr=None, stdin=None):
    stdout, stderr, stdin = stdout or sys.stdout, stderr or sys.stderr, stdin or sys.stdin
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code
    out = Output(stdout, args.canonical)
    client = None
    try:
        client = _run(args, out, stdin)
        return EXIT_OK
    except UsageError as exc:
        stderr.write(f"singlemongo: {exc}\n")
        return EXIT_USAGE
    except SingleMongoError as exc:
        stderr.write(f"singlemongo: {type(exc).__name__}: {exc}\n")
        return next(code for cls, code in EXIT_CODES if isinstance(exc, cls))
    finally:
        if args.explain:
            _explain(client, stderr)
        if client is not None:
            client.close()
