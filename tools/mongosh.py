"""mongosh, MongoDB's shell, and the official Node.js driver, against ``singlemongo serve``:
the clients nobody here wrote, as a user points them at the simulator.

``make test-mongosh`` installs mongosh from npm into ``.mongosh/`` (git-ignored, kept
between runs). :class:`Serve` starts ``singlemongo serve`` in a process of its own (loopback,
free ports) and stops it by its PID; :func:`run_script` runs a mongosh script against it and
returns what the script printed last, as JSON; :func:`run_node` does the same for a Node.js
script on the official driver.

This module imports nothing from singlemongo or PyMongo: it is a process manager.
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from tools.ferretdb import ROOT, _die_with_parent

VERSION = "2.12.0"
NODE_DRIVER_VERSION = "7.9.1"  # the official Node.js driver, as mongosh 2.12 carries it
NODE_MODULES = ROOT / ".mongosh" / "node_modules"
BINARY = pathlib.Path(os.environ.get("SINGLEMONGO_MONGOSH", ROOT / ".mongosh" / "node_modules" /
                                     ".bin" / "mongosh"))
START_TIMEOUT_S = 30
SCRIPT_TIMEOUT_S = 120


def unavailable_reason():
    """Why mongosh cannot run here, or None when it can."""
    if BINARY.is_file():
        return None
    how = "run `make test-mongosh`" if shutil.which("npm") else "npm is not installed"
    return f"mongosh {VERSION} is not installed at {BINARY} ({how})"


class Serve:
    """``python -m singlemongo serve KIND ARGS...`` in its own process; ``uri`` is the
    connection string it printed first."""

    def __init__(self, kind="replicaset", *args):
        self.argv = [sys.executable, "-m", "singlemongo", "serve", kind, *args]
        self.process = None
        self.uri = None

    def start(self):
        self.process = subprocess.Popen(self.argv, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, cwd=ROOT,
                                        preexec_fn=_die_with_parent)
        line = _first_line(self.process, START_TIMEOUT_S)
        if not line.startswith("mongodb://"):
            self.stop()
            raise RuntimeError(f"singlemongo serve printed {line!r}, not a connection string")
        self.uri = line
        return self

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()  # serve stops at SIGTERM
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def _first_line(process, timeout_s):
    import selectors
    with selectors.DefaultSelector() as sel:
        sel.register(process.stdout, selectors.EVENT_READ)
        if not sel.select(timeout_s):
            process.kill()
            raise RuntimeError(f"singlemongo serve printed nothing in {timeout_s} s")
    return process.stdout.readline().strip()


# mongosh's global configuration (YAML): telemetry off for good, so that nothing it runs
# here reaches for the network (--quiet already skips its update check).
GLOBAL_CONFIG = "mongosh:\n  forceDisableTelemetry: true\n"


def run_script(uri, script, timeout_s=SCRIPT_TIMEOUT_S):
    """Run the mongosh ``script`` (a path) against ``uri``, in a throwaway home (mongosh
    writes its logs there); the JSON of the script's last line."""
    with tempfile.TemporaryDirectory(prefix="mongosh-home-") as home:
        config = pathlib.Path(home, "mongosh.conf")
        config.write_text(GLOBAL_CONFIG)
        done = subprocess.run(
            [str(BINARY), uri, "--quiet", "--norc", "--file", str(script)],
            capture_output=True, text=True, timeout=timeout_s, cwd=home,
            env={**os.environ, "HOME": home, "MONGOSH_GLOBAL_CONFIG_FILE_FOR_TESTING":
                 str(config), "MONGOSH_FORCE_DISABLE_TELEMETRY_FOR_TESTING": "1",
                 "DO_NOT_TRACK": "1"})
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"mongosh exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return json.loads(lines[-1])


def run_node(uri, script, timeout_s=SCRIPT_TIMEOUT_S):
    """Run the Node.js ``script`` (a path; it requires "mongodb", the official driver from
    ``.mongosh/node_modules``) with ``uri`` as its argument; the JSON of its last line."""
    done = subprocess.run(["node", str(script), uri], capture_output=True, text=True,
                          timeout=timeout_s, env={**os.environ, "NODE_PATH": str(NODE_MODULES)})
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"node exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return json.loads(lines[-1])

