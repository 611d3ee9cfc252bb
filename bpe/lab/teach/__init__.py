"""What a class reads: the merges one at a time, a text cut into pre-tokens, the merges on one page.

* ``recorder``: the one recorder of a run's merges, for the trace and the walkthrough: each merge's pair,
  count, tie, words and changed counts, from any merger's state;
* ``trace``: ``bpe trace``, one merge at a time (with the state of v6, v7 and v8 as it reads it);
  ``text_trace``: what the trace is given, a text cut into labelled pre-tokens, a word encoded merge by merge;
* ``walkthrough`` (a package): the merges on one HTML page, with each rung's work counted on its own
  code.

The CS336 handout's questions are for the student to measure: docs/handout.md gives the command for
each, and no command here answers them.
"""
