"""Saving and loading trained tokenizers: GPT-2 files, tiktoken ranks, Hugging Face tokenizer.json.

``python -m bpe train ... --out DIR`` writes

* ``DIR/vocab.json``: ``{token: id}`` ordered by id, each token's bytes in GPT-2's byte-to-unicode
  form (:mod:`bpe.io.byte_unicode`), as in the CS336 fixtures;
* ``DIR/merges.txt``: one merge per line, ``first second`` in the same form, in the order made;
* ``DIR/train.json``: the settings, stage timings and corpus figures of the run;
* with ``--format tiktoken``: ``DIR/tokenizer.tiktoken``, lines ``base64(token) rank``, the file
  ``tiktoken.load.load_tiktoken_bpe`` reads (special tokens and pattern are in ``train.json``);
* with ``--format hf``: ``DIR/tokenizer.json`` for ``tokenizers.Tokenizer.from_file`` (BPE model,
  ByteLevel pre-tokenizer with the GPT-2 split, ByteLevel decoder, special tokens as added tokens).

Every file is written to a temporary name and renamed only when all of them are written, so a
failure or Ctrl-C leaves either the old files or the new ones, never a half-written file.
:func:`check_output_dir` runs before training so an unusable ``--out`` fails in a second, not after
an hour.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bpe.errors import BPEError
from bpe.io.formats import hf_tokenizer_json, load_merges, load_vocab, merges_txt, tiktoken_ranks, vocab_json
from bpe.io.tokenizer import Tokenizer

FORMATS = ("tiktoken", "hf")
TRAIN_INFO = "train.json"


def check_output_dir(out_dir: str | os.PathLike) -> Path:
    """``out_dir`` if files can be written there (it may not exist yet), else a clear :class:`BPEError`.

    Nothing is created: the nearest existing ancestor must be a writable directory.
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise BPEError(f"--out {out_dir} exists and is not a directory")
    existing = out_dir
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise BPEError(f"cannot create output directory {out_dir}: {existing} is a file, not a directory")
    try:  # os.access is not enough (root, read-only mounts): try to create a file
        fd, probe = tempfile.mkstemp(dir=existing, prefix=".bpe-write-test-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise BPEError(f"output directory {out_dir} is not writable ({existing}: {exc.strerror})") from None
    return out_dir


def write_files_atomic(out_dir: Path, files: dict[str, str]) -> None:
    """Write every ``name: text`` to a temporary file in ``out_dir``, then rename them all into place."""
    out_dir.mkdir(parents=True, exist_ok=True)
    temps: list[tuple[Path, Path]] = []
    try:
        for name, text in files.items():
            tmp = out_dir / f".{name}.{os.getpid()}.tmp"
            temps.append((tmp, out_dir / name))
            with open(tmp, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        for tmp, final in temps:
            os.replace(tmp, final)
    finally:
        for tmp, _ in temps:
            tmp.unlink(missing_ok=True)


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write one file so that it is either complete or absent (see :func:`write_files_atomic`)."""
    path = Path(path)
    write_files_atomic(path.parent, {path.name: text})


def save_tokenizer(out_dir: str | os.PathLike, vocab: dict[int, bytes], merges: Sequence[tuple[bytes, bytes]],
                   special_tokens: Sequence[str], *, formats: Sequence[str] = (),
                   train_info: dict | None = None) -> list[Path]:
    """Write vocab.json, merges.txt, train.json and any ``formats`` ("tiktoken", "hf"); the paths written."""
    out_dir = check_output_dir(out_dir)
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise BPEError(f"unknown output format {unknown[0]!r}; formats: {', '.join(FORMATS)}")
    info = dict(train_info or {})
    info["special_tokens"] = list(special_tokens)
    files = {"vocab.json": vocab_json(vocab), "merges.txt": merges_txt(merges),
             TRAIN_INFO: json.dumps(info, indent=2, ensure_ascii=False) + "\n"}
    if "tiktoken" in formats:
        files["tokenizer.tiktoken"] = tiktoken_ranks(vocab, special_tokens)
    if "hf" in formats:
        files["tokenizer.json"] = hf_tokenizer_json(vocab, merges, special_tokens)
    write_files_atomic(out_dir, files)
    return [out_dir / name for name in files]


def load_tokenizer(directory: str | os.PathLike, special_tokens: Sequence[str] | None = None) -> Tokenizer:
    """The :class:`~bpe.io.tokenizer.Tokenizer` saved in ``directory`` (vocab.json, merges.txt, train.json).

    Special tokens come from ``train.json`` unless given.
    """
    directory = Path(directory)
    for name in ("vocab.json", "merges.txt"):
        if not (directory / name).is_file():
            raise BPEError(f"no saved tokenizer in {directory}: {name} is missing")
    if special_tokens is None:
        info_path = directory / TRAIN_INFO
        info = json.loads(info_path.read_text(encoding="utf-8")) if info_path.is_file() else {}
        special_tokens = info.get("special_tokens", [])
    try:
        vocab = load_vocab(directory / "vocab.json")
    except (ValueError, KeyError) as exc:
        raise BPEError(f"{directory / 'vocab.json'} is not a GPT-2 style vocab file: {exc}") from None
    return Tokenizer(vocab, load_merges(directory / "merges.txt"), special_tokens)


def token_report(vocab: dict[int, bytes], special_tokens: Sequence[str] = (), top: int = 5) -> list[str]:
    """Lines printed after training: the longest tokens and how many are not valid UTF-8 alone."""
    special = {t.encode("utf-8") for t in special_tokens}
    learned = [(i, t) for i, t in vocab.items() if i >= 256 and t not in special]
    longest = sorted(learned, key=lambda item: (-len(item[1]), item[0]))[:top]
    invalid = 0
    for _, token in learned:
        try:
            token.decode("utf-8")
        except UnicodeDecodeError:
            invalid += 1
    lines = ["longest tokens: " + ", ".join(f"{t.decode('utf-8', errors='replace')!r} ({len(t)} bytes, id {i})"
                                             for i, t in longest)]
    lines.append(f"learned tokens that are not valid UTF-8 on their own: {invalid:,} of {len(learned):,}")
    return lines
