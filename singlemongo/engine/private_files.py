"""Files only the current user controls: the topology cache is trusted with where a one-off
insert, and its SCRAM exchange, are sent, so a file another user could have planted or
changed is never read.

A file is trusted when it is a regular file (not a symlink: opened with O_NOFOLLOW; not a
FIFO or device: opened with O_NONBLOCK, checked once open), owned by
the current user, and not writable by group or others. A bare name (no directory) lives in
the user's private cache directory, ``$XDG_CACHE_HOME/singlemongo`` (``~/.cache/singlemongo``;
``$TMPDIR/singlemongo-UID`` for a user without a writable home), created with mode 0700; files are written with mode 0600, atomically, and a failed write
leaves no temporary file behind.
"""
import _thread
import os
import stat

PRIVATE_DIR_MODE = 0o700


class UntrustedFile(Exception):
    """The file exists but must not be trusted (the message says why)."""


def resolve(name, environ=None, suffix=""):
    """The path for a configured name: a bare name goes to the private cache directory (with
    ``suffix`` unless it ends with it)."""
    if os.sep in name or (os.altsep and os.altsep in name):
        return os.path.abspath(os.path.expanduser(name))
    filename = name if name.endswith(suffix) else name + suffix
    return os.path.join(cache_directory(os.environ if environ is None else environ), filename)


def cache_directory(environ, writable=None):
    """Where bare names live: ``$XDG_CACHE_HOME/singlemongo``; else ``~/.cache/singlemongo``
    when the home directory can hold it; else ``singlemongo-UID`` in the temporary directory
    (``$TMPDIR``, else /tmp), for a user whose home it cannot write: a web server's user
    (www-data's home, /var/www, is not its own) or nobody (/nonexistent). ``writable(path)``
    says whether this process may write ``path`` (``os.access``)."""
    writable = writable or (lambda path: os.access(path, os.W_OK))
    if environ.get("XDG_CACHE_HOME"):
        return os.path.join(environ["XDG_CACHE_HOME"], "singlemongo")
    home = environ.get("HOME") or os.path.expanduser("~")
    cache = os.path.join(home, ".cache")
    if writable(os.path.join(cache, "singlemongo")) or writable(cache) or \
            (not os.path.exists(cache) and writable(home)):
        return os.path.join(cache, "singlemongo")
    owner = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return os.path.join(environ.get("TMPDIR") or "/tmp", f"singlemongo-{owner}")


def _check(st, what):
    """Why a stat result is not private to this user, or None."""
    getuid = getattr(os, "getuid", None)
    if getuid is not None and st.st_uid != getuid():
        return f"{what} is owned by uid {st.st_uid}, not by this user (uid {getuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{what} is writable by group or others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


_READ = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
         | getattr(os, "O_NONBLOCK", 0))


def read_private(path, limit=1 << 20):
    """The file's bytes; FileNotFoundError if absent, UntrustedFile if it cannot be trusted."""
    try:
        # O_NONBLOCK: a FIFO planted at the path would block open() for ever (issue 46);
        # a regular file reads the same with it, and anything else is refused below.
        fd = os.open(path, _READ)
    except OSError:
        if os.path.islink(path):
            raise UntrustedFile("it is a symbolic link") from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UntrustedFile("it is not a regular file")
        problem = _check(st, "it")
        if problem:
            raise UntrustedFile(problem)
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(limit + 1)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise UntrustedFile(f"it is larger than {limit} bytes")
    return data


def _private_directory(directory, create):
    if create:
        os.makedirs(directory, mode=PRIVATE_DIR_MODE, exist_ok=True)
    problem = _check(os.stat(directory), f"directory {directory!r}")
    if problem:
        raise UntrustedFile(problem)


_EXCLUSIVE = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
              | getattr(os, "O_CLOEXEC", 0))


def write_private(path, data, private_directory=False):
    """Write ``data`` (bytes) atomically with mode 0600; the temporary file never outlives a
    failure. The temporary file is named for this process and thread and created
    exclusively (never through a link), which is what ``tempfile`` would give at the cost of importing it
    (with ``random`` and ``shutil``) in every process that writes the cache."""
    directory = os.path.dirname(path)
    if private_directory:
        _private_directory(directory, create=True)
    tmp = os.path.join(directory, f".singlemongo-{os.path.basename(path)}.{os.getpid()}."
                                  f"{_thread.get_ident()}.tmp")
    try:
        fd = os.open(tmp, _EXCLUSIVE, 0o600)
    except FileExistsError:  # left by a process that died with these ids: ours to replace
        os.unlink(tmp)
        fd = os.open(tmp, _EXCLUSIVE, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
