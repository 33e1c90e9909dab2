"""The documentation's examples, run as a reader runs them (Sybil; ``conftest.py`` at the
checkout's root collects ``README.md`` and ``docs/*.md``).

Each document runs against the deployment the guides tell a reader to start with
``singlemongo serve replicaset --port 27017``: a simulated 3-member replica set "rs",
started before the document's first example and stopped after its last. The examples are
written with the address a reader uses, 127.0.0.1:27017-27019; the run uses three free ports
outside the kernel's ephemeral range instead and rewrites the document's text to them
(``Addresses``), so ``make test`` passes beside a ``singlemongo serve`` or a mongod on 27017.

- A ``python`` block runs in the document's namespace, in order; one written with ``>>>``
  prompts is a doctest, its output compared (``...`` matches anything).
- A ``python`` block that defines ``test_`` functions is a reader's test module: it is run by
  pytest in a fresh process, with the plugin's fixtures, and every test must pass.
- A ``python`` block that calls ``install_as_pymongo()`` is a program of its own, run in a
  fresh interpreter: it must exit 0 (its ``assert``s are the checks).
- A ``console`` block is a shell session: each ``$ singlemongo ...`` line runs the installed
  command, its output (stdout, then stderr) is compared with the lines under it, and its exit
  status must be 0 unless the line ends with ``# exit N``. ``$ export NAME=value`` sets the
  environment of the commands after it; ``$ echo TEXT | singlemongo ...`` feeds TEXT on stdin.
- ``shell`` blocks (installing, ``make``) are not run here: installing is what
  ``tests/test_packaging.py`` checks.
"""
import doctest
import os
import re
import shlex
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from sybil import Document, Sybil
from sybil.parsers.myst import CodeBlockParser, PythonCodeBlockParser

ROOT = Path(__file__).resolve().parent.parent
GUIDE_PORTS = (27017, 27018, 27019)  # the replica set the guides tell a reader to start
CHECKER = doctest.OutputChecker()
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
EXIT = re.compile(r"\s+# exit (\d+)$")


def _free_ports(count, low=20000, high=32000):
    """``count`` ports that are free now and outside the ephemeral range (32768 and up on
    Linux), where no test's server is given a port by the kernel between now and the setup."""
    import random
    import socket
    found = []
    for port in random.Random().sample(range(low, high), 200):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        found.append(port)
        if len(found) == count:
            return tuple(found)
    raise RuntimeError(f"no {count} free loopback ports between {low} and {high}")


class Addresses:
    """Where this run puts what the guides write as 127.0.0.1:27017-27019."""

    ports = None

    @classmethod
    def chosen(cls):
        if cls.ports is None:
            cls.ports = _free_ports(len(GUIDE_PORTS))
        return cls.ports

    @classmethod
    def rewrite(cls, text):
        for guide, port in zip(GUIDE_PORTS, cls.chosen()):
            text = text.replace(f"127.0.0.1:{guide}", f"127.0.0.1:{port}")
        return text


class RewrittenDocument(Document):
    """A document whose guide addresses are this run's (``Addresses``), before parsing, so
    examples and the outputs they show agree."""

    rewrite = Addresses.rewrite

    @classmethod
    def parse(cls, path, *parsers, encoding="utf-8"):
        with open(path, encoding=encoding) as source:
            document = cls(cls.rewrite(source.read()), path)
        for parser in parsers:
            for region in parser(document):
                document.add(region)
        return document


def setup(namespace):
    """Start the guides' replica set on this run's ports; the document's examples run
    against it."""
    from singlemongo.testing import ReplicaSet
    deployment = ReplicaSet(3)
    for server, port in zip(deployment.servers, Addresses.chosen()):
        server.port = port
    try:
        deployment.start()
    except OSError as exc:
        deployment.stop()
        raise RuntimeError(f"the documentation's examples could not start the guides' "
                           f"replica set on ports {Addresses.chosen()}: {exc}") from None
    namespace["__deployment__"] = deployment
    namespace["__environ__"] = {}
    namespace["__logging__"] = logging_state()
    # A topology cache an example writes goes to a directory of the document's own.
    namespace["__cache_home__"] = tempfile.TemporaryDirectory()
    namespace["__saved_cache_home__"] = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = namespace["__cache_home__"].name


def teardown(namespace):
    """Close what the examples left open, then stop the deployment."""
    from singlemongo import client_cache
    client_cache.clear()
    for value in list(namespace.values()):
        close = getattr(value, "close", None)
        if type(value).__name__ == "MongoClient" and close:
            close()
    namespace["__deployment__"].stop()
    restore_logging(namespace["__logging__"])
    saved = namespace["__saved_cache_home__"]
    if saved is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = saved
    namespace["__cache_home__"].cleanup()


def logging_state():
    """The root logger's level and handlers, and the driver's loggers' levels: an example
    that configures logging (the observability guide's) must not change later tests."""
    import logging
    root = logging.getLogger()
    names = [n for n in logging.root.manager.loggerDict if n.startswith("singlemongo")]
    return root.level, list(root.handlers), {n: logging.getLogger(n).level for n in names}


def restore_logging(state):
    import logging
    level, handlers, levels = state
    root = logging.getLogger()
    root.setLevel(level)
    for handler in root.handlers[:]:
        if handler not in handlers:
            root.removeHandler(handler)
    for name in logging.root.manager.loggerDict:
        if name.startswith("singlemongo"):
            logging.getLogger(name).setLevel(levels.get(name, logging.NOTSET))


def evaluate_python(example):
    """A test module runs under pytest; any other block runs in the namespace."""
    source = example.parsed
    if re.search(r"^def test_", source, re.M):
        return run_test_module(source)
    if "install_as_pymongo()" in source:
        return run_program(source)
    code = compile(source, example.path, "exec", dont_inherit=True)
    exec(code, example.namespace)


def run_test_module(source):
    """A reader's test module, run with pytest in a fresh process; all its tests pass."""
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "test_from_the_docs.py")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(source)
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               path], capture_output=True, text=True, timeout=120,
                              cwd=directory)
    if done.returncode != 0 or " passed" not in done.stdout:
        raise AssertionError(f"the example's tests did not all pass:\n{done.stdout}\n"
                             f"{done.stderr}")


def run_program(source):
    """A program that starts with ``install_as_pymongo()`` runs in a fresh interpreter, as it
    must be called before anything imports ``pymongo`` (this process has PyMongo loaded)."""
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                          timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"the program exited {done.returncode}:\n{done.stderr}")


def commands(source):
    """(command line, expected output) for each ``$`` line of a console block."""
    result = []
    for line in source.splitlines():
        if line.startswith("$ "):
            result.append([line[2:], []])
        elif result:
            result[-1][1].append(line)
        else:
            raise ValueError(f"a console block starts with a command, not {line!r}")
    return [(command, "\n".join(output).strip("\n")) for command, output in result]


def run_command(command, environ):
    """Run one command line as a shell would; (exit status, output)."""
    stdin = None
    if command.startswith("echo ") and " | " in command:
        echoed, command = command.split(" | ", 1)
        stdin = shlex.split(echoed)[1] + "\n"
    argv = shlex.split(command)
    if argv[0] != "singlemongo":
        raise ValueError(f"a console example runs singlemongo, not {argv[0]!r}")
    done = subprocess.run([sys.executable, "-m", "singlemongo", *argv[1:]], input=stdin,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, **environ})
    return done.returncode, (done.stdout + done.stderr).strip("\n")


def evaluate_console(example):
    """Each command's exit status and output are what the block shows."""
    environ = example.namespace["__environ__"]
    for line, expected in commands(example.parsed):
        wanted = EXIT.search(line)
        line = EXIT.sub("", line)
        if line.startswith("export "):
            name, _, value = line[len("export "):].partition("=")
            environ[name] = shlex.split(value)[0]
            continue
        status, output = run_command(line, environ)
        if status != (int(wanted.group(1)) if wanted else 0):
            raise AssertionError(f"$ {line}\nexited {status}:\n{output}")
        if not CHECKER.check_output(expected + "\n", output + "\n", FLAGS):
            raise AssertionError(f"$ {line}\nexpected:\n{textwrap.indent(expected, '  ')}\n"
                                 f"got:\n{textwrap.indent(output, '  ')}")


class PythonBlocks(PythonCodeBlockParser):
    """Sybil's python parser (doctests with ``>>>``), plain blocks through
    ``evaluate_python``."""

    def __init__(self):
        super().__init__(doctest_optionflags=FLAGS)
        self.codeblock_parser = CodeBlockParser("python", evaluate_python)


PARSERS = [PythonBlocks(), CodeBlockParser("console", evaluate_console)]


def sybil(patterns, excludes=()):
    """The Sybil collector for the given documents."""
    return Sybil(parsers=PARSERS, path=str(ROOT), patterns=patterns, excludes=list(excludes),
                 setup=setup, teardown=teardown, document_types={".md": RewrittenDocument})
