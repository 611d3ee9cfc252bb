"""The training path: everything ``train_bpe`` runs, and nothing else.

Pre-tokenization (``pretokenize``: the GPT-2 pattern and the counters; ``parallel``: chunks and the
process pool), the merge loop every variant plugs into (``merge_loop``), the stage timer the harness
injects (``timer``), the lazy list of variants (``registry``), ``train_bpe`` itself (``train``) and
size parsing for ``--limit`` (``sizes``).  The merge algorithms themselves live in ``variants/``.
"""
