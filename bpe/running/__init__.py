"""The machinery of running: processes, threads, cores, and what a run reports as it goes.

* ``pool``: the one process pool all parallel work uses, with its hardening (signals, parent death,
  reaping); ``workers``: a pool worker from its side (its start, its loop, the test-only faults);
* ``threads``: compiled work on threads of this process, the first failure raised, Ctrl-C stopping them all;
* ``cores``: the cores other processes leave free, how many chunks to cut a file into for them, and how many
  workers a run may ask for;
* ``timer``: the stage timer the harness injects; ``progress``: the progress display (bytes, then merges);
* ``sizes``: ``50MB``-style sizes and counts; ``files``: files written whole (a temporary sibling renamed
  into place), an unusable directory or a full disk said first; ``leftovers``: the one rule for what a run
  killed outright leaves (named by its process's pid, removed by a later run once that process is gone);
  ``disk_cache``: the scanners' class tables kept on disk for the next process;
* ``_hints.h``: the compiled modules' prefetch hint.
"""
