"""Training: ``train_bpe`` and what drives a rung, nothing else.

* ``train``: ``train_bpe`` itself, in four phases (check the arguments, count, merge, the vocab);
* ``rung``: what a rung (``variants/vN_<idea>.py``) defines, checked on every rung;
* ``registry``: the variants by name, found in ``variants/`` (installed as ``bpe.variants``), and the
  default's order;
* ``merge_loop``: the interface every merge algorithm implements and the loop that drives it, with the
  rules training's options add (a minimum frequency, a maximum token length, merges made first);
* ``options``: the options beyond CS336's (``min_count``, ``min_frequency``, ``max_token_length``,
  ``initial_merges``) checked, the vocab of a continued run, and why training stopped early;
* ``observer``: what a run reports beyond ``(vocab, merges)`` (timer, progress, corpus figures, the
  merger's summary, why the merges stopped), in the one object the harness passes in.

What a run is made of sits in the folders beside: the text's split (:mod:`bpe.split`), the counting
(:mod:`bpe.counting`), a corpus as it comes (:mod:`bpe.corpus`), the machinery of running
(:mod:`bpe.running`); the merge algorithms themselves are the rungs in ``variants/``.
"""
