"""Real web servers on loopback, as users run the guides' examples under them: Apache (CGI,
mod_wsgi embedded and daemon), gunicorn (sync, with and without ``--preload``, and gevent) and
uWSGI (with and without ``lazy-apps``), each in a process of its own on a free port, stopped
by its PID; and a load of concurrent HTTP requests that counts every failure.

``make test-servers`` installs them: Apache and mod_wsgi from Debian's packages, gunicorn and
uWSGI from PyPI, and WWW_VENV, a regular install of the checkout on the system's Python for
Apache's user (www-data cannot read a Python under /root, nor perhaps the checkout). This
module imports nothing from singlemongo or PyMongo: it is a process manager.
"""
import collections
import http.client
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from tools.ferretdb import ROOT, _die_with_parent

EXAMPLES = ROOT / "examples"
APACHE = shutil.which("apache2") or "/usr/sbin/apache2"
APACHE_MODULES = pathlib.Path("/usr/lib/apache2/modules")
# Apache's user must be able to read the interpreter, the installed driver and the script,
# wherever the checkout lies (a home directory is often closed to it): the virtual environment
# and each server's scripts live under the temporary directory.
WWW_VENV = pathlib.Path(os.environ.get("TMPDIR") or "/tmp") / \
    f"singlemongo-www-{os.getuid()}-{ROOT.name}"
WWW_PYTHON = WWW_VENV / "bin" / "python"
BIN = pathlib.Path(sys.executable).parent
START_TIMEOUT_S = 30
STOP_TIMEOUT_S = 10
REQUEST_TIMEOUT_S = 15


def unavailable_reason(server):
    """Why ``server`` (apache-cgi, mod_wsgi, gunicorn, uwsgi) cannot run here, or None."""
    needs = {"apache-cgi": [(APACHE, "Debian's apache2"), (WWW_PYTHON, "`make test-servers`")],
             "mod_wsgi": [(APACHE_MODULES / "mod_wsgi.so", "Debian's libapache2-mod-wsgi-py3"),
                          (WWW_PYTHON, "`make test-servers`")],
             "gunicorn": [(BIN / "gunicorn", "the servers extra")],
             "uwsgi": [(BIN / "uwsgi", "the servers extra")]}[server]
    for path, source in needs:
        if not pathlib.Path(path).exists():
            return f"{path} is not installed (from {source}; `make test-servers` installs it)"
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class WebServer:
    """A web server's master process: started on ``port``, listening within START_TIMEOUT_S,
    stopped by its PID (SIGTERM, then SIGKILL to its process group). ``log`` is its output."""

    def __init__(self, name, argv, port, directory, env=None):
        self.name, self.argv, self.port = name, argv, port
        self.directory = pathlib.Path(directory)
        self.env = {**os.environ, **(env or {})}
        self.log = self.directory / f"{name}.log"
        self.process = None

    def start(self):
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(
                self.argv, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                cwd=self.directory, start_new_session=True, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.process.returncode}): "
                                   f"{self.log.read_text()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.5).close()
                return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"{self.name} did not listen on {self.port} within "
                           f"{START_TIMEOUT_S} s: {self.log.read_text()[-2000:]}")

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(STOP_TIMEOUT_S)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def workers(self):
        """The PIDs of the master's children (the workers)."""
        return children(self.process.pid)


def children(pid):
    """The PIDs whose parent is ``pid``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = pathlib.Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def threads(pid):
    """How many threads process ``pid`` runs."""
    return len(os.listdir(f"/proc/{pid}/task"))


def sockets(pid, ports):
    """How many TCP connections process ``pid`` holds open to loopback ``ports`` (the
    deployment's members): its listening socket and the socket pairs a server keeps with its
    master are not counted."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = pathlib.Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            count += fields[9] in inodes and remote_port in ports
    return count


def gunicorn(directory, port, app, workers=2, preload=False, worker_class="sync", env=None,
             pythonpath=EXAMPLES):
    argv = [str(BIN / "gunicorn"), "--bind", f"127.0.0.1:{port}", "--workers", str(workers),
            "--worker-class", worker_class, "--pythonpath", str(pythonpath),
            "--graceful-timeout", "2", "--timeout", "30"]
    name = f"gunicorn-{worker_class}" + ("-preload" if preload else "")
    return WebServer(name, argv + (["--preload"] if preload else []) + [app], port, directory,
                     env)


def uwsgi(directory, port, wsgi_file, processes=2, lazy_apps=False, env=None):
    argv = [str(BIN / "uwsgi"), "--http-socket", f"127.0.0.1:{port}", "--master",
            "--processes", str(processes), "--wsgi-file", str(wsgi_file), "--need-app",
            "--die-on-term", "--disable-logging", "--pythonpath", str(wsgi_file.parent),
            "--virtualenv", str(BIN.parent)]
    name = "uwsgi" + ("-lazy-apps" if lazy_apps else "")
    return WebServer(name, argv + (["--lazy-apps"] if lazy_apps else []), port, directory, env)


_APACHE_BASE = """\
ServerRoot "{directory}"
ServerName 127.0.0.1
Listen 127.0.0.1:{port}
PidFile "{directory}/httpd.pid"
DefaultRuntimeDir "{directory}"
ErrorLog "{directory}/error.log"
LogLevel warn
LoadModule mpm_prefork_module {modules}/mod_mpm_prefork.so
LoadModule authz_core_module {modules}/mod_authz_core.so
LoadModule alias_module {modules}/mod_alias.so
LoadModule env_module {modules}/mod_env.so
{user}
StartServers 2
MinSpareServers 2
MaxSpareServers 8
MaxRequestWorkers 16
DocumentRoot "{directory}"
"""


def apache(directory, port, body):
    """Apache (prefork) with the configuration ``body`` appended to a minimal base. Run as
    root, it serves as www-data, as Debian's does: the user a web server's scripts run as."""
    directory = pathlib.Path(directory)
    directory.chmod(0o755)
    user = "User www-data\nGroup www-data" if os.geteuid() == 0 else ""
    config = _APACHE_BASE.format(directory=directory, port=port, modules=APACHE_MODULES,
                                 user=user) + body
    (directory / "httpd.conf").write_text(config)
    argv = [APACHE, "-f", str(directory / "httpd.conf"), "-DFOREGROUND"]
    return WebServer("apache", argv, port, directory)


def apache_cgi(directory, port, script, env):
    """Apache running ``script`` (a Python file) as a CGI script with WWW_PYTHON, the
    environment ``env`` set for it. Each CGI process appends its thread count at exit to
    ``threads.log`` in ``directory``."""
    directory = pathlib.Path(directory)
    script = _readable_copy(script, directory)
    cgi_bin = directory / "cgi-bin"
    cgi_bin.mkdir()
    threads_log = directory / "threads.log"
    threads_log.touch(mode=0o666)
    threads_log.chmod(0o666)
    wrapper = cgi_bin / "app"
    wrapper.write_text(
        f"#!{WWW_PYTHON}\n"
        "import atexit, os, runpy, sys\n"
        "def _record():\n"
        f"    with open({str(threads_log)!r}, 'a') as log:\n"
        "        log.write(f\"{len(os.listdir('/proc/self/task'))}\\n\")\n"
        "atexit.register(_record)\n"
        f"sys.argv = [{str(script)!r}]\n"
        f"runpy.run_path({str(script)!r}, run_name='__main__')\n")
    wrapper.chmod(0o755)
    set_env = "".join(f'SetEnv {k} "{v}"\n' for k, v in env.items())
    body = (f"LoadModule cgi_module {APACHE_MODULES}/mod_cgi.so\n"
            f'ScriptAlias /cgi-bin/ "{cgi_bin}/"\n'
            f'<Directory "{cgi_bin}">\n  Require all granted\n</Directory>\n' + set_env)
    server = apache(directory, port, body)
    server.name = "apache-cgi"
    return server


def apache_mod_wsgi(directory, port, script, env, daemon):
    """Apache with mod_wsgi serving ``script``: embedded in the prefork children,
    or in two daemon processes of one thread each. mod_wsgi's Python is the system's, with
    WWW_PYTHON's virtual environment as its home."""
    script = _readable_copy(script, directory)
    _readable_copy(EXAMPLES / "wsgi_app.py", directory)  # what a control imports
    group = ("WSGIDaemonProcess app processes=2 threads=1\nWSGIProcessGroup app\n"
             if daemon else "WSGIApplicationGroup %{GLOBAL}\n")
    # mod_wsgi hands SetEnv's values to the app in environ, not os.environ, which the
    # examples read: the loader sets them, as a deployment's .wsgi file commonly does.
    loader = pathlib.Path(directory) / "app.wsgi"
    loader.write_text(
        "import os, runpy\n"
        f"os.environ.update({env!r})\n"
        f"_app = runpy.run_path({str(script)!r})['application']\n"
        "def application(environ, start_response):\n"
        "    return _app(environ, start_response)\n")
    body = (f"LoadModule wsgi_module {APACHE_MODULES}/mod_wsgi.so\n"
            f'WSGIPythonHome "{WWW_VENV}"\n{group}'
            f'WSGIScriptAlias / "{loader}"\n'
            f'<Directory "{directory}">\n  Require all granted\n</Directory>\n')
    server = apache(directory, port, body)
    server.name = "mod_wsgi-" + ("daemon" if daemon else "embedded")
    return server


WSGI_SERVERS = ("gunicorn-sync", "gunicorn-sync-preload", "gunicorn-gevent", "uwsgi",
                "uwsgi-lazy-apps", "mod_wsgi-embedded", "mod_wsgi-daemon")


def requirement(name):
    """What :func:`unavailable_reason` knows the WSGI server ``name`` by."""
    return name.split("-")[0]


def wsgi_server(name, directory, port, wsgi_file, env):
    """The WSGI server ``name`` (one of WSGI_SERVERS) serving ``application`` from
    ``wsgi_file`` with ``env``: two workers, or one gevent worker."""
    if name.startswith("gunicorn"):
        gevent = name.endswith("gevent")
        return gunicorn(directory, port, f"{wsgi_file.stem}:application",
                        workers=1 if gevent else 2, preload=name.endswith("preload"),
                        worker_class="gevent" if gevent else "sync", env=env,
                        pythonpath=wsgi_file.parent)
    if name.startswith("uwsgi"):
        return uwsgi(directory, port, wsgi_file, lazy_apps=name.endswith("lazy-apps"), env=env)
    return apache_mod_wsgi(directory, port, wsgi_file, env, daemon=name.endswith("daemon"))


def _readable_copy(script, directory):
    """``script`` copied into ``directory``, which Apache's user can read."""
    copy = pathlib.Path(directory) / pathlib.Path(script).name
    shutil.copyfile(script, copy)
    copy.chmod(0o644)
    return copy


class LoadResult:
    """What a load got: requests sent, answers by status, failures by kind, latencies."""

    def __init__(self):
        self.statuses = collections.Counter()
        self.failures = collections.Counter()
        self.latencies = []
        self.seconds = 0.0
        self._lock = threading.Lock()

    @property
    def requests(self):
        return sum(self.statuses.values()) + sum(self.failures.values())

    @property
    def errors(self):
        return self.requests - self.statuses[200]

    def percentile(self, p):
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(len(ordered) * p))] if ordered else 0.0

    def summary(self):
        rate = self.requests / self.seconds if self.seconds else 0.0
        return (f"{self.requests} requests in {self.seconds:.1f} s ({rate:.0f}/s), "
                f"{self.errors} errors {dict(self.statuses)} {dict(self.failures)}, "
                f"p50 {self.percentile(0.5) * 1000:.0f} ms")


def load(port, path, seconds, concurrency):
    """Requests for ``path`` from ``concurrency`` clients at once for ``seconds``, each on
    a new connection, each within REQUEST_TIMEOUT_S."""
    result = LoadResult()
    start = time.monotonic()
    end = start + seconds

    def client():
        while time.monotonic() < end:
            began = time.monotonic()
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port,
                                                        timeout=REQUEST_TIMEOUT_S)
                try:
                    connection.request("GET", path)
                    response = connection.getresponse()
                    response.read()
                finally:
                    connection.close()
                with result._lock:
                    result.statuses[response.status] += 1
                    result.latencies.append(time.monotonic() - began)
            except (OSError, http.client.HTTPException) as exc:
                with result._lock:
                    result.failures[type(exc).__name__] += 1

    workers = [threading.Thread(target=client) for _ in range(concurrency)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(seconds + REQUEST_TIMEOUT_S + 5)
    result.seconds = time.monotonic() - start
    return result


def scratch_directory():
    """A new directory for one server's configuration and logs."""
    return pathlib.Path(tempfile.mkdtemp(prefix="web-server-"))
