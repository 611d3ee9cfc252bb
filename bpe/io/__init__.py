"""Input and output: data sets by name, their downloads and generators; the tokenizer and its files.

* data sets: ``datasets`` (names -> paths, shipped files found in a checkout or a wheel),
  ``download`` (resumable, never a truncated file), ``gutenberg`` (the recipe that builds
  ``gutenberg-books``), ``webtext`` (the generator of ``webtext-synth``);
* the tokenizer: ``tokenizer`` (encode/decode with trained merges), ``encode`` (``bpe encode``: a
  file to a ``.npy`` of ids), ``formats`` (GPT-2 vocab/merges, tiktoken, Hugging Face), ``outputs``
  (save and load a tokenizer directory), ``byte_unicode`` (GPT-2's byte <-> text map).
"""
