"""The pytest-benchmark suite: every rung of the ladder and the peers, timed per regime of text.

``make benchmark`` saves a run per commit (``.benchmarks/``); ``make benchmark-compare`` compares two
saved runs.  ``bpe bench`` stays the tool for stage tables, fresh processes and a student's trainer
(docs/lab.md, "Tracking a change across commits").
"""
