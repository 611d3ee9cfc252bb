"""Data sets: names, downloads and generators, everything ``--data`` resolves through.

* ``datasets``: names -> paths (``gutenberg-sample``, ``tinystories``, ``webtext-synth-20MB``, ...),
  shipped files found in a checkout or a wheel;
* ``download``: ``bpe data list`` and ``get``; resumable downloads into ``data/``, never a truncated file;
* ``gutenberg``: the recipe that builds ``gutenberg-books`` from its 21 books;
* ``webtext``: the generator of the web-like ``webtext-synth``;
* ``tinystories``: the generator of the TinyStories-like ``tinystories-synth``;
* ``generated``: what the generators share: the draws, the syllables, the writer of documents, the
  statistics kept beside a generated file.
"""
