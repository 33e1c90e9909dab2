"""The command line's grammar. The global flags (--uri, --canonical, --explain) are accepted
before or after the subcommand: each subcommand takes them too, with defaults that leave the
values given before it alone."""
import argparse
import os

from singlemongo import __version__
from singlemongo.cli import watch


class ShowVersion(Exception):
    """--version was given (raised so that the version goes to the caller's stdout)."""


class _Version(argparse.Action):
    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, help="print the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        raise ShowVersion(f"singlemongo {__version__}")


def _global_flags(parser, defaults):
    value = (lambda v: v) if defaults else (lambda v: argparse.SUPPRESS)
    parser.add_argument("--uri", default=value(os.environ.get("MONGODB_URI",
                                                             "mongodb://localhost")),
                        help="connection string (default: $MONGODB_URI or mongodb://localhost)")
    parser.add_argument("--canonical", action="store_true", default=value(False),
                        help="canonical Extended JSON output")
    parser.add_argument("--explain", action="store_true", default=value(False),
                        help="print what the scanner and selector did, to stderr")


def parser(doc):
    p = argparse.ArgumentParser(prog="singlemongo", description=doc.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog=doc.split("\n\n", 1)[1])
    p.add_argument("--version", action=_Version)
    _global_flags(p, defaults=True)
    common = argparse.ArgumentParser(add_help=False)
    _global_flags(common, defaults=False)
    sub = p.add_subparsers(dest="action", required=True, metavar="COMMAND")

    def command(name, help_text, namespace=True, filter_arg=True):
        c = sub.add_parser(name, help=help_text, parents=[common])
        if namespace:
            c.add_argument("namespace", metavar="DB.COLLECTION")
        if filter_arg:
            c.add_argument("--filter", default=None, help="query filter (Extended JSON object)")
        return c

    c = command("find", "documents matching a filter, as JSON Lines")
    c.add_argument("--projection")
    c.add_argument("--sort")
    c.add_argument("--limit", type=int, default=0)
    c.add_argument("--skip", type=int, default=0)
    command("find-one", "the first document matching a filter, or null")
    command("count", "how many documents match a filter")
    c = command("insert", "insert documents given as arguments or on stdin", filter_arg=False)
    c.add_argument("documents", nargs="*",
                   help="documents; none: read JSON Lines or an array from stdin")
    c = command("update", "update documents matching a filter")
    c.add_argument("--update", required=True, help="update operators, e.g. '{\"$set\": {...}}'")
    c.add_argument("--many", action="store_true")
    c.add_argument("--upsert", action="store_true")
    c = command("delete", "delete documents matching a filter")
    c.add_argument("--many", action="store_true",
                   help="every matching document; needs --filter, or --all for every document")
    c.add_argument("--all", action="store_true", help="with --many and no --filter: delete all")
    c = command("aggregate", "run a pipeline, output as JSON Lines", filter_arg=False)
    c.add_argument("pipeline", help="the pipeline, a JSON array")
    c = command("command", "run a database command", namespace=False, filter_arg=False)
    c.add_argument("database")
    c.add_argument("command", help="the command document, e.g. '{\"buildInfo\": 1}'")
    c.add_argument("--read-preference", default=None)
    command("ping", "health probe: ping the first seed that answers (one connection)",
            namespace=False, filter_arg=False)
    c = command("topology", "scan and show the discovered topology", namespace=False,
                filter_arg=False)
    c.add_argument("--json", action="store_true")
    watch.add_parser(command)
    # Listed only: main() hands `serve ...` to singlemongo.testing before parsing.
    sub.add_parser("serve", add_help=False,
                   help="serve a simulated deployment until Ctrl-C (singlemongo serve --help)")
    return p
