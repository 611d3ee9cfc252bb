# bpe-lab: `make bench` runs the fastest variant on the shipped default corpus; `make test` runs the tests.
# Both create .venv on first use and install the project with its dev extras into it.

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python

VARIANT ?=
DATA    ?= gutenberg-sample
VOCAB   ?=
# default vocab: 5000 for bench (v6 takes seconds), 2000 for profile and report (they run v2-v4 too)
BENCH_VOCAB  = $(or $(VOCAB),5000)
REPORT_VOCAB = $(or $(VOCAB),2000)
REPEAT  ?= 3
WORKERS ?=
JSON    ?=
LIMIT   ?=
FUZZ_SCALE ?= 20
PEERS   ?=

.PHONY: bench test test-all fuzz venv clean profile report data

$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "bpe-lab needs Python 3.10+, found " + sys.version.split()[0])'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	@touch $@

venv: $(VENV)/.installed

bench: $(VENV)/.installed
	$(PY) -m bpe bench $(if $(VARIANT),--variant $(VARIANT)) --data $(DATA) --vocab-size $(BENCH_VOCAB) \
		--repeat $(REPEAT) $(if $(WORKERS),--workers $(WORKERS)) $(if $(JSON),--json $(JSON)) \
		$(if $(LIMIT),--limit $(LIMIT)) $(if $(PEERS),--peers)

# `make data DATA=tinystories` downloads a data set into data/; `make data` alone lists them all;
# `make data DATA=webtext-synth SIZE=20MB` generates data/webtext-synth-20MB.txt (default 100MB).
SIZE    ?=
data: $(VENV)/.installed
	$(PY) -m bpe data $(if $(filter command line environment,$(origin DATA)),get $(DATA) $(if $(SIZE),--size $(SIZE)),list)

test: $(VENV)/.installed
	$(PY) -m pytest -q -m "not slow"

test-all: $(VENV)/.installed
	$(PY) -m pytest -q

# Teaching and reports (issue 5): scalene profile of one variant; the all-variant report with plots.
V1_VOCAB ?= 300

profile: $(VENV)/.installed
	@test -n "$(VARIANT)" || { echo "make profile needs VARIANT=vN (e.g. make profile VARIANT=v2)"; exit 2; }
	$(PY) -m bpe.lab.profiling run --variant $(VARIANT) --data $(DATA) --vocab-size $(REPORT_VOCAB) \
		$(if $(WORKERS),--workers $(WORKERS))

report: $(VENV)/.installed
	$(PY) -m bpe report --data $(DATA) --vocab-size $(REPORT_VOCAB) --v1-vocab-size $(V1_VOCAB) \
		--repeat $(REPEAT) $(if $(WORKERS),--workers $(WORKERS)) $(if $(PEERS),--peers)

# The equivalence property tests with FUZZ_SCALE times as many generated corpora as CI runs.
fuzz: $(VENV)/.installed
	BPE_FUZZ_SCALE=$(FUZZ_SCALE) $(PY) -m pytest -q tests/test_equivalence.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .benchmarks *.egg-info
