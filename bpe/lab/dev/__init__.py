"""The project's own upkeep: tools for whoever tunes the ladder and keeps its pages true, not a student's.

* ``merge_cost``: ``bpe merge-cost``, merge algorithms alone on the same pre-token counts;
* ``figures``: ``bpe figures``, every quoted figure checked against its committed result file;
* ``calibrate``: the cost model's timed runs beside its estimates;
* ``sample_memory``: a command's whole process tree's memory, sampled while it runs (the large runs);
* ``pretokenize_ratio``: the fast pre-tokenizer against the plain one, per kind of text
  (``text_kinds`` makes each kind).
"""
