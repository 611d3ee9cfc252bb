"""The text's split: how a text becomes pre-tokens, the same for counting and for encoding.

* ``patterns``: the GPT-2 pattern and the special tokens split out before it (the plain definition);
* ``fast``: the fast split, the same pre-tokens (an ASCII twin of the pattern, islands around non-ASCII);
* ``gpt2_classes``: the pattern's character classes as tables, read off ``regex`` (the compiled scanner's);
* ``chunking``: where a text may be cut so that the pieces split exactly as the whole (v3's rule);
* ``_gpt2_scanner.pxi``: the pattern as a compiled scanner, which v9's counter and the compiled encoder include.

A new pattern goes here: its definition, its classes, its scanner.
"""
