"""The text's split: how a text becomes pre-tokens, the same for counting and for encoding.

* ``patterns``: the patterns by name (GPT-2's, the default; GPT-4's ``cl100k``; GPT-4o's ``o200k``) or a
  custom regex, each one's rule for where a file may be cut, and the special tokens split out before it
  (the plain definition);
* ``fast``: GPT-2's fast split, the same pre-tokens (an ASCII twin of the pattern, islands around non-ASCII);
* ``gpt2_classes``: GPT-2's character classes as tables, read off ``regex`` (its compiled scanner's);
* ``pattern_classes``: cl100k's and o200k's classes as tables of bit flags, read off ``regex`` the same way,
  and the code points tiktoken's engine classes otherwise;
* ``chunking``: where a text may be cut so that the pieces split exactly as the whole (v3's rule), per pattern;
* ``_gpt2_scanner.pxi``, ``_cl100k_scanner.pxi``, ``_o200k_scanner.pxi``: each named pattern as a compiled
  scanner, gathered by ``_scanners.pxi``, which v9's counter and the compiled encoder include.

A new pattern goes here: its definition, its classes, its scanner.
"""
