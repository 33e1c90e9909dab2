"""The figures of the process-per-request guide: each web server of the servers tier with the
guides' examples and with the same examples written for PyMongo (tests/servers/control), on
one simulated replica set of three members, through a failover (the primary steps down after
1 s, another member is elected a second later), 8 requests at once (20 under gevent) for
8 s. Prints a Markdown table: requests per second, p50, errors, connections per request,
threads per worker, and the most connections to the members one worker holds.

    make test-servers   # installs the servers
    .venv/bin/python -m tests.servers.measure
"""
import pathlib
import shutil
import sys

from tools import webservers

from .deployment import (member_ports, remove_cache, seeded_replica_set, shop_uri,
                         start_failover)

CONTROL = pathlib.Path(__file__).resolve().parent / "control"
SECONDS = 8.0
APPS = {"singlemongo": (webservers.EXAMPLES / "cgi_lookup.py",
                        webservers.EXAMPLES / "wsgi_app.py"),
        "PyMongo": (CONTROL / "pymongo_cgi_lookup.py", CONTROL / "pymongo_wsgi_app.py")}


# The CGI script's variants: the guide's URI, with the topology cache, and waiting for an
# election (a one-off's default is to scan once and fail).
CACHE = "servers-measure"
CGI_VARIANTS = {"": "", " (cache)": f"&topologyCacheFile={CACHE}",
                " (serverSelectionTryOnce=false)": "&serverSelectionTryOnce=false"}


def _measure(rs, server_name, driver, variant):
    cgi, wsgi = APPS[driver]
    uri = shop_uri(rs, CGI_VARIANTS[variant])
    directory = webservers.scratch_directory()
    port = webservers.free_port()
    if server_name == "apache-cgi":
        server, path, concurrency = webservers.apache_cgi(directory, port, cgi,
                                                          {"MONGODB_URI": uri}), \
            "/cgi-bin/app?sku=a1", 4
    else:
        server = webservers.wsgi_server(server_name, directory, port, wsgi, {"MONGODB_URI": uri})
        path, concurrency = "/visits?page=home", 20 if "gevent" in server_name else 8
    before = rs.total_connections()
    with server:
        timers = start_failover(rs)
        result = webservers.load(port, path, SECONDS, concurrency)
        for timer in timers:
            timer.join()
        workers = server.workers()
        threads = sorted({webservers.threads(pid) for pid in workers})
        sockets = max((webservers.sockets(pid, member_ports(rs)) for pid in workers),
                      default=0)
    if server_name == "apache-cgi":
        threads = sorted(set((directory / "threads.log").read_text().split()))
    rs.elect(0)
    shutil.rmtree(directory, ignore_errors=True)
    remove_cache(CACHE)
    connections = (rs.total_connections() - before) / max(result.requests, 1)
    return (f"| {server_name}{variant} | {driver} | "
            f"{result.requests / result.seconds:.0f} | {result.percentile(0.5) * 1000:.0f} | "
            f"{result.errors} of {result.requests} | {connections:.3f} | "
            f"{','.join(map(str, threads))} | {sockets} |")


def main(names):
    rows = ["| server | driver | requests/s | p50 ms | errors | connections per request | "
            "threads per worker | most connections to the members in a worker |", "|" + "---|" * 8]
    with seeded_replica_set() as rs:
        for name in names or ["apache-cgi", *webservers.WSGI_SERVERS]:
            for driver in APPS:
                for variant in (CGI_VARIANTS if name == "apache-cgi" and driver ==
                                "singlemongo" else [""]):
                    rows.append(_measure(rs, name, driver, variant))
                    print(rows[-1], file=sys.stderr)
    print("\n".join(rows))


if __name__ == "__main__":
    main(sys.argv[1:])
