PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo bench fuzz clean docs

$(STAMP): setup.cfg pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet -e '.[test]' > $(VENV)/install.log 2>&1 \
		|| (cat $(VENV)/install.log; exit 1)
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -q

# 5,000 examples per property, and a one-minute soak (signals, resets, hangs).
fuzz: $(STAMP)
	HYPOTHESIS_PROFILE=fuzz SINGLEMONGO_SOAK_SECONDS=60 $(PY) -m pytest -q -p no:timeout \
		tests/test_properties.py tests/test_soak.py

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache

demo: $(STAMP)
	$(PY) -m singlemongo.demo

# The API reference, generated from the docstrings (pdoc, from the test extra).
docs: $(STAMP)
	$(PY) docs/build.py docs/api
	@echo "API reference: docs/api/index.html"

bench: $(STAMP)
	cd bench && ../$(PY) run.py
