"""The tokenizer file formats, one function each way: GPT-2 ``vocab.json``/``merges.txt``, tiktoken
ranks (and the settings beside them), Hugging Face ``tokenizer.json`` (and the files ``transformers`` reads
beside it for the special tokens).

Text only, no directories: :mod:`bpe.io.outputs` decides where files go and writes them atomically,
:class:`bpe.io.tokenizer.Tokenizer` reads them back with :func:`load_vocab` and :func:`load_merges`,
which refuse a malformed file (:mod:`bpe.io.checks`).
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Sequence

from bpe.io.byte_unicode import encode_token
from bpe.io.checks import parse_merges, parse_vocab, read_json, read_text
from bpe.split.patterns import DEFAULT_PATTERN, pattern_name, resolve_pattern


def vocab_json(vocab: dict[int, bytes]) -> str:
    """``{token: id}`` ordered by id.  Written by hand so that two ids holding the same bytes (BPE can
    make the same token from two different pairs) both appear; :func:`load_tokenizer` keeps both."""
    lines = [f"    {json.dumps(encode_token(token), ensure_ascii=False)}: {token_id}"
             for token_id, token in sorted(vocab.items())]
    return "{\n" + ",\n".join(lines) + "\n}\n"


def merges_txt(merges: Sequence[tuple[bytes, bytes]]) -> str:
    return "".join(f"{encode_token(a)} {encode_token(b)}\n" for a, b in merges)


def tiktoken_ranks(vocab: dict[int, bytes], special_tokens: Sequence[str]) -> str:
    """tiktoken's ``.tiktoken`` format: ``base64(token) rank`` per line; ranks are our ids (merge order).

    tiktoken needs each token once: for bytes held by two ids the first id is kept.
    """
    special = {token.encode("utf-8") for token in special_tokens}
    seen: set[bytes] = set()
    lines = []
    for token_id, token in sorted(vocab.items()):
        if token in special or token in seen:
            continue
        seen.add(token)
        lines.append(f"{base64.b64encode(token).decode('ascii')} {token_id}\n")
    return "".join(lines)


def ranks_of(text: str) -> dict[bytes, int]:
    """The ranks of :func:`tiktoken_ranks`'s text, read back as ``tiktoken.load.load_tiktoken_bpe`` reads them.

    >>> ranks_of(tiktoken_ranks({0: b"a", 1: b"b", 2: b"ab"}, []))
    {b'a': 0, b'b': 1, b'ab': 2}
    """
    return {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in text.splitlines() if line)}


def tiktoken_settings(vocab: dict[int, bytes], special_tokens: Sequence[str], name: str = "bpe-lab",
                      pattern: str = DEFAULT_PATTERN) -> str:
    """What ``tiktoken.Encoding`` takes beside the ranks (``tiktoken.json``, next to ``tokenizer.tiktoken``): its
    name, the pattern and the special tokens' ids, so that ``tiktoken.Encoding(**settings,
    mergeable_ranks=load_tiktoken_bpe(ranks))`` is the encoding these files hold."""
    ids = _lowest_ids(vocab)
    data = {"name": name, "pat_str": resolve_pattern(pattern)[1],
            "special_tokens": {t: ids[t.encode("utf-8")] for t in special_tokens}}
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def _lowest_ids(vocab: dict[int, bytes]) -> dict[bytes, int]:
    """Each token's id, the lowest where two ids hold the same bytes (the one the tokenizer encodes with)."""
    return {token: token_id for token_id, token in sorted(vocab.items(), reverse=True)}


def hf_tokenizer_config(vocab: dict[int, bytes], special_tokens: Sequence[str]) -> str:
    """``tokenizer_config.json``: what ``transformers.AutoTokenizer`` reads beside ``tokenizer.json`` to know the
    special tokens.  The first is the end of text (``eos_token``, the token training puts between documents),
    the others are ``additional_special_tokens``; each is listed in ``added_tokens_decoder`` by id, special."""
    ids = _lowest_ids(vocab)
    config: dict = {"tokenizer_class": "PreTrainedTokenizerFast", "clean_up_tokenization_spaces": False,
                    "added_tokens_decoder": {str(ids[t.encode("utf-8")]): _hf_added(t) for t in special_tokens}}
    config.update(_hf_special_tokens(special_tokens))
    return json.dumps(config, ensure_ascii=False, indent=2) + "\n"


def hf_special_tokens_map(special_tokens: Sequence[str]) -> str:
    """``special_tokens_map.json``: the same roles, for the versions of ``transformers`` that read them here."""
    return json.dumps(_hf_special_tokens(special_tokens), ensure_ascii=False, indent=2) + "\n"


def _hf_special_tokens(special_tokens: Sequence[str]) -> dict:
    roles: dict = {"eos_token": special_tokens[0]} if special_tokens else {}
    if len(special_tokens) > 1:
        roles["additional_special_tokens"] = list(special_tokens[1:])
    return roles


def _hf_added(token: str) -> dict:
    return {"content": token, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
            "special": True}


def hf_tokenizer_json(vocab: dict[int, bytes], merges: Sequence[tuple[bytes, bytes]],
                      special_tokens: Sequence[str], pattern: str = DEFAULT_PATTERN) -> str:
    """A Hugging Face ``tokenizer.json``: byte-level BPE with GPT-2's split, like GPT-2's own, or with
    ``pattern``'s (:func:`hf_pre_tokenizer`)."""
    # Special tokens are in the model's vocab too (as in GPT-2's file): an added token missing from
    # it would get a fresh id from `tokenizers`, not ours.
    model_vocab: dict[str, int] = {}
    for token_id, token in sorted(vocab.items()):
        model_vocab.setdefault(encode_token(token), token_id)
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    ids = _lowest_ids(vocab)
    data = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [{"id": ids[t.encode("utf-8")], **_hf_added(t)} for t in special_tokens],
        "normalizer": None,
        "pre_tokenizer": hf_pre_tokenizer(pattern, byte_level),
        "post_processor": None,
        "decoder": byte_level,
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            "vocab": model_vocab,
            "merges": [f"{encode_token(a)} {encode_token(b)}" for a, b in merges],
        },
    }
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def hf_pre_tokenizer(pattern: str, byte_level: dict) -> dict:
    r"""GPT-2's split is ``ByteLevel``'s own (``use_regex``); any other pattern is a ``Split`` of the text by
    it (each match a pre-token), then ``ByteLevel`` without its regex, as HF writes GPT-4-style tokenizers.

    ``tokenizers`` runs the pattern with Oniguruma, which reads ``{1,3}+`` not as possessive but as a
    repeat of the repeat: cl100k's ``\p{N}{1,3}+`` goes as ``\p{N}{1,3}``, the same matches (nothing
    follows it in its alternative to give anything back to); its other possessive forms Oniguruma reads as
    ``regex`` does.  A custom pattern goes as it is written."""
    if pattern_name(pattern) == DEFAULT_PATTERN:
        return byte_level
    return {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": hf_pattern(pattern)}, "behavior": "Isolated", "invert": False},
        dict(byte_level, use_regex=False)]}


def hf_pattern(pattern: str) -> str:
    """The pattern as ``tokenizers`` is given it, to split as ``regex`` does (:func:`hf_pre_tokenizer`).

    >>> hf_pattern("cl100k").count("{1,3}+"), hf_pattern("o200k") == resolve_pattern("o200k")[1]
    (0, True)
    """
    name, text = resolve_pattern(pattern)
    return text.replace(r"\p{N}{1,3}+", r"\p{N}{1,3}") if name == "cl100k" else text


def load_vocab(path: str | os.PathLike) -> dict[int, bytes]:
    """``vocab.json`` as ``{id: bytes}``; a file that is not a GPT-2 style vocab is a :class:`BPEError`
    naming the problem (:mod:`bpe.io.checks`)."""
    return parse_vocab(read_json(path), path)


def load_merges(path: str | os.PathLike) -> list[tuple[bytes, bytes]]:
    """``merges.txt`` as byte pairs in merge order; a line that is not two tokens is a :class:`BPEError`."""
    return parse_merges(read_text(path), path)
