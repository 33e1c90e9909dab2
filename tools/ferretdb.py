"""FerretDB v1.24 on loopback: the one server in the project's tests that nobody here wrote.

``make ferretdb`` builds the binary into ``.ferretdb/bin`` (git-ignored, kept between runs)
and runs ``python -m tools.ferretdb``, which starts it and prints how to connect. The test
tier (``make test-ferretdb``) and ``make bench`` start it with :class:`FerretDB`.

One process serves everything: the SQLite backend in a temporary directory, telemetry off
(and its reporting URL pointed at a closed loopback port, so that nothing can leave the
machine), the debug listener off, a plain listener and a TLS listener on free loopback ports
(a throwaway CA made at start), and the experimental SCRAM authentication with one user made
at setup. The password reaches FerretDB through its environment, never its command line.

This module imports nothing from singlemongo or PyMongo: it is a process manager.
"""
import json
import os
import pathlib
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

ROOT = pathlib.Path(__file__).resolve().parent.parent
VERSION = "v1.24.2"
BINARY = pathlib.Path(os.environ.get("SINGLEMONGO_FERRETDB", ROOT / ".ferretdb" / "bin" /
                                     "ferretdb"))
USER = "root"
START_TIMEOUT_S = 30
STOP_TIMEOUT_S = 10


def _die_with_parent():
    """In the child before exec: on Linux, SIGTERM it when the process that started it dies,
    so a test run killed outright (no fixture teardown) leaves no server behind."""
    if sys.platform.startswith("linux"):
        import ctypes
        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class FerretDBUnavailable(RuntimeError):
    """FerretDB cannot run here: the message says why (no binary, no openssl, ...)."""


def unavailable_reason():
    """Why FerretDB cannot be started on this machine, or None when it can."""
    if not BINARY.is_file():
        how = "run `make ferretdb`" if shutil.which("go") else "Go 1.26 is not installed"
        return f"FerretDB {VERSION} is not built at {BINARY} ({how})"
    if shutil.which("openssl") is None:
        return "the openssl command is needed to make the TLS listener's throwaway CA"
    return None


def _openssl(directory, *args):
    subprocess.run(("openssl",) + args, cwd=directory, check=True, capture_output=True)


def _make_ca(directory, name):
    # keyUsage and the key identifiers: Python 3.13's default context (VERIFY_X509_STRICT)
    # refuses a CA without them.
    _openssl(directory, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
             f"{name}.key", "-out", f"{name}.pem", "-days", "2", "-subj",
             f"/CN=singlemongo {name}", "-addext", "keyUsage=critical,keyCertSign,cRLSign")


def make_certificates(directory):
    """A CA, a server certificate it signs for the name ``localhost`` only (not for
    127.0.0.1, so that hostname checks can be seen to fail), and a second CA that signs
    nothing (a client trusting only it must refuse the server)."""
    directory = pathlib.Path(directory)
    _make_ca(directory, "ca")
    _make_ca(directory, "other-ca")
    _openssl(directory, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key",
             "-out", "server.csr", "-subj", "/CN=localhost")
    (directory / "server.cnf").write_text(
        "subjectAltName=DNS:localhost\nauthorityKeyIdentifier=keyid,issuer\n"
        "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n")
    _openssl(directory, "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey",
             "ca.key", "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile",
             "server.cnf")
    return directory


class FerretDB:
    """A FerretDB process: ``start()`` it (or use it as a context manager), read its
    addresses and URIs, ``stop()`` it (by its PID)."""

    def __init__(self, binary=BINARY, auth=True):
        self.binary = pathlib.Path(binary)
        self.auth = auth  # the experimental SCRAM authentication, with the setup user
        self.password = secrets.token_urlsafe(18)
        self.user = USER
        self.directory = None
        self.process = None
        self.address = self.tls_address = None

    def __repr__(self):
        return (f"FerretDB(pid={self.process.pid if self.process else None}, "
                f"plain={self.address}, tls={self.tls_address})")

    # -- the process ---------------------------------------------------------------------
    def start(self):
        reason = unavailable_reason() if self.binary == BINARY else (
            None if self.binary.is_file() else f"no FerretDB binary at {self.binary}")
        if reason:
            raise FerretDBUnavailable(reason)
        self.directory = pathlib.Path(tempfile.mkdtemp(prefix="singlemongo-ferretdb-"))
        make_certificates(self.directory)
        (self.directory / "data").mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith("FERRETDB_")}
        env.update(FERRETDB_SETUP_PASSWORD=self.password, DO_NOT_TRACK="1")
        self.log = self.directory / "ferretdb.log"
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(self.arguments(), stdout=log, stderr=log,
                                            stdin=subprocess.DEVNULL, env=env,
                                            cwd=self.directory, start_new_session=True,
                                            preexec_fn=_die_with_parent)
        try:
            self._wait_for_listeners()
        except BaseException:
            self.stop()
            raise
        return self

    def arguments(self):
        d = self.directory
        return [str(self.binary), "--handler=sqlite", f"--sqlite-url=file:{d / 'data'}/",
                f"--state-dir={d}", "--telemetry=disable",
                "--test-telemetry-url=http://127.0.0.1:9/", "--debug-addr=-",
                "--listen-addr=127.0.0.1:0", "--listen-tls=127.0.0.1:0",
                f"--listen-tls-cert-file={d / 'server.pem'}",
                f"--listen-tls-key-file={d / 'server.key'}", "--log-format=json",
                "--log-level=INFO"] + (["--test-enable-new-auth", "--setup-database=admin",
                                        f"--setup-username={self.user}"] if self.auth else [])

    def _listening(self):
        """{'TCP': (host, port), 'TLS': (host, port)} from the log lines seen so far. The
        listeners log at INFO; FerretDB prints them whatever the level, before serving."""
        found = {}
        for line in self.log.read_text(errors="replace").splitlines():
            try:
                message = json.loads(line).get("msg", "")
            except ValueError:
                continue
            if message.startswith("Listening on "):
                kind, address = message[len("Listening on "):].rstrip(".").split(" ", 1)
                host, port = address.rsplit(":", 1)
                found[kind] = (host, int(port))
        return found

    def _wait_for_listeners(self):
        deadline = time.monotonic() + START_TIMEOUT_S
        for _ in range(START_TIMEOUT_S * 20):
            if self.process.poll() is not None:
                raise FerretDBUnavailable(f"FerretDB exited with status {self.process.returncode}"
                                          f":\n{self.log.read_text(errors='replace')[-3000:]}")
            found = self._listening()
            if "TCP" in found and "TLS" in found:
                self.address, self.tls_address = found["TCP"], found["TLS"]
                return
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
        raise FerretDBUnavailable(f"FerretDB did not listen within {START_TIMEOUT_S} s:\n"
                                  f"{self.log.read_text(errors='replace')[-3000:]}")

    def stop(self):
        """Stop the process by its PID (SIGTERM, then SIGKILL) and remove its directory."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(STOP_TIMEOUT_S)
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- how to connect ------------------------------------------------------------------
    @property
    def ca_file(self):
        return str(self.directory / "ca.pem")

    @property
    def other_ca_file(self):
        return str(self.directory / "other-ca.pem")

    def uri(self, tls=False, auth=True, host=None, **options):
        """A connection string. With ``tls``, the TLS listener, trusting the throwaway CA,
        by the name ``localhost`` (the name its certificate carries) unless ``host`` says
        otherwise; with ``auth``, the setup user's credentials."""
        port = (self.tls_address if tls else self.address)[1]
        host = host or ("localhost" if tls else self.address[0])
        userinfo = (f"{urllib.parse.quote(self.user, safe='')}:"
                    f"{urllib.parse.quote(self.password, safe='')}@") if auth and self.auth else ""
        if tls:
            options = {"tls": "true", "tlsCAFile": self.ca_file, **options}
        query = urllib.parse.urlencode(options, safe="/:")
        return f"mongodb://{userinfo}{host}:{port}/" + (f"?{query}" if query else "")


def main():
    """Start FerretDB, print how to connect, and wait for Ctrl-C (``make ferretdb``)."""
    try:
        server = FerretDB().start()
    except FerretDBUnavailable as exc:
        print(f"ferretdb: {exc}", file=sys.stderr)
        return 2
    try:
        print(f"FerretDB {VERSION} (pid {server.process.pid}), SQLite in {server.directory}")
        print(f"  plain: {server.uri()}")
        print(f"  TLS:   {server.uri(tls=True)}")
        print(f"  log:   {server.log}")
        if "--check" in sys.argv[1:]:
            return 0
        print("Ctrl-C stops it.", flush=True)
        while server.process.poll() is None:
            time.sleep(0.5)
        print(f"ferretdb: exited with status {server.process.returncode}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
