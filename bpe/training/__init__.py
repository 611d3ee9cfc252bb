"""The training path: everything ``train_bpe`` runs, and nothing else.

Pre-tokenization (``pretokenize``: the GPT-2 pattern and the counters; ``parallel``: chunks and the
process pool; ``pool``: the process pool itself), the merge loop every variant plugs into
(``merge_loop``), what a rung defines (``rung``), v7's shard processes (``shards``), the stage timer the
harness injects (``timer``), the lazy list of variants (``registry``), ``train_bpe`` itself
(``train``), its progress display (``progress``) and size parsing for ``--limit`` (``sizes``).  The merge algorithms themselves live in ``variants/``.
"""
