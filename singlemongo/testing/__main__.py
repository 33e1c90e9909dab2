"""`python -m singlemongo.testing` (and `singlemongo serve`): a simulated deployment from the
command line, to try the CLI, a WSGI app or another language's driver against it.

    python -m singlemongo.testing [standalone | replicaset | sharded | loadbalanced]
        [--members N] [--port P] [--user NAME:PASSWORD ...]
        [--tls-cert PEM --tls-key KEY [--tls-ca CA]]

It prints the connection string on the first line of stdout, then serves until Ctrl-C (or
SIGTERM). Every member listens on 127.0.0.1; with ``--port`` the first member takes that port
and the others the ports after it, else the system picks free ones. ``--user`` adds a SCRAM
user (admin database); ``--tls-cert``/``--tls-key`` serve TLS with that certificate (and
``--tls-ca`` makes the servers ask for client certificates signed by that CA).
"""
import argparse
import signal
import sys
import threading
from typing import NoReturn

KINDS = {"standalone": "Standalone", "replicaset": "ReplicaSet", "sharded": "Sharded",
         "loadbalanced": "LoadBalancer"}


class _Parser(argparse.ArgumentParser):
    """Bad arguments: one line on stderr and exit status 2 (no usage block)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (--help shows the options)\n")


def _port(text: str) -> int:
    if not text.isdigit() or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a number from 0 to 65535, not {text!r}")
    return int(text)


def _members(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"the number of members is 1 or more, not {text!r}")
    return int(text)


def parser() -> argparse.ArgumentParser:
    """The command line of ``serve``."""
    p = _Parser(prog="singlemongo serve",
                                description="Serve a simulated MongoDB deployment until "
                                            "Ctrl-C; prints its connection string first.")
    p.add_argument("kind", nargs="?", default="replicaset", choices=sorted(KINDS))
    p.add_argument("--members", type=_members, default=None, metavar="N",
                   help="replica set members or mongoses (3 and 2 by default)")
    p.add_argument("--port", type=_port, default=None, metavar="P",
                   help="the first member's port (the others follow); free ones otherwise")
    p.add_argument("--user", action="append", default=[], metavar="NAME:PASSWORD",
                   help="a SCRAM user of the admin database (repeatable)")
    p.add_argument("--tls-cert", metavar="PEM", help="serve TLS with this certificate")
    p.add_argument("--tls-key", metavar="KEY", help="the certificate's private key")
    p.add_argument("--tls-ca", metavar="CA", help="ask clients for certificates of this CA")
    return p


def _bad(message):
    """A bad argument found after parsing: one line, exit status 2."""
    print(f"singlemongo serve: {message}", file=sys.stderr)
    return SystemExit(2)


def _users(pairs):
    users = {}
    for pair in pairs:
        name, colon, password = pair.partition(":")
        if not colon or not name or not password:
            raise _bad(f"--user takes NAME:PASSWORD, not {name!r}...")
        users[name] = password
    return users


def _tls(args):
    if not args.tls_cert:
        if args.tls_key or args.tls_ca:
            raise _bad("--tls-key and --tls-ca need --tls-cert")
        return None
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(args.tls_cert, args.tls_key)
        if args.tls_ca:
            context.verify_mode = ssl.CERT_OPTIONAL
            context.load_verify_locations(args.tls_ca)
    except (OSError, ssl.SSLError) as exc:
        raise _bad(f"cannot use the TLS files: {exc}") from None
    return context


def build(args):
    """The deployment the arguments describe (not started)."""
    from singlemongo import testing
    options = {"users": _users(args.user) or None, "tls_context": _tls(args)}
    options = {k: v for k, v in options.items() if v is not None}
    cls = getattr(testing, KINDS[args.kind])
    if args.kind == "replicaset":
        deployment = cls(args.members or 3, **options)
    elif args.kind == "sharded":
        deployment = cls(args.members or 2, **options)
    else:
        if args.members not in (None, 1):
            raise _bad(f"a {args.kind} deployment has one server: --members must be 1")
        deployment = cls(**options)
    if args.port is not None:
        if args.port and args.port + len(deployment.servers) - 1 > 65535:
            raise _bad(f"--port {args.port} leaves no room for {len(deployment.servers)} "
                       f"members (ports up to 65535)")
        for offset, server in enumerate(deployment.servers):
            server.port = args.port + offset
    return deployment


def main(argv=None) -> int:
    """Serve until Ctrl-C or SIGTERM; exit status 0, or 2 for bad arguments or a busy port."""
    try:
        args = parser().parse_args(argv)
        deployment = build(args)
    except SystemExit as exc:  # bad arguments (2, one line said why), or --help (0)
        return exc.code if isinstance(exc.code, int) else 2
    try:
        deployment.start()
    except OSError as exc:
        deployment.stop()
        print(f"singlemongo serve: cannot listen: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    uri = deployment.uri
    if args.user:  # the first user's credentials, so that the string works as printed
        name, _, password = args.user[0].partition(":")
        uri = uri.replace("mongodb://", f"mongodb://{name}:{password}@", 1)
    print(uri, flush=True)
    print(f"serving a simulated {args.kind} on {len(deployment.servers)} port(s); Ctrl-C to "
          f"stop", file=sys.stderr, flush=True)
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        deployment.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
