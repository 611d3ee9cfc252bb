"""The measuring pipeline the commands are built on: each candidate timed, compared and written down.

* ``plan``: the pipeline every measuring command describes: its settings checked once, its candidates run in turns;
  ``bench``: ``run_bench``, each candidate timed stage by stage, its tables printed; ``result``: its result,
  typed, and the JSON it writes; ``table``: the one table writer (terminal and Markdown); ``busy``: cores
  kept busy meanwhile (``--busy``); ``timed_run``: one run in a fresh process (started by
  :mod:`bpe.lab.fresh_process`); ``spread``: runs
  summarized, and the one rule for comparing them;
  ``publish``: where a run writes, stamped with machine, commit and merges digest;
* ``report``: every rung on the same data, in ``out/report/report.md`` (``report_plots``: its plots);
* ``peers``: the Rust trainers on the same data, and tiktoken beside ``bpe encode``;
  ``profiling``: scalene summaries in ``out/profiles/``;
* ``estimate``: a run's time and memory before it starts (the cost model, and what it takes of the data,
  measured on a sample and extrapolated); ``candidate_estimate``: every candidate's estimate (a rung's from its
  model, your own trainer timed on a prefix).
"""
