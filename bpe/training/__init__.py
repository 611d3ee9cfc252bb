"""The training path: everything ``train_bpe`` runs, and nothing else.

Pre-tokenization (``pretokenize``: the GPT-2 pattern and the counters; ``chunking``: where a file
may be cut; ``parallel``: the chunks counted in the pool; ``pool``: the process pool itself), the
merge loop every variant plugs into (``merge_loop``), what a rung defines (``rung``), v7's shard
processes (``shards``), the stage timer the harness injects (``timer``), the lazy list of variants
(``registry``), ``train_bpe`` itself (``train``), its progress display (``progress``) and size
parsing for ``--limit`` (``sizes``).  The merge algorithms themselves live in ``variants/``.
"""
