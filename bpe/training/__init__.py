"""The training path: everything ``train_bpe`` runs, and nothing else.

* ``train``: ``train_bpe`` itself, in four phases (check the arguments, count, merge, the vocab);
  ``observer``: what a run reports beyond ``(vocab, merges)`` (timer, progress, corpus figures, the
  merger's summary), in the one object the harness passes in;
* ``registry``: the variants by name, found in ``variants/`` (installed as ``bpe.variants``);
* ``pretokenize``: the plain definition: the GPT-2 pattern, the special-token split, the plain
  counter and the serial file counter (v1, v2; v3-v5 run the same counter in the pool);
  ``pretokenize_fast``: the fast pre-tokenizer with the same counts (v6, v7, encoding);
  ``gpt2_classes``: the pattern's three character classes as tables, read off ``regex`` (v9's scanner);
* ``corpus``: a corpus as it comes (files of text, JSON lines or Parquet, a directory, a glob, a URL, an
  iterator, a dataset) read as a stream of documents and counted by the rung's counter of texts;
  ``cluster``: the same counting on a Dask cluster's workers, summed there by part;
* ``chunking``: where a file may be cut so that the chunks' counts sum to the whole's;
* ``parallel``: the chunks counted in the process pool and the counts reduced in parallel (v3 on;
  the plain counter for v3-v5, the fast one for v6 and v7); ``threads``: compiled work on threads of
  this process, the first failure raised and Ctrl-C stopping them all (v9);
* ``pool``: the one process pool all parallel work uses, with its hardening (signals, parent
  death, reaping, the test-only fault hooks); ``cores``: the cores other processes leave free, which
  the counting pool's default size follows;
* ``merge_loop``: the interface every merge algorithm implements and the loop that drives it;
  ``rung``: what a rung defines, checked on every rung; ``shards``: v7's shard processes (the
  words kept in workers, the channels, the gather); ``shard_policy``: v7's tuning (how many shards,
  the parent's share, when the shards come home);
* ``timer``: the stage timer the harness injects; ``progress``: the progress display (bytes, then
  merges); ``sizes``: ``50MB``-style sizes for ``--limit`` and ``--size``.

The merge algorithms themselves are the rungs in ``variants/``.
"""
