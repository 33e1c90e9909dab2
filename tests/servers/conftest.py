"""The web servers tier: the guides' CGI and WSGI examples under Apache (CGI, mod_wsgi
embedded and daemon), gunicorn (sync, with and without --preload, and gevent) and uWSGI (with
and without lazy-apps), started by tools/webservers.py on free loopback ports and stopped by
their PIDs, against a simulated replica set.

``make test`` collects this tier and skips it, with the reason printed at the end of the run:
it needs the servers from Debian's packages and PyPI. ``make test-servers`` installs them and
sets SINGLEMONGO_SERVERS_TIER=1; then a server that cannot run fails the run instead."""
import os

import pytest

REQUIRED = os.environ.get("SINGLEMONGO_SERVERS_TIER") == "1"


def pytest_collection_modifyitems(config, items):
    if REQUIRED:
        return
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.skip(
                reason="web servers tier: run by `make test-servers` (Apache, mod_wsgi, "
                       "gunicorn and uWSGI from Debian's packages and PyPI)"))
