"""Defaults that every command shares, in one place: the special token and the vocab size (and how long a
cluster's scheduler has to answer).

CS336 Assignment 1 trains TinyStories at vocab 10,000 and OpenWebText at 32,000; a data set carries
its own default (:attr:`bpe.data.datasets.Dataset.vocab_size`), and a plain file path gets
:data:`VOCAB_SIZE`.  ``train``, ``bench``, ``report``, ``profile``, ``merge-cost`` and the make
targets all resolve ``--vocab-size`` through :func:`bpe.data.datasets.default_vocab_size` and print the
value in their header, so ``make bench DATA=tinystories`` is the assignment's setting.
"""

from __future__ import annotations

#: The document separator of the CS336 data sets (and of the shipped corpora).
SPECIAL_TOKEN = "<|endoftext|>"
SPECIAL_TOKENS = (SPECIAL_TOKEN,)

#: CS336's vocab for TinyStories; used for the Gutenberg corpora and any file path too.
VOCAB_SIZE = 10_000
#: CS336's vocab for OpenWebText (and web-like text).
WEB_VOCAB_SIZE = 32_000

#: The data set a command uses when given none: shipped with the repo, 2.3 MB.
DATASET = "gutenberg-sample"

#: Seconds a Dask scheduler named by ``--cluster tcp://...`` has to answer (``--cluster-timeout``): its greeting,
#: then Dask's client's connection (:mod:`bpe.corpus.scheduler`).  A scheduler greets within milliseconds; the
#: rest is room for a slow network.
CLUSTER_TIMEOUT = 20.0
#: The folder of the class tables kept between runs (:mod:`bpe.running.disk_cache`) in the user's cache folder,
#: which holds an installed copy's data sets too (:func:`bpe.data.datasets.data_dir`).
TABLES_FOLDER = "class-tables"
