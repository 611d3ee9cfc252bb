"""Whether a trainer's merges are right, and where and why not.

* ``candidates``: what ``--variant`` names (a rung, or your own file or function), read without running
  it; ``candidate_code``: its code loaded and called, in the child that times it;
* ``correctness``: every run's merges against the reference's, and an own trainer's vocab;
* ``diagnose``: where a trainer's merges part from the reference, and the likely cause (``replay``:
  the merges replayed on pre-token counts, the usual miscounts among them; ``tie_orders``: which wrong
  order broke a tie);
* ``probe``: the probes, generated corpora on which the usual special-token and tie-breaking mistakes
  show.
"""
