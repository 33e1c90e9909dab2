"""`singlemongo` / `python -m singlemongo`: one-off queries from the command line.

Input and output are Extended JSON (relaxed by default, canonical with --canonical); many
documents are written as JSON Lines (``watch`` prints each change as it comes, and the
resume token to stderr at the end). Quiet by default; no telemetry. Exit codes:

  0 success   1 internal error   2 usage or unreadable input   3 configuration (URI,
  options, DNS)   4 server selection or connection   5 server error   6 authentication
  130 interrupted (Ctrl-C)   141 the reader of stdout went away (a broken pipe)

No traceback reaches the user: errors are one line on stderr (SINGLEMONGO_DEBUG=1 shows
the traceback of an internal error).
"""
import os
import re
import sys
import warnings
from types import MappingProxyType

from bson import json_util
from bson.json_util import CANONICAL_JSON_OPTIONS, RELAXED_JSON_OPTIONS

from singlemongo.auth import AuthenticationFailed
from singlemongo.client import MongoClient
from singlemongo.errors import (ConfigurationError, ConnectionFailure, InvalidDocument, OperationFailure,
                      ServerSelectionError, SingleMongoError)
from singlemongo.records import replace
from singlemongo.sdam.address import format_address
from singlemongo.cli import arguments, json_input, watch
from singlemongo.cli.json_input import UsageError

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_CONFIG, EXIT_CONNECT = 0, 1, 2, 3, 4
EXIT_SERVER, EXIT_AUTH, EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 5, 6, 130, 141
# Most specific first: AuthenticationFailed is an OperationFailure.
EXIT_CODES = ((AuthenticationFailed, EXIT_AUTH), (ConfigurationError, EXIT_CONFIG),
              (ServerSelectionError, EXIT_CONNECT), (ConnectionFailure, EXIT_CONNECT),
              (OperationFailure, EXIT_SERVER), (InvalidDocument, EXIT_USAGE),
              (SingleMongoError, EXIT_SERVER))


def _namespace(text):
    db, dot, coll = text.partition(".")
    if not dot or not db or not coll:
        raise UsageError(f"expected DATABASE.COLLECTION, not {text!r}")
    return db, coll


class Output:
    def __init__(self, stream, canonical):
        self.stream = stream
        self.options = CANONICAL_JSON_OPTIONS if canonical else RELAXED_JSON_OPTIONS

    def doc(self, value):
        self.stream.write(json_util.dumps(value, json_options=self.options) + "\n")


def _single_seed(options, address):
    values = dict(options.values)
    if not values["loadBalanced"]:
        values["directConnection"] = True
    return replace(options, seeds=(address,), srv_host=None, values=MappingProxyType(values))


def _ping(args, out, opened):
    """A health probe on one connection: each seed in turn, directly, until one answers;
    if none does, one line naming each seed and why."""
    base = MongoClient(args.uri)
    opened.append(base)
    options = base._topology.options
    if options.is_srv:
        base._topology.open()  # resolves the seed list; no connection yet
        options = base._topology.options
    failures = []
    for address in options.seeds:
        client = MongoClient.from_options(_single_seed(options, address))
        opened.append(client)  # --explain explains it; main() closes it
        try:
            reply = client.admin.command("ping")
        except (ServerSelectionError, ConnectionFailure) as exc:
            sd = client.topology_description.servers.get(address)
            failures.append(f"{format_address(address)}: {(sd and sd.error) or _summary(exc)}")
            continue
        sd = client.topology_description.servers[address]
        out.doc({"ok": reply.get("ok"), "server": format_address(address),
                 "type": str(sd.server_type),
                 "rtt_ms": round((sd.round_trip_time or 0) * 1000, 3)})
        return
    raise ServerSelectionError("no seed answered ping: " + ("; ".join(failures) or
                                                           "the connection string names none"))


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
    if not any(s.is_known for s in td.servers.values()):  # nothing answered: not a success
        raise ServerSelectionError(f"no member answered: " + "; ".join(
            f"{format_address(s.address)}: {s.error}" for s in td.servers.values()))


def _filter(args):
    return json_input.loads(args.filter, "--filter") if args.filter is not None else {}


def _delete_filter(args):
    """`delete` deletes only what a filter names: --filter ('{}' for any one document), or
    --many --all for every document."""
    if not args.many and args.filter is None and not args.all:
        raise UsageError("delete without --filter would delete an arbitrary document: give "
                         "--filter ('{}' for any one)")
    if args.all and args.filter is not None:
        raise UsageError("give either --filter or --all, not both")
    if args.all and not args.many:
        raise UsageError("--all deletes every document: it needs --many")
    if args.many and args.filter is None and not args.all:
        raise UsageError("delete --many without --filter would delete every document: give "
                         "--filter, or --all to delete them all")
    return _filter(args)


def _read(coll, args, out):
    if args.action == "find":
        sort = json_input.loads(args.sort, "--sort") if args.sort else None
        projection = json_input.loads(args.projection, "--projection") if args.projection \
            else None
        for doc in coll.find(_filter(args), projection, sort=list(sort.items()) if sort else None,
                             skip=args.skip, limit=args.limit):
            out.doc(doc)
    elif args.action == "find-one":
        out.doc(coll.find_one(_filter(args)))
    elif args.action == "count":
        out.doc(coll.count_documents(_filter(args)))
    elif args.action == "aggregate":
        pipeline = json_input.loads(args.pipeline, "pipeline", list)
        if not all(isinstance(stage, dict) for stage in pipeline):
            raise UsageError("pipeline must be an array of stage objects")
        for doc in coll.aggregate(pipeline):
            out.doc(doc)


def _write(coll, args, stdin, out):
    if args.action == "insert":
        docs = [json_input.loads(d, "document") for d in args.documents] or \
            json_input.documents(stdin)
        # One document is insert_one: a duplicate _id is a DuplicateKeyError, as it says.
        ids = [coll.insert_one(docs[0]).inserted_id] if len(docs) == 1 else \
            coll.insert_many(docs).inserted_ids
        out.doc({"insertedIds": ids})
    elif args.action == "update":
        filt, update = _filter(args), json_input.loads(args.update, "--update", None)
        if not isinstance(update, (dict, list)) or (
                isinstance(update, list) and not all(isinstance(s, dict) for s in update)):
            raise UsageError("--update must be an object of update operators, or a pipeline "
                             "(an array of stage objects)")
        method = coll.update_many if args.many else coll.update_one
        r = method(filt, update, upsert=args.upsert)
        out.doc({"matchedCount": r.matched_count, "modifiedCount": r.modified_count,
                 "upsertedId": r.upserted_id})
    elif args.action == "delete":
        filt = _delete_filter(args)
        r = (coll.delete_many if args.many else coll.delete_one)(filt)
        out.doc({"deletedCount": r.deleted_count})


def _run(args, out, stdin, stderr, opened):
    """Run the subcommand; ``opened`` receives the client so that main() closes it."""
    if args.action == "ping":
        _ping(args, out, opened)
        return
    client = MongoClient(args.uri)
    opened.append(client)
    if args.action == "topology":
        _topology(client, args, out)
    elif args.action == "watch":
        watch.run(client, args, out, stderr)
    elif args.action == "command":
        out.doc(client[args.database].command(json_input.loads(args.command, "command"),
                                              read_preference=args.read_preference))
    else:
        db, name = _namespace(args.namespace)
        coll = client[db][name]
        _read(coll, args, out)
        _write(coll, args, stdin, out)


def _summary(exc):
    """An error's message as one line: a selection error's servers joined to its first line,
    without the hint to wait for the cooldown (a fresh process has none to wait for)."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    kept = [re.sub(r", in cooldown until .*? from now \(last error: (.*)\)$",
                   r", last error: \1", line)
            for line in lines[1:] if not (line.startswith("Hint:") and "cooldown" in line)]
    return "; ".join([lines[0].rstrip(".") if kept else lines[0], *kept])


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


def _quiet_stdout(stdout):
    """After a broken pipe: nothing more reaches the closed pipe, not even the interpreter's
    flush at exit ("Exception ignored ... BrokenPipeError")."""
    try:
        fd = stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def _fail(stderr, message):
    try:
        stderr.write(f"singlemongo: {message}\n")
    except (BrokenPipeError, ValueError):
        pass


def _execute(args, stdout, stderr, stdin):
    """The subcommand's exit status; every failure is one line on stderr."""
    opened = []
    try:
        _run(args, Output(stdout, args.canonical), stdin, stderr, opened)
        stdout.flush()
        return EXIT_OK
    except BrokenPipeError:
        _quiet_stdout(stdout)
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        _fail(stderr, "interrupted")
        return EXIT_INTERRUPTED
    except UsageError as exc:
        _fail(stderr, exc)
        return EXIT_USAGE
    except SingleMongoError as exc:
        _fail(stderr, f"{type(exc).__name__}: {_summary(exc)}")
        return next(code for cls, code in EXIT_CODES if isinstance(exc, cls))
    except Exception as exc:
        if os.environ.get("SINGLEMONGO_DEBUG"):
            raise
        _fail(stderr, f"internal error: {type(exc).__name__}: {json_input.summary(exc)} "
                      f"(SINGLEMONGO_DEBUG=1 shows the traceback; please report it)")
        return EXIT_INTERNAL
    finally:
        if args.explain:
            _explain(opened[-1] if opened else None, stderr)
        for client in opened:
            client.close()


def main(argv=None, stdout=None, stderr=None, stdin=None):
    """Run the command line; returns the exit status (see the module's docstring)."""
    stdout, stderr, stdin = stdout or sys.stdout, stderr or sys.stderr, stdin or sys.stdin
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["serve"]:  # a simulated deployment: python -m singlemongo.testing
        from singlemongo.testing.__main__ import main as serve
        return serve(argv[1:])
    try:
        args = arguments.parser(__doc__).parse_args(argv)
    except arguments.ShowVersion as version:
        stdout.write(f"{version}\n")
        return EXIT_OK
    except SystemExit as exc:
        return exc.code
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.showwarning = lambda message, category, *rest: _fail(
                stderr, f"warning: {' '.join(str(message).split())}")
            return _execute(args, stdout, stderr, stdin)
    except KeyboardInterrupt:  # a second Ctrl-C while closing
        _fail(stderr, "interrupted")
        return EXIT_INTERRUPTED
