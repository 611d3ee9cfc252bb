"""The tokenizer and its files: trained merges applied to text, saved, loaded and exported.

(The data sets, what ``--data`` names, are :mod:`bpe.data`.)

* ``tokenizer``: encode and decode with trained merges;
* ``compiled``: the compiled encoder (``_encoder.pyx``: the scanner, the merges in C) built from a tokenizer;
* ``encode``: a file to a ``.npy`` of ids, on threads or in the pool (``bpe encode`` runs it); ``npy``: the
  ``.npy`` written as it grows, its header last, renamed into place;
* ``formats``: GPT-2 vocab/merges, tiktoken, Hugging Face;
* ``outputs``: save and load a tokenizer directory;
* ``checks``: what a saved tokenizer's files must hold, checked when they are loaded;
* ``byte_unicode``: GPT-2's byte <-> text map.
"""
