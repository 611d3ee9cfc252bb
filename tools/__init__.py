"""The project's own page-makers: what keeps bpe-lab's pages and committed result files true, not what a
user runs.  ``pip install .`` does not ship this folder; it runs from a checkout, as ``python -m tools.NAME``
or through make.  It imports ``bpe``; nothing in ``bpe`` imports it.

* ``figures``: every figure a page quotes, checked against (``--update``: rewritten from) its committed
  result file (``make figures``); ``keypath``: a value in a result file named by its key path;
* ``staleness``: the figures measured before the code they measured last changed, unless their section
  says the commit they were measured at;
* ``reproduce``: each step of the article series measured on the ladder (``make reproduce``);
  ``reproduce_steps``: the steps, their data, why the ratios differ, the articles' own ratios;
* ``ablation`` (a package): v6 without each of its techniques, v8 without each of its tricks
  (``make ablation``); ``builds``: the compiled modules built again into ``out/`` (v8 with a trick off,
  and the debug build ``make test-debug`` runs the tests against);
* ``merge_cost``: merge algorithms alone on the same pre-token counts, for tuning;
* ``calibrate``: the cost model's timed runs beside its estimates (docs/estimate-calibration.json);
* ``pretokenize_ratio``: the fast pre-tokenizer against the plain one, per kind of text (``text_kinds``
  makes each kind);
* ``cluster_bench``: shards counted on a Dask ``LocalCluster`` against the local path;
* ``sample_memory``: a command's whole process tree's memory, sampled while it runs (the large runs);
  ``whole_process``: ``bpe train`` against a peer's own process, start-up counted, and the first call's fixed cost;
* ``command``: how a tool runs from the shell, its errors in one line as ``bpe``'s.

Example: ``python -m tools.figures`` (check) or ``make figures`` (rewrite).
"""
