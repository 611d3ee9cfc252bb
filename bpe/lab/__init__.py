"""The lab: tools that measure, explain and compare training; training never imports them.

Its words (``docs/layout.md`` has them too): a *variant* is what ``--variant`` names (a rung, ``all``, or
your own trainer); a *rung* is one step of the ladder, ``variants/v1..v8``; a *candidate* is a rung or
your own trainer being measured or judged; a *merge* is one merge of training, and its number ("at merge
812"), never a "step", which is a step of the article series (``bpe reproduce``); the *reference* is
v1's merges, or their cache in ``data/reference-merges`` (made by the fastest rung: every rung is tested
to give v1's merges), nothing else.  A verdict's ``step`` is the number of the merge where the runs
part, a key kept for saved result files.

Its modules are filed by who uses them, a folder each, whose ``__init__`` lists its modules:

* ``measure``: the measuring pipeline and the commands built on it, for whoever times the ladder, the
  peers or their own trainer (``bpe bench``, ``report``, ``reproduce``, ``ablation``, ``profile``,
  ``estimate``, ``encode --peers``), with what every measurement shares: the settings checked once, a
  timed run in a fresh process, the rule that compares runs, where a result is written;
* ``teach``: what a class reads (``bpe trace``, ``walkthrough``): one merge at a time, a text cut
  into pre-tokens, the merges on one HTML page;
* ``judge``: what tells whether a trainer is right, and why not: what ``--variant`` names (a rung, or
  your own trainer), every run's merges against the reference's, the diagnosis of where they part,
  the probes on which the usual mistakes show;
* ``dev``: the project's own upkeep, not a student's: ``bpe merge-cost`` and ``figures``, the cost
  model's calibration, the fast pre-tokenizer's ratio per kind of text.

The folders import one way: ``teach`` may use ``measure`` and ``judge``, ``measure`` uses ``judge``
(a bench checks its merges there), and ``judge`` uses neither: the run it judges is handed to it (the
probes take ``measure``'s runner as an argument).  ``measure`` does not import ``dev``.  What every folder
shares sits beside them and imports no folder: ``fresh_process`` (a child process started, waited for
and ended with its group), ``rungs`` (what the lab knows about each rung, one row a rung),
``keypath`` (a value in a result file named by its key path), ``builds`` (the compiled modules built
again into ``out/``: a debug build for the tests, v8's merge with a trick off for its ablation).  ``bpe
train``'s command is the main user path, so it lives beside the command line (``bpe/train_command.py``).
"""
