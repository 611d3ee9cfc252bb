"""Whether a trainer's merges are right, and where and why not.

* ``candidates``: what ``--variant`` names (a rung, or your own file or function), read without running
  it; and its code loaded and called, in the child that times it, and what it returns checked;
* ``correctness``: every run's merges against the reference's, and an own trainer's vocab;
* ``replay``: merges replayed on pre-token counts, and the counts the usual miscounting trainers see;
* ``diagnose``: where a trainer's merges part from the reference, and the likely cause, from the merges
  replayed on pre-token counts (``tie_orders``: which wrong order broke a tie);
* ``probe``: the probes, generated corpora on which the usual special-token and tie-breaking mistakes
  show, and a file read in text mode.
"""
