"""The commands of ``bpe``, one module each: its ``run(args)`` takes what :mod:`bpe.cli`'s parser made of the
command line and hands it to the code that does the work.

* ``train``: one training run, its files and its summary;
* ``bench``, ``report``, ``estimate``, ``profile``: measuring (:mod:`bpe.lab.measure`);
* ``trace``, ``walkthrough``: teaching (:mod:`bpe.lab.teach`);
* ``encode``: a data set to a ``.npy`` of ids (:mod:`bpe.io.encode`);
* ``data``: the data sets listed, one fetched or generated (:mod:`bpe.data`);
* ``arguments``: the flags several commands share, and the values they resolve to (the tools use them too).

A new command is a module here with its ``run(args)``, and its parser and one call in :mod:`bpe.cli`.
"""
