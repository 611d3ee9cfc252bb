"""The lab: tools that measure, explain and compare training; training never imports them.

Its words (``docs/layout.md`` has them too): a *variant* is what ``--variant`` names (a rung, ``all``, or
your own trainer); a *rung* is one step of the ladder, ``variants/v1_naive.py`` and after; a *candidate* is a rung or
your own trainer being measured or judged; a *merge* is one merge of training, and its number ("at merge
812"), never a "step", which is a step of the article series (``tools/reproduce.py``); the *reference* is
v1's merges, or their cache in ``data/reference-merges`` (made by the fastest rung: every rung is tested
to give v1's merges), nothing else.  A verdict's ``step`` is the number of the merge where the runs
part, a key kept for saved result files.

Its modules are filed by who uses them, a folder each, whose ``__init__`` lists its modules:

* ``measure``: the measuring pipeline that commands are built on, for whoever times the ladder, the
  peers or their own trainer (``bpe bench``, ``report``, ``profile``, ``estimate``, ``encode --peers``),
  with what every measurement shares: the settings checked once, a timed run in a fresh process, the
  rule that compares runs, where a result is written;
* ``teach``: what a class reads (``bpe trace``, ``walkthrough``): one merge at a time, a text cut
  into pre-tokens, the merges on one HTML page;
* ``judge``: what tells whether a trainer is right, and why not: what ``--variant`` names (a rung, or
  your own trainer), every run's merges against the reference's, the diagnosis of where they part,
  the probes on which the usual mistakes show.

The folders import one way: ``teach`` may use ``measure`` and ``judge``, ``measure`` uses ``judge``
(a bench checks its merges there), and ``judge`` uses neither: the run it judges is handed to it (the
probes take ``measure``'s runner as an argument).  What every folder
shares sits beside them and imports no folder: ``fresh_process`` (a child process started, waited for
and ended with its group), ``rungs`` (what the lab knows about each rung, one row a rung), and what the
rows name: ``rung_states`` (how the trace reads a rung's state), ``rung_twins`` (how the walkthrough counts
a rung's work).  The commands themselves are :mod:`bpe.commands`; what measures the project itself
(figures, reproduce, ablation, the benchmark suite) is not here: it is in ``tools/`` at the repository's
root, which is not installed.
"""
