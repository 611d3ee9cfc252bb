# bpe-lab: `make bench` runs the fastest variant on the shipped default corpus; `make test` runs the tests.
# Both create .venv on first use and install the project with its dev extras into it.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python

VARIANT ?=
DATA    ?= gutenberg-sample
VOCAB   ?= 5000
REPEAT  ?= 3
WORKERS ?=
JSON    ?=
PEERS   ?=

.PHONY: bench test test-all venv clean

$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "bpe-lab needs Python 3.10+, found " + sys.version.split()[0])'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $@

venv: $(VENV)/.installed

bench: $(VENV)/.installed
	$(PY) -m bpe bench $(if $(VARIANT),--variant $(VARIANT)) --data $(DATA) --vocab-size $(VOCAB) \
		--repeat $(REPEAT) $(if $(WORKERS),--workers $(WORKERS)) $(if $(JSON),--json $(JSON)) $(if $(PEERS),--peers)

test: $(VENV)/.installed
	$(PY) -m pytest -q -m "not slow"

test-all: $(VENV)/.installed
	$(PY) -m pytest -q

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .benchmarks *.egg-info
