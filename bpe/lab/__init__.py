"""The lab: tools that measure, explain and compare training; training never imports them.

* ``bench``: stage tables, one fresh process per repeat; ``report``: every variant on the same data,
  written to ``docs/report.md`` with plots;
* ``candidates``: what ``--variant`` names (a rung, or your own file or function);
  ``diagnose``: where a trainer's merges part from the reference, and the likely cause;
* ``peers``: the Rust trainers on the same data; ``encode_peers``: tiktoken beside ``bpe encode``;
* ``profiling``: scalene summaries in ``profiles/``; ``merge_cost``: merge algorithms alone,
  seconds and instructions; ``trace``: one merge at a time; ``estimate``: a run's time and memory
  before it starts, and ``calibrate``: its constants' timed runs; ``pretokenize_ratio``: the fast pre-tokenizer against the plain regex, per
  kind of text; ``reproduce``: each step of the articles measured on the ladder; ``ablation`` (a
  package): v6 without each of its techniques in turn; ``handout``: the
  CS336 handout's tokenizer questions answered in one run; ``figures``: every quoted figure checked
  against its committed result file;
* ``train_command``: ``bpe train``, the run with its files and summary; ``estimate_command``: ``bpe
  estimate``'s table;
* ``busy``: ``bench --busy``, processes spinning on cores meanwhile; ``fresh_process``: running a
  timed job in a child; ``runinfo``: machine, commit and merges
  digest recorded beside every figure; ``publish``: ``out/`` or, with ``--publish``, the committed file.
"""
