# bpe-lab: `make bench` runs the fastest variant on the shipped default corpus; `make test` runs the tests.
# Both create .venv on first use and install the project with its dev extras into it.
# `make` alone (or `make help`) lists the targets and their variables.

.DEFAULT_GOAL := help

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python

# The CLI words its hints for make (FORCE=1, not --force) when started from here (bpe/interface.py).
export BPE_VIA_MAKE := 1

VARIANT ?=
DATA    ?= gutenberg-sample
# default vocab: the data set's own (bpe/defaults.py: 10,000 for TinyStories and the Gutenberg corpora,
# 32,000 for OpenWebText), which every command prints in its header
VOCAB   ?=
REPEAT  ?= 3
WORKERS ?=
JSON    ?=
LIMIT   ?=
FUZZ_SCALE ?= 20
PEERS   ?=
# Measured durations on the 2-core machine (docs/lab.md, "The commands and how long they take"), said when
# a long target starts; report and walkthrough say theirs themselves, from the cost model, for what they run.
TEST_MINUTES     := 8

.PHONY: help shell bench lint test test-all test-debug fuzz venv clean profile report data reproduce figures ablation walkthrough benchmark benchmark-compare

# The install builds the compiled code (the compiled rungs' private parts, variants/_*.pyx; the encoder,
# bpe/io/_encoder.pyx; with the scanners they include from bpe/split/ and the hint from bpe/running/; with
# setuptools and Cython) when a C compiler is found, and goes on without it otherwise; an edit of their sources
# rebuilds them.
COMPILED_SOURCES := $(wildcard variants/_*.pyx variants/_*.h bpe/*/_*.pyx bpe/*/_*.pxi bpe/*/_*.h)
BUILT_SAYS := $(PY) -c 'from bpe.variants import v8_compiled as v8, v9_counting_compiled as v9; \
	print(v8.UNAVAILABLE or "v8 (the compiled merge) is built"); print(v9.UNAVAILABLE or "v9 (the compiled counter) is built")'
$(VENV)/.installed: pyproject.toml $(COMPILED_SOURCES)
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "bpe-lab needs Python 3.10+, found " + sys.version.split()[0])'
	@echo "first run: creating $(VENV) and installing bpe-lab with its dev extras, and building the compiled code: v8's and v10's merges, v9's counter and the encoder (pip's lines follow; about 2 min on 2 idle cores, longer on a busy machine)"
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check --progress-bar off -e '.[dev]'
	@touch $@
	@$(BUILT_SAYS)
	@echo "$(VENV) is ready"

# A venv made before a C compiler was installed lacks v8 and v9: `make venv` tries the build again.
venv: $(VENV)/.installed
	@$(PY) -c 'import bpe.variants._v8_merge, bpe.variants._v9_count, bpe.io._encoder, bpe.variants._v10_merge' 2>/dev/null || { \
		echo "v8 or v9 is not built: building the compiled rungs (pip install -e . again, about 40 s)"; \
		$(PY) -m pip install --disable-pip-version-check --progress-bar off --no-deps -e . && \
		$(BUILT_SAYS); }

# The walkthrough page's tests drive a real browser: Playwright (the `browser` extra) with Debian's chromium.
$(VENV)/.browser: $(VENV)/.installed
	@echo "installing Playwright (the browser extra) for the walkthrough page's browser tests, once (pip's lines follow)"
	$(PY) -m pip install --disable-pip-version-check --progress-bar off -e '.[browser]'
	@touch $@

help:
	@echo "bpe-lab: byte-level BPE training as a ladder of optimizations (README.md, docs/index.md)"
	@echo ""
	@echo "  make bench     time the fastest variant on DATA (VARIANT=v2 | v1,v2 | all, VOCAB, REPEAT, LIMIT, WORKERS, JSON, PEERS=1 or PEERS=rustbpe,tokenizers-file)"
	@echo "  make test      ruff, then the test suite without the slow tests, about $(TEST_MINUTES) min on 2 idle cores, longer on a busy machine (make test-all: every test; make fuzz: more generated corpora; make lint: ruff alone)"
	@echo "  make test-debug  the compiled rungs' tests against a build with bounds checks and AddressSanitizer, about 3 min (ASAN=0: without it; part of test-all)"
	@echo "  make benchmark the pytest-benchmark suite, saved in .benchmarks/ (ROUNDS); make benchmark-compare: the last two saved runs (RUNS=\"0001 0002\", THRESHOLD=median:10%, HISTOGRAM=1)"
	@echo "  make data      list the data sets; make data DATA=tinystories downloads one into data/ (offline: DATA=tinystories-synth SIZE=20MB generates a stand-in)"
	@echo "  make report    bench every variant, write out/report/report.md and its plots: slow, minutes, said as it starts (DATA, VOCAB, REPEAT, PEERS=1; PUBLISH=1: docs/)"
	@echo "  make reproduce each step of the article series on the ladder: their ratio beside yours, stage by stage, and why they differ; out/articles.md and .csv (QUICK=1, PUBLISH=1; docs/articles.md)"
	@echo "  make ablation  v6 without each of its techniques, beside v5 and v6: docs/v6-ablation.json (GUTENBERG, REPEAT, WORKERS; RUNG=v8 or v10: without each trick, docs/RUNG-ablation.json)"
	@echo "  make walkthrough  the class page: one HTML page stepping through corpus-en's merges at vocab 400, each rung's work counted, in seconds (FULL=1: DATA's at its vocab, minutes; DATA, VOCAB, VARIANT, BENCH=bench.json, OUT=page.html)"
	@echo "  make figures   rewrite the figures the pages quote from the committed result files (python -m tools.figures checks them)"
	@echo "  make profile   scalene profile of one variant into out/profiles/: make profile VARIANT=v2 (DATA, VOCAB, WORKERS; PUBLISH=1: profiles/)"
	@echo "  make venv      create .venv and install the project into it, about 2 min on 2 idle cores, longer on a busy machine (the other targets do this on first use)"
	@echo "  make shell     a shell with .venv first on PATH, so bpe and python are the project's"
	@echo "  make clean     remove .venv and caches"
	@echo ""
	@echo "DATA defaults to gutenberg-sample; VOCAB to the data set's default (10,000; 32,000 for OpenWebText)."
	@echo "A run estimated past 10 minutes asks for FORCE=1 (python -m bpe estimate --data NAME shows each variant's estimate)."
	@echo "Without make: .venv/bin/bpe train ..., or source .venv/bin/activate and then bpe ... / python -m bpe ..."

# A child shell with the venv's bin first on PATH (what `source .venv/bin/activate` does); `exit` leaves it.
shell: $(VENV)/.installed
	@echo "bpe-lab shell: bpe and python are .venv's; type exit to leave"
	@VIRTUAL_ENV="$(abspath $(VENV))" PATH="$(abspath $(VENV))/bin:$$PATH" $${SHELL:-/bin/sh}

# The command is built in a variable and echoed as one line (a recipe split over lines would be echoed
# with the blank lines its empty $(if)s leave). REPEAT goes on only when given (bench's default is 3 too), so
# that a hint repeating the command names only what was typed.
BENCH_CMD = $(PY) -m bpe bench $(if $(VARIANT),--variant $(VARIANT)) --data $(DATA) \
	$(if $(VOCAB),--vocab-size $(VOCAB)) $(if $(filter command line environment,$(origin REPEAT)),--repeat $(REPEAT)) \
	$(if $(WORKERS),--workers $(WORKERS)) $(if $(JSON),--json $(JSON)) \
	$(if $(LIMIT),--limit $(LIMIT)) $(if $(PEERS),--peers $(if $(filter 1,$(PEERS)),all,$(PEERS))) $(if $(FORCE),--force)

bench: $(VENV)/.installed
	@echo '$(strip $(BENCH_CMD))'
	@$(BENCH_CMD)

# `make data DATA=tinystories` downloads a data set into data/; `make data` alone lists them all;
# `make data DATA=webtext-synth SIZE=20MB` generates data/webtext-synth-20MB.txt (default 100MB).
SIZE    ?=
data: $(VENV)/.installed
	$(PY) -m bpe data $(if $(filter command line environment,$(origin DATA)),get $(DATA) $(if $(SIZE),--size $(SIZE)),list)

# -u: pytest's progress reaches a pipe or a log as it happens, not in blocks.
# ruff (pyproject.toml's [tool.ruff]: lines, unused names, imports sorted and at the top), in a second;
# make test runs it first.
lint: $(VENV)/.installed
	$(PY) -m ruff check .

test: $(VENV)/.installed $(VENV)/.browser
	@echo "running ruff, then the tests without the slow ones (about $(TEST_MINUTES) min on 2 idle cores, longer on a busy machine; one dot per test)"
	$(PY) -m ruff check .
	$(PY) -u -m pytest -q -m "not slow"

test-all: $(VENV)/.installed $(VENV)/.browser test-debug
	@echo "running every test, the slow ones too (several times as long as make test; one dot per test)"
	$(PY) -u -m pytest -q

# The compiled rungs' tests against a debug build of them (tools/builds.py, docs/reliability.md): Cython's
# bounds checks and C asserts on, and AddressSanitizer watching the C arrays (ASAN=0: without it), built into
# out/debug-build/; the rungs' own build in .venv is not touched. About 3 min on 2 cores, so make test-all
# runs it and make test does not.
ASAN ?= 1
DEBUG_TESTS := tests/variants/test_v8.py tests/variants/test_v9.py tests/variants/test_v10.py tests/io/test_encode.py \
	tests/split/test_scanners.py
test-debug: $(VENV)/.installed
	@echo "the compiled rungs built with bounds checks$(if $(filter 1,$(ASAN)), and AddressSanitizer,) into out/debug-build/, and their tests run against that build (about 3 min on 2 cores)"
	$(PY) -m tools.builds $(if $(filter 1,$(ASAN)),--asan) -- -q $(DEBUG_TESTS)

# The pytest-benchmark suite (tools/benchmarks/; docs/lab.md, "Tracking a change across commits"): each rung and
# peer in each regime, ROUNDS rounds, saved in .benchmarks/ (git-ignored); at most about 5 minutes on an idle
# 2-core machine (BPE_BENCH_SIZE=tiny: seconds).  benchmark-compare: the last two saved runs, or RUNS="0001 0002";
# THRESHOLD=median:10% exits 1 past it (pytest-benchmark's --benchmark-compare-fail rule); HISTOGRAM=1 writes
# out/benchmarks/histogram-*.svg (or HISTOGRAM=PREFIX).
ROUNDS    ?= 3
RUNS      ?=
THRESHOLD ?=
HISTOGRAM ?=
BENCHMARK_CMD = $(PY) -m pytest tools/benchmarks -q --benchmark-only --benchmark-autosave --benchmark-min-rounds=$(ROUNDS) \
	--benchmark-sort=name --benchmark-columns=median,min,max,iqr,rounds
COMPARE_CMD = $(PY) -m tools.benchmarks.compare $(RUNS) $(if $(THRESHOLD),--fail $(THRESHOLD)) \
	$(if $(HISTOGRAM),--histogram $(if $(filter 1,$(HISTOGRAM)),out/benchmarks/histogram,$(HISTOGRAM)))

benchmark: $(VENV)/.installed
	@echo '$(strip $(BENCHMARK_CMD))'
	@$(BENCHMARK_CMD)

benchmark-compare: $(VENV)/.installed
	@echo '$(strip $(COMPARE_CMD))'
	@$(COMPARE_CMD)

# Teaching and reports: scalene profile of one variant; the all-variant report with plots.
V1_VOCAB ?=

# Both write under out/ (not in git); PUBLISH=1 rewrites the committed profiles/ or docs/ files, and is
# refused from a tree with uncommitted changes. OUT=DIR names another directory (the web report: OUT=docs/web).
PUBLISH ?=
OUT     ?=

profile: $(VENV)/.installed
	$(PY) -m bpe profile $(if $(VARIANT),--variant $(VARIANT)) --data $(DATA) $(if $(VOCAB),--vocab-size $(VOCAB)) \
		$(if $(WORKERS),--workers $(WORKERS)) $(if $(FORCE),--force) $(if $(PUBLISH),--publish) $(if $(OUT),--out-dir $(OUT))

report: $(VENV)/.installed
	@echo "benching every variant for the report (its first line says how long on idle cores, which a busy machine stretches; each run shows its line)"
	$(PY) -m bpe report --data $(DATA) $(if $(VOCAB),--vocab-size $(VOCAB)) $(if $(V1_VOCAB),--v1-vocab-size $(V1_VOCAB)) \
		$(if $(filter command line environment,$(origin REPEAT)),--repeat $(REPEAT)) $(if $(WORKERS),--workers $(WORKERS)) \
		$(if $(PEERS),--peers) $(if $(VARIANT),--variant $(VARIANT)) $(if $(FORCE),--force) \
		$(if $(PUBLISH),--publish) $(if $(OUT),--out-dir $(OUT))

# Each optimization step of the article series, measured on the ladder (docs/articles.md): ~5 min on an
# idle 2-core machine (plus generating its data the first time); writes out/articles-bench.json, out/articles.md and
# out/articles.csv (a coursework table) and out/articles-merge-cost.png, or the committed docs/articles-bench.json
# and plot with PUBLISH=1 (from a clean tree), after which `make figures` rewrites the figures the pages quote from it.
reproduce: $(VENV)/.installed
	@echo "measuring each step of the articles (about 5 min on an idle 2-core machine; slow)"
	$(PY) -m tools.reproduce $(if $(PUBLISH),--publish) $(if $(QUICK),--quick) $(if $(WORKERS),--workers $(WORKERS))

# v6 without each of its techniques, beside v5 and v6 (docs/v6.md, "What each technique buys"): rewrites
# docs/v6-ablation.json, then `make figures`. Gutenberg-like text at vocab 10,000 (GUTENBERG: the data set
# or a path to gutenberg-books.txt) and web-like at 32,000; about 10 minutes on an idle 2-core machine.
# RUNG=v8: v8 without each of its tricks (docs/v8.md, "What each trick buys"), each row v8's merge built again
# into out/v8-ablation/ with one trick off (about 30 s, once), into docs/v8-ablation.json. RUNG=v10: v10 without
# each of its ideas, beside v9 (docs/v10.md), into docs/v10-ablation.json.
GUTENBERG ?= gutenberg-books
RUNG      ?= v6
ABLATION_SAYS_v6 := v6 without each of its techniques (about 10 min on an idle 2-core machine; slow)
ABLATION_SAYS_v8 := v8 without each of its tricks (about 3 min on 2 cores, its builds included; slow)
ABLATION_SAYS_v10 := v10 without each of its ideas, beside v9 (about 5 min on idle 2 cores, its builds included; slow)
ablation: $(VENV)/.installed
	@echo "$(or $(ABLATION_SAYS_$(RUNG)),RUNG is v6, v8 or v10, not $(RUNG))"
	$(PY) -m tools.ablation $(if $(filter-out v6,$(RUNG)),--rung $(RUNG)) --data $(GUTENBERG) --vocab-size 10000 \
		--data webtext-synth-20MB --vocab-size 32000 --repeat $(REPEAT) $(if $(WORKERS),--workers $(WORKERS)) \
		--json $(or $(JSON),docs/$(RUNG)-ablation.json)

# One self-contained page for a class (docs/walkthrough.md): out/walkthrough.html unless OUT names another.
# Without DATA, the class page (corpus-en at vocab 400, in seconds); FULL=1 or DATA=NAME: that data at its
# vocab (FULL=1: DATA's default, gutenberg-sample at 10,000, minutes: each rung counted for at most 60 s).
# BENCH names the bench or report JSON whose stage times the summary shows (default docs/report-bench.json).
BENCH   ?=
FULL    ?=
WALKTHROUGH_CMD = $(PY) -m bpe walkthrough $(if $(or $(FULL),$(filter command line environment,$(origin DATA))),--data $(DATA)) \
	$(if $(VOCAB),--vocab-size $(VOCAB)) $(if $(VARIANT),--variant $(VARIANT)) $(if $(BENCH),--bench $(BENCH)) \
	--out $(or $(OUT),out/walkthrough.html)
walkthrough: $(VENV)/.installed
	@echo '$(strip $(WALKTHROUGH_CMD))'
	@$(WALKTHROUGH_CMD)

figures: $(VENV)/.installed
	$(PY) -m tools.figures --update

# The equivalence property tests with FUZZ_SCALE times as many generated corpora as CI runs.
fuzz: $(VENV)/.installed
	BPE_FUZZ_SCALE=$(FUZZ_SCALE) $(PY) -m pytest -q tests/ladder/test_equivalence.py tests/lab/measure/test_estimate.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis .benchmarks *.egg-info
