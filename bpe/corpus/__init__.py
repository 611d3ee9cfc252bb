"""A corpus as it comes, read as a stream of documents; and counted on a cluster.

* ``corpus``: what ``train_bpe`` was given (a file, a directory, a glob, a URL, an iterator, a dataset) opened
  as one :class:`~bpe.corpus.corpus.Corpus`;
* ``sources``: each file's kind, its bytes opened and decompressed, its readers (text, JSON lines, Parquet,
  documents in memory) cutting it into pieces;
* ``batches``: the pieces joined into batches of documents, each followed by the separator;
* ``text_file``: a plain text file checked, read in safe chunks, and the one line for bytes that are not UTF-8;
* ``cluster``: the counting of a corpus's files on a Dask cluster, summed there by part;
* ``scheduler``: reaching its scheduler (an address probed first, or a local cluster started for the run).

A new corpus format goes in ``sources`` (its reader) and ``corpus`` (its name's suffix).
"""
