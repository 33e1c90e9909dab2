"""The production paths of issue 47 for `make bench`: each path's simulated deployments
(standalone and 3 members), the URI a user writes for it, and its raw floor
(``floor_auth.py``); instruction counts (callgrind) and round trips (the requests the
primary answered) beside the wall clock."""
import contextlib
import re
import shutil
import ssl
import subprocess
import sys
import time

from singlemongo.testing import ReplicaSet, Standalone
from singlemongo.testing.auth.aws import Aws, AwsKeys

HERE = __import__("pathlib").Path(__file__).resolve().parent
SUBJECT = "CN=client,OU=drivers,O=singlemongo"
AWS_KEY, AWS_SECRET = "AKIDBENCH", "bench-secret-access-key"


def server_context(certs):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certs / "server.pem", certs / "server.key")
    context.verify_mode = ssl.CERT_OPTIONAL
    context.load_verify_locations(certs / "ca.pem")
    return context


def _uri(dep, userinfo="", **options):
    hosts = ",".join(s.address_text for s in dep.servers)
    if len(dep.servers) > 1:
        options = {"replicaSet": "rs", **options}
    return f"mongodb://{userinfo}{hosts}/?" + "&".join(f"{k}={v}" for k, v in options.items())


def path_cases(certs):
    """(name, deployment options, floor arguments, URI maker) per production path."""
    ca, pem = str(certs / "ca.pem"), str(certs / "client.pem")
    tls = {"tls": "true", "tlsCAFile": ca}
    return [
        ("TLS", {"tls_context": server_context(certs)}, ["tls", ca],
         lambda dep: _uri(dep, **tls)),
        ("TLS + SCRAM-SHA-256", {"tls_context": server_context(certs),
                                 "users": {"bench": "pencil"}},
         ["tls-scram", ca, "", "bench", "pencil"],
         lambda dep: _uri(dep, "bench:pencil@", **tls)),
        ("TLS + MONGODB-X509", {"tls_context": server_context(certs), "x509_users": [SUBJECT]},
         ["tls-x509", ca, pem],
         lambda dep: _uri(dep, **tls, tlsCertificateKeyFile=pem,
                          authMechanism="MONGODB-X509")),
        ("MONGODB-AWS (static credentials)",
         {"mechanisms": [Aws(AwsKeys({AWS_KEY: AWS_SECRET}))]},
         ["aws", "", "", AWS_KEY, AWS_SECRET],
         lambda dep: _uri(dep, f"{AWS_KEY}:{AWS_SECRET}@", authMechanism="MONGODB-AWS")),
    ]


@contextlib.contextmanager
def deployments(options, seed):
    """The path's standalone and 3-member replica set, seeded."""
    with seed(Standalone(**options)) as sa, seed(ReplicaSet(3, **options)) as rs:
        yield (("standalone", sa), ("3 members", rs))


def floor_argv(py, dep, floor_args):
    """The path's floor: the primary, after a hello to each other member (the scan any
    driver following server discovery and monitoring makes first)."""
    primary = next(s for s in dep.servers if getattr(s, "role", "") in ("primary", "standalone"))
    others = [s.address_text for s in dep.servers if s is not primary]
    return [py, str(HERE / "floor_auth.py"), floor_args[0],
            ",".join([primary.address_text, *others]), *floor_args[1:]]


def instructions(argv, env):
    """Instructions a whole process executes (callgrind, hash seed fixed): deterministic to
    a fraction of a percent, unlike the wall clock. None without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                          *argv], capture_output=True, text=True,
                         env=dict(env, PYTHONHASHSEED="0"))
    found = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or found is None:
        raise RuntimeError(f"{argv} under callgrind failed: {out.stderr[-1000:]}")
    return int(found.group(1))


def requests_answered(argv, dep, env):
    """The requests the primary answered during one run: each is a round trip (none is
    pipelined); a request sent without waiting for a reply (endSessions at close) is not."""
    primary = next(s for s in dep.servers if getattr(s, "role", "") in ("primary", "standalone"))

    def answered():
        return sum(primary.commands.values()) - len(primary.unanswered)
    before = answered()
    subprocess.run(argv, capture_output=True, env=env, check=True)
    time.sleep(0.1)  # a request sent without waiting may land after the process ended
    return answered() - before


if __name__ == "__main__":
    sys.exit("run by run.py")
