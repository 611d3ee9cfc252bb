"""Input and output: data sets by name and their downloads, the tokenizer, and its file formats.

``datasets`` (names -> paths), ``download`` (resumable, never a truncated file), ``tokenizer``
(encode/decode with trained merges), ``formats`` (GPT-2 vocab/merges, tiktoken, Hugging Face),
``outputs`` (save and load a tokenizer directory) and ``byte_unicode`` (GPT-2's byte <-> text map).
"""
