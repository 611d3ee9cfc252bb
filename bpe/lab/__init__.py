"""The lab: tools that measure, explain and compare training; training never imports them.

* ``plan``: the settings every measuring command checks once, and its candidates run in turns;
  ``bench``: ``run_bench``, each candidate timed stage by stage, its tables printed; ``busy``: cores
  kept busy meanwhile (``--busy``); ``timed_run``: one run in a fresh process; ``spread``: runs summarized, and the
  one rule for comparing them; ``correctness``: every run's merges against the reference's; ``publish``:
  where a run writes, stamped with machine, commit and merges digest; ``report``: every rung on the same
  data, in ``out/report/report.md`` with plots; ``reproduce``: each step of the articles on the ladder;
  ``articles``: their side of it (their ratios, the coursework table, the merge-cost plot);
* ``candidates``: what ``--variant`` names (a rung, or your own file or function); ``diagnose``: where a
  trainer's merges part from the reference, and the likely cause (``tie_orders``: which wrong order broke
  a tie); ``probe``: the probes, generated corpora on which the usual special-token and tie-breaking
  mistakes show; ``trace``: one merge at a time (``traced_rungs``: the state of v6, v7 and v8 as it reads it);
  ``text_trace``: a text cut into labelled pre-tokens, a word encoded merge by merge; ``walkthrough``
  (a package): the merges on one HTML page, with each rung's work counted on its own code;
* ``peers``: the Rust trainers on the same data; ``encode_peers``: tiktoken beside ``bpe encode``;
  ``profiling``: scalene summaries in ``out/profiles/``; ``merge_cost``: merge algorithms alone;
* ``estimate``: a run's time and memory before it starts (the cost model, your own trainer's probe);
  ``estimate_command``: ``bpe estimate`` (ranges, a data set not downloaded, ``--memory``); ``calibrate``: its constants' timed runs; ``pretokenize_ratio``: the fast
  pre-tokenizer against the plain one, per kind of text (``text_kinds`` makes each kind); ``handout``: the CS336 handout's tokenizer
  questions; ``ablation`` (a package): v6 without each of its techniques in turn; ``figures``: every
  quoted figure checked against its committed result file;
* ``train_command``: ``bpe train``, the run with its files and summary; ``fresh_process``: a timed job
  in a child.
"""
