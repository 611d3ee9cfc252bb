"""What a saved tokenizer's files must hold, checked once when they are loaded.

A tokenizer folder (``vocab.json``, ``merges.txt``, ``train.json``; :mod:`bpe.io.outputs`) can be
cut short, edited by hand or copied from two different runs.  Encoding with such a folder does not
fail: a merge whose tokens are missing is skipped, an id given twice keeps one token, a lost special
token is split like text.  It gives different ids and exits 0.  So every loader runs these checks
before it builds a :class:`~bpe.io.tokenizer.Tokenizer`, and a folder that fails one is refused with
one :class:`~bpe.errors.BPEError` naming the file and the problem:

* each file reads as what it claims to be: UTF-8 text, ``vocab.json`` and ``train.json`` valid JSON
  objects, every token in GPT-2's byte-to-unicode form (:func:`parse_vocab`, :func:`parse_merges`);
* ``vocab.json``: ids are the integers 0 to N-1, each once, and every one of the 256 bytes has a token;
* ``merges.txt`` against ``vocab.json`` (:func:`check_merges`): each merge joins two tokens that are
  bytes or made by an earlier merge, and what it makes has an id, later than the previous merge's
  (a trained vocab numbers the merges' tokens in merge order);
* ``train.json`` against both (:func:`check_train_info`): the special tokens it records are in the
  vocab, the merge count and vocab size it records are the files', and 256 bytes + the special tokens
  + one token per merge make the vocab.

Every check is one pass over the vocab or the merges (dict and set lookups), so it costs a small part
of reading the files, once per load; encoding itself is untouched.  docs/outputs.md lists the checks.
"""

from __future__ import annotations

import json
import os
from bisect import bisect_right
from collections.abc import Sequence
from pathlib import Path

from bpe.errors import BPEError
from bpe.io.byte_unicode import decode_token, encode_token
from bpe.split.patterns import DEFAULT_PATTERN, resolve_pattern


class _Pairs(list):
    """A JSON object's ``(key, value)`` pairs, in file order, duplicate keys kept (a list stays a list)."""


def read_text(path: str | os.PathLike) -> str:
    """The file's text, or a :class:`BPEError` saying why it cannot be read as UTF-8."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise BPEError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BPEError(f"{path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


def read_json(path: str | os.PathLike) -> _Pairs:
    """The JSON object in the file as its pairs, or a :class:`BPEError` naming what it holds instead."""
    try:
        value = json.loads(read_text(path), object_pairs_hook=_Pairs)
    except json.JSONDecodeError as exc:
        raise BPEError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(value, _Pairs):
        raise BPEError(f"{path}: expected a JSON object, got {_json_kind(value)}")
    return value


def _json_kind(value) -> str:
    kinds = {list: "a list", _Pairs: "an object", str: "a string", bool: "a boolean", int: "a number",
             float: "a number", type(None): "null"}
    return kinds[type(value)]


def _token(text, where: str) -> bytes:
    """A token in GPT-2's byte-to-unicode form, as bytes (``where``: the file, or file and line)."""
    try:
        if text and isinstance(text, str):
            return decode_token(text)
    except KeyError as exc:
        raise BPEError(f"{where}: the token {text!r} has the character {exc.args[0]!r}, which stands for no byte "
                       f"in GPT-2's byte-to-unicode form") from None
    raise BPEError(f"{where}: expected a token, got {text!r}")


def parse_vocab(pairs: _Pairs, path: str | os.PathLike) -> dict[int, bytes]:
    """``vocab.json``'s ``{token: id}`` pairs as ``{id: bytes}``: ids 0 to N-1, each once, every byte a token."""
    vocab: dict[int, bytes] = {}
    where = str(path)
    for text, token_id in pairs:
        token = _token(text, where)
        if type(token_id) is not int or token_id < 0:
            raise BPEError(f"{path}: the token {text!r} has the id {token_id!r}, not a non-negative integer")
        if token_id in vocab:
            raise BPEError(f"{path}: the id {token_id} is given twice, to {encode_token(vocab[token_id])!r} and "
                           f"{text!r}")
        vocab[token_id] = token
    if vocab and max(vocab) != len(vocab) - 1:  # n distinct non-negative ids are 0 to n-1 if the largest is n-1
        missing = next(i for i in range(len(vocab)) if i not in vocab)
        raise BPEError(f"{path}: the ids of its {len(vocab):,} tokens should be 0 to {len(vocab) - 1:,}, "
                       f"but {missing:,} is missing and {max(vocab):,} is there")
    present = set(vocab.values())
    absent = next((b for b in range(256) if bytes([b]) not in present), None)
    if absent is not None:
        raise BPEError(f"{path}: the byte 0x{absent:02x} ({encode_token(bytes([absent]))!r}) has no token; "
                       f"every one of the 256 bytes must have one")
    return vocab


def parse_merges(text: str, path: str | os.PathLike) -> list[tuple[bytes, bytes]]:
    """``merges.txt``'s lines (``first second``; blank lines and a ``#version`` line skipped) as byte pairs."""
    merges = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line or (number == 1 and line.startswith("#version")):
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise BPEError(f"{path}:{number}: expected two tokens separated by one space, got {line!r}")
        try:
            merges.append((decode_token(parts[0]), decode_token(parts[1])))
        except KeyError:
            for part in parts:
                _token(part, f"{path}:{number}")  # raises, naming the token
    return merges


def check_merges(vocab: dict[int, bytes], merges: Sequence[tuple[bytes, bytes]],
                 vocab_path: str | os.PathLike, merges_path: str | os.PathLike) -> None:
    """Each merge joins two tokens already made (bytes or earlier merges) into one the vocab holds, with
    an id after the previous merge's token's; else a :class:`BPEError` naming the merge."""
    lowest: dict[bytes, int] = {}
    held: dict[bytes, list[int]] = {}  # every id of a token that has more than one, ascending
    for token_id, token in sorted(vocab.items()):
        if token in lowest:
            held.setdefault(token, [lowest[token]]).append(token_id)
        else:
            lowest[token] = token_id
    made = {bytes([b]) for b in range(256)}
    previous = -1
    for number, (first, second) in enumerate(merges, 1):
        if first not in made or second not in made:
            part = first if first not in made else second
            where = "no earlier merge makes it" if part in lowest else f"it is not in {vocab_path}"
            raise BPEError(f"{merges_path}: {_merge(number, first, second)} uses {encode_token(part)!r}, but {where}")
        token = first + second
        token_id = lowest.get(token, -1)
        if token_id <= previous:  # rare: a token made twice (the later merge has the later id), or an error
            ids = held.get(token, [token_id] if token in lowest else [])
            token_id = _id_after(ids, token, previous, _merge(number, first, second), vocab_path, merges_path)
        previous = token_id
        made.add(token)


def _merge(number: int, first: bytes, second: bytes) -> str:
    return f"merge {number:,} ({encode_token(first)} {encode_token(second)})"


def _id_after(ids: list[int], token: bytes, previous: int, shown: str, vocab_path, merges_path) -> int:
    """The lowest of ``token``'s ``ids`` (ascending) above ``previous``, the previous merge's token's id."""
    if not ids:
        raise BPEError(f"{merges_path}: {shown} makes {encode_token(token)!r}, which is not in {vocab_path}")
    later = bisect_right(ids, previous)
    if later == len(ids):
        raise BPEError(f"{vocab_path}: {encode_token(token)!r}, made by {shown} of {merges_path}, has the id "
                       f"{ids[-1]:,}, not after the id {previous:,} of the token the merge before makes; "
                       f"a trained vocab numbers its merges' tokens in merge order")
    return ids[later]


def check_train_info(info: _Pairs, vocab: dict[int, bytes], merges: Sequence[tuple[bytes, bytes]],
                     paths: dict[str, Path]) -> list[str]:
    """The special tokens ``train.json`` records, once it is checked against ``vocab.json`` and
    ``merges.txt`` (``paths``: each file's name -> its path); else a :class:`BPEError`."""
    path, fields = paths["train.json"], dict(info)
    specials = fields.get("special_tokens")
    if not isinstance(specials, list) or not all(isinstance(t, str) and t for t in specials):
        got = "no such field" if "special_tokens" not in fields else f"got {specials!r}"[:80]
        raise BPEError(f"{path}: \"special_tokens\" must be a list of the special tokens as strings ({got})")
    result = dict(fields["result"]) if isinstance(fields.get("result"), _Pairs) else {}
    for key in ("merges", "vocab_size"):
        if type(result.get(key)) is not int:
            raise BPEError(f"{path}: \"result\" must record \"merges\" and \"vocab_size\" as integers "
                           f"(the counts the other files are checked against)")
    if result["merges"] != len(merges):
        raise BPEError(f"{paths['merges.txt']} has {len(merges):,} merges but {path} records {result['merges']:,}; "
                       f"the file was cut or edited, or comes from another run")
    if result["vocab_size"] != len(vocab):
        raise BPEError(f"{paths['vocab.json']} has {len(vocab):,} tokens but {path} records {result['vocab_size']:,}; "
                       f"the file was cut or edited, or comes from another run")
    tokens = set(vocab.values())
    lost = next((t for t in specials if t.encode("utf-8", "surrogatepass") not in tokens), None)
    if lost is not None:
        raise BPEError(f"{path}: the special token {lost!r} is not in {paths['vocab.json']}")
    expected = 256 + len(specials) + len(merges)
    if expected != len(vocab):
        raise BPEError(f"{paths['vocab.json']} has {len(vocab):,} tokens, but 256 bytes + {len(specials)} special "
                       f"+ {len(merges):,} merged make {expected:,}")
    return specials


def recorded_pattern(info: _Pairs, path: Path) -> str:
    """The pattern ``train.json`` records (``pattern``), GPT-2's where it records none (a tokenizer saved
    before the pattern was recorded); one that is not a string, or not a regex, is a :class:`BPEError`."""
    pattern = dict(info).get("pattern", DEFAULT_PATTERN)
    if not isinstance(pattern, str):
        raise BPEError(f"{path}: \"pattern\" must be the pre-tokenization pattern as a string, got {pattern!r}"[:200])
    try:
        resolve_pattern(pattern)
    except BPEError as exc:
        raise BPEError(f"{path}: the recorded {exc}") from None
    return pattern
