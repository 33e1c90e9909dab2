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

KINDS = {"standalone": "Standalone", "replicaset": "ReplicaSet", "sharded": "Sharded",
         "loadbalanced": "LoadBalancer"}


def parser() -> argparse.ArgumentParser:
    """The command line of ``serve``."""
    p = argparse.ArgumentParser(prog="python -m singlemongo.testing",
                                description="Serve a simulated MongoDB deployment until "
                                            "Ctrl-C; prints its connection string first.")
    p.add_argument("kind", nargs="?", default="replicaset", choices=sorted(KINDS))
    p.add_argument("--members", type=int, default=None, metavar="N",
                   help="replica set members or mongoses (3 and 2 by default)")
    p.add_argument("--port", type=int, default=None, metavar="P",
                   help="the first member's port (the others follow); free ones otherwise")
    p.add_argument("--user", action="append", default=[], metavar="NAME:PASSWORD",
                   help="a SCRAM user of the admin database (repeatable)")
    p.add_argument("--tls-cert", metavar="PEM", help="serve TLS with this certificate")
    p.add_argument("--tls-key", metavar="KEY", help="the certificate's private key")
    p.add_argument("--tls-ca", metavar="CA", help="ask clients for certificates of this CA")
    return p


def _users(pairs):
    users = {}
    for pair in pairs:
        name, colon, password = pair.partition(":")
        if not colon or not name or not password:
            raise SystemExit(f"--user takes NAME:PASSWORD, not {name!r}...")
        users[name] = password
    return users


def _tls(args):
    if not args.tls_cert:
        if args.tls_key or args.tls_ca:
            raise SystemExit("--tls-key and --tls-ca need --tls-cert")
        return None
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(args.tls_cert, args.tls_key)
        if args.tls_ca:
            context.verify_mode = ssl.CERT_OPTIONAL
            context.load_verify_locations(args.tls_ca)
    except (OSError, ssl.SSLError) as exc:
        raise SystemExit(f"cannot use the TLS files: {exc}") from None
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
            raise SystemExit(f"a {args.kind} deployment has one server: --members must be 1")
        deployment = cls(**options)
    if args.port is not None:
        for offset, server in enumerate(deployment.servers):
            server.port = args.port + offset
    return deployment


def main(argv=None) -> int:
    """Serve until Ctrl-C or SIGTERM; exit status 0, or 2 for bad arguments or a busy port."""
    args = parser().parse_args(argv)
    deployment = build(args)
    try:
        deployment.start()
    except OSError as exc:
        deployment.stop()
        print(f"cannot listen: {exc}", file=sys.stderr)
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
