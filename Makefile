PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.demo-installed

.PHONY: test demo bench fuzz clean docs docs-check dist pymongo-suite ferretdb test-ferretdb \
	test-mongosh pymongo-suite-ferretdb test-servers

$(STAMP): setup.cfg pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e '.[test]' > $(VENV)/install.log 2>&1 \
		|| (cat $(VENV)/install.log; exit 1)
	touch $(STAMP)

# Two workers, a test file's tests on one worker (their module fixtures stay shared).
test: $(STAMP)
	$(PY) -m pytest -q -n 2 --dist loadfile

# 5,000 examples per property (1,000 per differential one, PyMongo against singlemongo), new
# ones each run (make test and the tiers draw the same ones every run), and a one-minute soak
# (signals, resets, hangs).
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz SINGLEMONGO_SOAK_SECONDS=60 $(PY) -m pytest -q -p no:timeout \
		tests/test_properties.py tests/test_differential.py tests/test_differential_commands.py \
		tests/test_soak.py

# PyMongo's own synchronous test suite (every test/test_*.py of its sdist), with PyMongo and
# with singlemongo (install_as_pymongo), each on a simulated replica set of its own, the two at
# once; prints the per-module table, the tests of PyMongo internals and the documented
# differences with the reason of each, the unified-format runner's count, the regressions
# still open, and the regressions. About 32 minutes; not part of make test. Exit status 1 on a
# regression that is not listed.
pymongo-suite: $(STAMP)
	$(PY) -m tests.pymongo_suite.compare

clean:
	rm -rf $(VENV) $(BENCH_VENV) $(DOCS_VENV) *.egg-info .pytest_cache docs/_build dist

# FerretDB v1.24.2, the real server of the FerretDB tier, from the Go module proxy (Go 1.26),
# into .ferretdb/ (git-ignored, kept between runs). The module's archive lacks the generated
# build/version/version.txt that its main package reads at start (a binary from
# `go install .../cmd/ferretdb@v1.24.2` panics there), so the module is downloaded, copied,
# given that file as FerretDB's build/version documentation says, and built.
FERRETDB_VERSION := v1.24.2
FERRETDB := .ferretdb/bin/ferretdb

$(FERRETDB):
	@command -v go > /dev/null || { echo "make: Go 1.26 is needed to build FerretDB $(FERRETDB_VERSION) (https://go.dev/dl/)"; exit 1; }
	rm -rf .ferretdb/src
	mkdir -p .ferretdb/bin
	go mod download -json github.com/FerretDB/FerretDB@$(FERRETDB_VERSION) > .ferretdb/module.json
	cp -r "$$($(PYTHON) -c 'import json; print(json.load(open(".ferretdb/module.json"))["Dir"])')" .ferretdb/src
	chmod -R u+w .ferretdb/src
	echo $(FERRETDB_VERSION) > .ferretdb/src/build/version/version.txt
	cd .ferretdb/src && go build -trimpath -o ../bin/ferretdb.tmp ./cmd/ferretdb
	mv .ferretdb/bin/ferretdb.tmp $(FERRETDB)
	rm -rf .ferretdb/src

# Build FerretDB if needed, start it on free loopback ports (SQLite in a temporary directory,
# telemetry off, no debug listener, a plain and a TLS listener, SCRAM with a setup user), print
# how to connect, and stop it (by its PID) at Ctrl-C.
ferretdb: $(FERRETDB)
	$(PYTHON) -m tools.ferretdb

# The FerretDB tier (tests/ferretdb), run by .ci/run: the face against PyMongo on FerretDB,
# the differential properties, the guides' examples, the handshake, SCRAM, TLS and the CLI
# against FerretDB's own implementation, and the simulator judged against it. It fails when
# FerretDB cannot be built or started; `make test` skips it and says why.
test-ferretdb: $(STAMP) $(FERRETDB)
	SINGLEMONGO_FERRETDB_TIER=1 $(PY) -m pytest -q -p no:cacheprovider tests/ferretdb

# The same against FerretDB, a real server (one for each driver, no authentication), in
# place of the simulated replica set: PyMongo is the control on its own FerretDB. Needs
# `make ferretdb`'s binary; MODULES="test_collection test_cursor" runs some modules only.
# Run by .ci/run (about 8 minutes): a regression beyond the listed ones fails CI.
pymongo-suite-ferretdb: $(STAMP) $(FERRETDB)
	PYMONGO_SUITE_SERVER=ferretdb $(PY) -m tests.pymongo_suite.compare $(MODULES)

# mongosh (MongoDB's shell) and the official Node.js driver, from npm into .mongosh/
# (git-ignored, kept between runs).
MONGOSH_VERSION := 2.12.0
NODE_DRIVER_VERSION := 7.9.1
MONGOSH := .mongosh/node_modules/.bin/mongosh

$(MONGOSH):
	@command -v npm > /dev/null || { echo "make: npm is needed to install mongosh $(MONGOSH_VERSION)"; exit 1; }
	mkdir -p .mongosh
	npm install --prefix .mongosh --no-audit --no-fund --loglevel=error mongosh@$(MONGOSH_VERSION) \
		mongodb@$(NODE_DRIVER_VERSION)

# The mongosh tier (tests/mongosh), run by .ci/run: mongosh's everyday calls and the Node.js
# driver's against `singlemongo serve`. `make test` skips it and says why.
test-mongosh: $(STAMP) $(MONGOSH)
	SINGLEMONGO_MONGOSH_TIER=1 $(PY) -m pytest -q -p no:cacheprovider tests/mongosh

# The web servers tier (tests/servers), run by .ci/run: the guides' CGI and WSGI examples
# under Apache (CGI, mod_wsgi embedded and daemon), gunicorn (sync, --preload, gevent) and
# uWSGI (with and without lazy-apps), on loopback, under load and through a failover.
# Apache and mod_wsgi from Debian's packages (installed when missing, as root); gunicorn and
# uWSGI from PyPI (the servers extra). Apache's user (www-data) runs the system's Python, with
# the checkout installed regularly into a virtual environment under $TMPDIR (or /tmp), which
# that user can read wherever the checkout lies; reinstalled each run.
# `make test` skips the tier and says why.
WWW_VENV = $(shell $(PY) -c 'from tools.webservers import WWW_VENV; print(WWW_VENV)')
SYSTEM_PYTHON ?= /usr/bin/python3
SERVERS_STAMP := $(VENV)/.servers-installed
APACHE_PACKAGES := apache2 libapache2-mod-wsgi-py3 python3-venv

$(SERVERS_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[servers]' >> $(VENV)/install.log 2>&1 \
		|| (cat $(VENV)/install.log; exit 1)
	touch $(SERVERS_STAMP)

test-servers: $(SERVERS_STAMP)
	(test -f /usr/lib/apache2/modules/mod_wsgi.so && $(SYSTEM_PYTHON) -c 'import ensurepip') \
		|| DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		$(APACHE_PACKAGES) > /dev/null 2>&1 || (apt-get update > /dev/null && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		$(APACHE_PACKAGES) > /dev/null)
	test -x $(WWW_VENV)/bin/python || $(SYSTEM_PYTHON) -m venv $(WWW_VENV)
	$(WWW_VENV)/bin/python -m pip install --quiet . > $(WWW_VENV)/install.log 2>&1 \
		|| (cat $(WWW_VENV)/install.log; exit 1)
	$(WWW_VENV)/bin/python -m pip install --quiet --no-deps --force-reinstall . \
		>> $(WWW_VENV)/install.log 2>&1 || (cat $(WWW_VENV)/install.log; exit 1)
	SINGLEMONGO_SERVERS_TIER=1 $(PY) -m pytest -q -p no:cacheprovider tests/servers

# The demo needs the driver and the simulated deployment only (the testing extra), not the
# test toolchain: a fresh clone runs it after a small install. `make test` adds the rest.
$(DEMO_STAMP): setup.cfg pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	test -f $(STAMP) || $(PY) -m pip install --quiet -e '.[testing]' > $(VENV)/install.log 2>&1 \
		|| (cat $(VENV)/install.log; exit 1)
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(PY) -m singlemongo.demo

# The documentation site: the guides (docs/*.md) and the API reference from the docstrings,
# built by Sphinx (the docs extra, in the test extra too) with warnings as errors, as
# tests/test_docs.py builds it in make test.
# The site needs the docs extra only (Sphinx, MyST, Furo; the API reference imports the
# driver, not the testing extra), in a virtual environment of its own.
DOCS_VENV := .venv-docs
DOCS_STAMP := $(DOCS_VENV)/.installed

$(DOCS_STAMP): setup.cfg pyproject.toml
	test -x $(DOCS_VENV)/bin/python || $(PYTHON) -m venv $(DOCS_VENV)
	$(DOCS_VENV)/bin/python -m pip install --quiet -e '.[docs]' > $(DOCS_VENV)/install.log 2>&1 \
		|| (cat $(DOCS_VENV)/install.log; exit 1)
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	$(DOCS_VENV)/bin/python -m sphinx -W --keep-going -q -b html docs docs/_build/html
	@echo "documentation site: docs/_build/html/index.html"

# Screenshots of the built site in headless Chromium (Debian's chromium package), at desktop
# and phone widths, into docs/_build/screenshots/: to look at, not part of make test.
docs-check: docs
	$(PY) docs/screenshots.py docs/_build/html docs/_build/screenshots

# The sdist and the wheel (python -m build), checked with twine; into dist/.
dist: $(STAMP)
	$(PY) -m pip install --quiet -e '.[release]' >> $(VENV)/install.log 2>&1 \
		|| (cat $(VENV)/install.log; exit 1)
	rm -rf dist
	$(PY) -m build --outdir dist .
	$(PY) -m twine check --strict dist/*

# Measured as users get it: a regular install (not editable) into its own venv, bytecode
# compiled and cached, PYTHONDONTWRITEBYTECODE unset. The checkout is reinstalled each run.
# `make bench PYTHON=python3.12` measures under that Python, in a venv of its own; with
# BENCH_ROWS=paths in the environment (`BENCH_ROWS=paths make bench PYTHON=python3.12`) only
# the plain and production-path rows run (each Python's quick check); with BENCH_ROWS=steady
# only the steady-state rows (find_one, insert_many, iterating, bulk_write, client bulk_write,
# update_many, delete_many, aggregate: client CPU and client instructions against PyMongo's).
BENCH_VENV := .bench-venv-$(notdir $(PYTHON))
bench:
	test -x $(BENCH_VENV)/bin/python || $(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install --quiet '.[testing]' pymongo-auth-aws \
		> $(BENCH_VENV)/install.log 2>&1 \
		|| (cat $(BENCH_VENV)/install.log; exit 1)
	$(BENCH_VENV)/bin/python -m pip install --quiet --no-deps --force-reinstall . \
		>> $(BENCH_VENV)/install.log 2>&1 || (cat $(BENCH_VENV)/install.log; exit 1)
	cd bench && env -u PYTHONDONTWRITEBYTECODE -u PYTHONPATH ../$(BENCH_VENV)/bin/python run.py
