"""The lab: tools that measure, explain and compare training; training never imports them.

``bench`` (stage tables, fresh process per repeat), ``report`` (every variant on the same data, with
plots), ``profiling`` (scalene summaries), ``merge_cost`` (merge algorithms alone, seconds and
instructions), ``peers`` (the Rust trainers on the same data), ``trace`` (one merge at a time),
``fresh_process`` (running a timed job in a child), ``busy`` (``bench --busy``: processes spinning on
cores meanwhile) and ``runinfo`` (machine, commit and merges digest
recorded beside every figure).
"""
