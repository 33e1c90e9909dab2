"""`singlemongo watch DB[.COLL]`: print each change of a database or a collection, one
Extended JSON document per line, flushed as it comes, until --max-events changes were
printed, --idle-exit seconds passed without one, the stream was invalidated (the collection
or database dropped) or the user pressed Ctrl-C (exit 130).

Whatever ends the run, the last resume token goes to stderr as ``resume token: {...}``: give
it to ``--resume-after`` and a later run continues where this one stopped, missing nothing
the server still has in its oplog. One automatic resume per error is the driver's (a
connection reset, a primary stepping down); an error it cannot resume from ends the run with
its exit code, after the token.
"""
from bson import json_util

from singlemongo.clock import Deadline
from singlemongo.csot import timeout
from singlemongo.errors import PyMongoError
from singlemongo.cli import json_input
from singlemongo.cli.json_input import UsageError

FULL_DOCUMENT = ("updateLookup", "whenAvailable", "required")
MAX_AWAIT_MS = 1000  # how long one getMore waits on the server for a change
# Every wait has a deadline: a getMore (or a resume) the server does not answer within its
# maxAwaitTimeMS and this much more (or the --idle-exit time left) times out; the stream stays
# open and the next call resumes it. Closing the stream (killCursors) is best effort within
# CLOSE_S, so Ctrl-C never waits for a silent server's connectTimeoutMS.
GRACE_S = 10.0
CLOSE_S = 1.0


def add_parser(command):
    """The subcommand's arguments (``command`` makes a subparser with the global flags)."""
    c = command("watch", "print each change of a database or collection, as JSON Lines",
                namespace=False, filter_arg=False)
    c.add_argument("namespace", metavar="DB[.COLLECTION]")
    c.add_argument("--pipeline", help="stages after $changeStream (a JSON array)")
    c.add_argument("--full-document", choices=FULL_DOCUMENT,
                   help="updateLookup: updates carry the whole document")
    c.add_argument("--resume-after", metavar="TOKEN",
                   help="continue after this resume token (as a previous run printed it)")
    c.add_argument("--max-events", type=int, metavar="N", help="exit 0 after N changes")
    c.add_argument("--idle-exit", type=float, metavar="SECONDS",
                   help="exit 0 after SECONDS without a change")


def _options(args):
    if args.max_events is not None and args.max_events < 1:
        raise UsageError(f"--max-events must be at least 1, not {args.max_events}")
    if args.idle_exit is not None and not args.idle_exit > 0:
        raise UsageError(f"--idle-exit must be a number of seconds above 0, not "
                         f"{args.idle_exit}")
    pipeline = json_input.loads(args.pipeline, "--pipeline", list) if args.pipeline else []
    if not all(isinstance(stage, dict) for stage in pipeline):
        raise UsageError("--pipeline must be an array of stage objects")
    token = json_input.loads(args.resume_after, "--resume-after") if args.resume_after \
        else None
    wait_ms = MAX_AWAIT_MS
    if args.idle_exit is not None:
        wait_ms = max(1, min(wait_ms, int(args.idle_exit * 1000)))
    return {"pipeline": pipeline, "full_document": args.full_document, "resume_after": token,
            "max_await_time_ms": wait_ms}


def _target(client, namespace):
    db, dot, coll = namespace.partition(".")
    if not db or (dot and not coll):
        raise UsageError(f"expected DATABASE or DATABASE.COLLECTION, not {namespace!r}")
    return client[db][coll] if coll else client[db]


def run(client, args, out, err):
    """Watch until an end condition; the last resume token goes to ``err`` in any case: that
    of the last change written (or of the stream's position when no change was pending), so
    that a change whose write failed (a broken pipe) is printed again by a resumed run."""
    options = _options(args)
    stream = _target(client, args.namespace).watch(**options)
    clock = client._topology.clock
    printed = 0
    written = stream.resume_token  # the token to resume from: nothing after it was lost
    wait_s = options["max_await_time_ms"] / 1000.0
    try:
        idle = Deadline(clock, args.idle_exit, "--idle-exit")
        while stream.alive:
            change = _next_within(stream, wait_s, idle)
            if change is None:
                written = stream.resume_token  # no change returned: nothing to lose
                if idle.expired():
                    break
                continue
            out.doc(change)
            out.stream.flush()
            written = stream.resume_token
            printed += 1
            if args.max_events is not None and printed >= args.max_events:
                break
            idle = Deadline(clock, args.idle_exit, "--idle-exit")
    finally:
        _report(written, out, err)
        try:
            with timeout(CLOSE_S):
                stream.close()
        except PyMongoError:
            pass  # the server forgets an unused cursor; what ended the run is reported


def _next_within(stream, wait_s, idle):
    """The next change, or None: also when the server did not answer in time (a timeout
    leaves the stream open; the next call resumes it)."""
    left = idle.remaining()
    with timeout(wait_s + (GRACE_S if left is None else min(GRACE_S, max(left, 0.5)))):
        try:
            return stream.try_next()
        except PyMongoError as exc:
            if not exc.timeout:
                raise
            return None


def _report(token, out, err):
    if token is not None:
        err.write("resume token: " + json_util.dumps(token, json_options=out.options) + "\n")
        err.flush()
