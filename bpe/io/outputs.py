"""Saving and loading trained tokenizers: GPT-2 files, tiktoken ranks, Hugging Face tokenizer.json.

``python -m bpe train ... --out DIR`` writes

* ``DIR/vocab.json``: ``{token: id}`` ordered by id, each token's bytes in GPT-2's byte-to-unicode
  form (:mod:`bpe.io.byte_unicode`), as in the CS336 fixtures;
* ``DIR/merges.txt``: one merge per line, ``first second`` in the same form, in the order made;
* ``DIR/train.json``: the settings, stage timings and corpus figures of the run, the special tokens and
  the pattern (``pattern``: the regex itself, ``pattern_name``: ``gpt2``, ``cl100k``, ``o200k`` or
  ``custom``; a tokenizer saved before the pattern was recorded is GPT-2's);
* with ``--format tiktoken``: ``DIR/tokenizer.tiktoken``, lines ``base64(token) rank``, the file
  ``tiktoken.load.load_tiktoken_bpe`` reads, and ``DIR/tiktoken.json``, the rest of what
  ``tiktoken.Encoding`` takes (its name, the pattern, the special tokens' ids; :func:`tiktoken_encoding` builds
  it from the directory);
* with ``--format hf``: ``DIR/tokenizer.json`` for ``tokenizers.Tokenizer.from_file`` (BPE model,
  ByteLevel pre-tokenizer with the GPT-2 split, or a Split by the pattern before it, ByteLevel decoder,
  special tokens as added tokens), and ``DIR/tokenizer_config.json`` and ``DIR/special_tokens_map.json``, from
  which ``transformers.AutoTokenizer`` knows the special tokens (the first, the end of text, as ``eos_token``).

The directory is replaced as one unit: the whole set is written into a temporary sibling directory
(``.DIR.new-*``) and swapped in while SIGINT, SIGTERM and SIGHUP are held back, so a reader sees the old
tokenizer or the new one, never a mix, and a re-train leaves no file of the previous run (an old
``tokenizer.json`` beside a new vocab); one that comes earlier removes the sibling (the CLI turns SIGTERM and
SIGHUP into the interrupt Ctrl-C is: :mod:`bpe.console`).  The swap is one step where the system has one
(Linux's ``renameat2``: :func:`bpe.running.files.exchange`), so not even ``kill -9`` finds ``DIR`` missing;
elsewhere it is two renames, the old set first moved aside to ``.DIR.old-PID``: a run killed between the two
leaves it there and no ``DIR``, and the next run that writes ``DIR`` puts it back before anything else
(:func:`restore_interrupted_save`), while a reader that finds no ``DIR`` names where it is.  Only a
directory that holds nothing but these files (or nothing) is replaced; anything else in it is an error
before training.  A second run into the same ``DIR`` meanwhile fails at once (:class:`OutputLock`, an
``flock`` on the hidden ``.DIR.lock`` beside it, removed when the run ends and released by the kernel
if the process dies).
:func:`check_output_dir` runs before training so an unusable ``--out`` fails in a second, not after
an hour.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bpe.errors import BPEError, stop_signals_held
from bpe.io.checks import check_merges, check_train_info, read_json, recorded_pattern
from bpe.io.formats import (
    hf_special_tokens_map,
    hf_tokenizer_config,
    hf_tokenizer_json,
    load_merges,
    load_vocab,
    merges_txt,
    ranks_of,
    tiktoken_ranks,
    tiktoken_settings,
    vocab_json,
)
from bpe.io.tokenizer import Tokenizer
from bpe.running.files import check_writable_dir, exchange, write_flushed
from bpe.running.leftovers import running
from bpe.split.pattern_classes import holds_disagreement
from bpe.split.patterns import DEFAULT_PATTERN, resolve_pattern

FORMATS = ("tiktoken", "hf")
TRAIN_INFO = "train.json"
#: Every file a saved tokenizer directory may hold; a directory with anything else is not replaced.
TOKENIZER_FILES = ("vocab.json", "merges.txt", TRAIN_INFO, "tokenizer.tiktoken", "tiktoken.json", "tokenizer.json",
                   "tokenizer_config.json", "special_tokens_map.json")


def check_output_dir(out_dir: str | os.PathLike) -> Path:
    """``out_dir`` if files can be written there (it may not exist yet), else a clear :class:`BPEError`.

    Nothing is created: the nearest existing ancestor must be a writable directory.
    """
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise BPEError(f"--out {out_dir} exists and is not a directory")
    if out_dir.is_dir():
        foreign = sorted(p.name + ("/" if p.is_dir() else "") for p in out_dir.iterdir()
                         if p.name not in TOKENIZER_FILES or not p.is_file() or p.is_symlink())
        if foreign:
            raise BPEError(f"--out {out_dir} holds {', '.join(foreign[:5])}, which is not a saved tokenizer's "
                           f"file; the directory is replaced as a whole, so give a new or empty directory")
    return check_writable_dir(out_dir)


class OutputLock:
    """Held while a run writes ``out_dir``: a second run into it fails at once instead of mixing files."""

    _held: set[Path] = set()  # directories this process holds (save_tokenizer inside the CLI's lock)

    def __init__(self, out_dir: str | os.PathLike):
        self.out_dir = Path(os.path.abspath(out_dir))
        self.fd: int | None = None

    def __enter__(self) -> OutputLock:
        if self.out_dir in OutputLock._held:
            return self
        import fcntl  # noqa: PLC0415 (POSIX only: reading a tokenizer takes no lock)

        self.lock_path = lock_path = self.out_dir.parent / f".{self.out_dir.name}.lock"
        self.out_dir.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise BPEError(f"another bpe run is writing {self.out_dir} (it holds {lock_path}); wait for it "
                               f"to finish or choose another --out") from None
            # The holder before us removes the file as it lets go (below): a lock taken on a file no longer
            # at the path guards nothing, so take the one that is there now.
            try:
                if os.stat(lock_path).st_ino == os.fstat(fd).st_ino:
                    break
            except FileNotFoundError:
                pass
            os.close(fd)
        self.fd = fd
        OutputLock._held.add(self.out_dir)
        try:
            restore_interrupted_save(self.out_dir)  # the lock says no run is swapping it now
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            OutputLock._held.discard(self.out_dir)
            # Removed while still held, so no file is left beside the output; a run that waited on this
            # file sees it gone and opens a new one.  A killed run leaves it, and the next run reuses it.
            try:
                os.unlink(self.lock_path)
            except OSError:
                pass
            os.close(self.fd)  # closing releases the flock
            self.fd = None


def replace_dir(out_dir: Path, files: dict[str, str], swapped=lambda: None) -> None:
    """Make ``out_dir`` hold exactly ``files``: built in a sibling, swapped in while signals wait.

    ``swapped()`` is called once the new set is in place, before a signal held back meanwhile interrupts.
    """
    out_dir = Path(os.path.abspath(out_dir))
    parent = out_dir.parent
    parent.mkdir(parents=True, exist_ok=True)
    restore_interrupted_save(out_dir)
    new = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.new-", dir=parent))
    old = parent / f".{out_dir.name}.old-{os.getpid()}"
    try:
        for name, text in files.items():
            write_flushed(new / name, text, shown=out_dir / name)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(new, 0o777 & ~umask)  # mkdtemp's 0700, widened to what mkdir would have made
        # With SIGINT, SIGTERM and SIGHUP held back a Ctrl-C lands after the swap, so an interrupted run leaves
        # the old directory or the new one.  One step where the system swaps two names (the old set then sits
        # at ``new``'s name, removed below); else two renames, and a kill -9 between them leaves the old set at
        # ``old`` for the next run to put back (restore_interrupted_save).
        with stop_signals_held():
            had_old = out_dir.exists()
            if not (had_old and exchange(new, out_dir)):
                if had_old:
                    os.rename(out_dir, old)
                try:
                    os.rename(new, out_dir)
                except OSError:
                    if had_old:
                        os.rename(old, out_dir)  # put the old tokenizer back rather than leave none
                    raise
            swapped()
    finally:
        shutil.rmtree(new, ignore_errors=True)
        if out_dir.exists():  # swapped (or never moved): the old set aside, if any, is not needed; a Ctrl-C
            shutil.rmtree(old, ignore_errors=True)  # held back till now does not leave it behind


def interrupted_save(out_dir: str | os.PathLike, *, locked: bool = False) -> Path | None:
    """Where the tokenizer of ``out_dir`` is when a save killed between its two renames left it aside
    (``.DIR.old-PID``) and no ``out_dir``; None otherwise.  Without the :class:`OutputLock` (``locked``), only
    a set whose process is gone counts: a live save is between its renames for an instant."""
    out_dir = Path(os.path.abspath(out_dir))
    if out_dir.exists():
        return None
    aside = [path for path in out_dir.parent.glob(f".{out_dir.name}.old-*")
             if path.is_dir() and not path.is_symlink() and (pid := path.name.rsplit("-", 1)[1]).isdigit()
             and (locked or not running(int(pid)))]
    return max(aside, key=lambda path: path.stat().st_mtime, default=None)


def restore_interrupted_save(out_dir: str | os.PathLike) -> None:
    """Put back the tokenizer a save killed between its two renames left aside (:func:`interrupted_save`), as
    that save would have done had it failed there, and remove what else killed saves left beside ``out_dir``
    (a set being written, an old set once swapped out).  The caller holds the :class:`OutputLock`, so no save
    is under way."""
    out_dir = Path(os.path.abspath(out_dir))
    aside = interrupted_save(out_dir, locked=True)
    if aside is not None:
        os.rename(aside, out_dir)
    for stale in [*out_dir.parent.glob(f".{out_dir.name}.new-*"), *out_dir.parent.glob(f".{out_dir.name}.old-*")]:
        shutil.rmtree(stale, ignore_errors=True)


def where_it_is(directory: str | os.PathLike) -> str:
    """For a tokenizer directory that is not there: where a killed save left it, in words ("" if nowhere)."""
    aside = interrupted_save(directory)
    if aside is None:
        return ""
    return (f"; a run killed while saving it left the previous tokenizer at {aside}: the next bpe train --out "
            f"{directory} puts it back first, or move it back yourself (mv {aside} {directory})")


def save_tokenizer(out_dir: str | os.PathLike, vocab: dict[int, bytes], merges: Sequence[tuple[bytes, bytes]],
                   special_tokens: Sequence[str], *, formats: Sequence[str] = (),
                   train_info: dict | None = None, pattern: str = DEFAULT_PATTERN) -> list[Path]:
    """Replace ``out_dir`` with vocab.json, merges.txt, train.json and any ``formats`` ("tiktoken", "hf").

    Returns the paths written.  See the module docstring for what "replace" guarantees.  A stop signal that
    comes once the new set is in place (one held back during the swap interrupts right after it) still
    interrupts, its ``KeyboardInterrupt`` carrying the paths as ``saved``: the save stands, and the
    caller can say what it wrote.
    """
    out_dir = check_output_dir(out_dir)
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise BPEError(f"unknown output format {unknown[0]!r}; formats: {', '.join(FORMATS)}")
    info = dict(train_info or {})
    info["special_tokens"] = list(special_tokens)
    info["pattern_name"], info["pattern"] = resolve_pattern(pattern)
    info["result"] = {"merges": len(merges), "vocab_size": len(vocab)}  # what a load checks the files against
    files = {"vocab.json": vocab_json(vocab), "merges.txt": merges_txt(merges),
             TRAIN_INFO: json.dumps(info, indent=2, ensure_ascii=False) + "\n"}
    if "tiktoken" in formats:
        files["tokenizer.tiktoken"] = tiktoken_ranks(vocab, special_tokens)
        files["tiktoken.json"] = tiktoken_settings(vocab, special_tokens, name=Path(out_dir).name or "bpe-lab",
                                                   pattern=pattern)
    if "hf" in formats:
        files["tokenizer.json"] = hf_tokenizer_json(vocab, merges, special_tokens, pattern)
        files["tokenizer_config.json"] = hf_tokenizer_config(vocab, special_tokens)
        files["special_tokens_map.json"] = hf_special_tokens_map(special_tokens)
    written = [out_dir / name for name in files]
    in_place = []
    try:
        with OutputLock(out_dir):
            check_output_dir(out_dir)  # again: the directory may have changed during training
            replace_dir(out_dir, files, swapped=lambda: in_place.append(True))
    except KeyboardInterrupt as exc:
        if in_place:
            exc.saved = written
        raise
    return written


def load_tokenizer(directory: str | os.PathLike, special_tokens: Sequence[str] | None = None) -> Tokenizer:
    """The :class:`~bpe.io.tokenizer.Tokenizer` saved in ``directory`` (vocab.json, merges.txt, train.json).

    The three files are checked against each other first (:mod:`bpe.io.checks`): a folder that was cut,
    edited or mixed from two runs is a :class:`BPEError` naming the file and the problem.  ``train.json``
    is required: it records the special tokens, which are used unless ``special_tokens`` is given, and the
    pattern (GPT-2's where it records none: a tokenizer saved before the pattern was recorded).
    """
    directory = Path(directory)
    paths = {name: directory / name for name in ("vocab.json", "merges.txt", TRAIN_INFO)}
    why = {TRAIN_INFO: " (it records the special tokens and the merge count; see docs/outputs.md)"}
    if not directory.exists():
        raise BPEError(f"no saved tokenizer in {directory}: the directory is missing{where_it_is(directory)}")
    for name, path in paths.items():
        if not path.is_file():
            raise BPEError(f"no saved tokenizer in {directory}: {name} is missing{why.get(name, '')}")
    vocab, merges = load_vocab(paths["vocab.json"]), load_merges(paths["merges.txt"])
    check_merges(vocab, merges, paths["vocab.json"], paths["merges.txt"])
    info = read_json(paths[TRAIN_INFO])
    recorded = check_train_info(info, vocab, merges, paths)
    return Tokenizer(vocab, merges, recorded if special_tokens is None else special_tokens,
                     pattern=recorded_pattern(info, paths[TRAIN_INFO]))


def tiktoken_warning(vocab: dict[int, bytes], pattern: str = DEFAULT_PATTERN) -> str | None:
    """One line where the vocab holds a token with a code point that tiktoken's engine classes otherwise
    than ``regex`` (:func:`bpe.split.pattern_classes.tiktoken_disagreements`): tiktoken, given the exported
    ranks, may split text holding it otherwise than we do, and so give other ids.  ``None`` where it holds
    none, or where tiktoken is not installed to compare with."""
    found = holds_disagreement(vocab.values(), pattern)
    if found is None:
        return None
    return (f"the vocab holds U+{found:04X} ({chr(found)!r}), which tiktoken's Unicode classes otherwise than regex's: "
            "tiktoken may split text holding such characters differently (docs/patterns.md#unicode)")


def tiktoken_encoding(directory: str | os.PathLike, name: str = "bpe-lab"):
    """A ``tiktoken.Encoding`` of the tokenizer saved in ``directory`` with ``--format tiktoken``: its ranks
    (``tokenizer.tiktoken``), and its special tokens and pattern from ``train.json``.  tiktoken must be installed.

    The ranks are read as tiktoken's loader reads them (:func:`~bpe.io.formats.ranks_of`), not through
    ``load_tiktoken_bpe``: that caches what it loads under the file's path alone, so a tokenizer trained again
    into the same folder would be read as the first one was, and each folder read would leave a copy in
    ``$TMPDIR/data-gym-cache``.  (The tests hold that tiktoken's own loader reads the file the same.)"""
    import tiktoken  # noqa: PLC0415 (an optional dependency: the dev and peers extras)

    tokenizer = load_tokenizer(directory)
    ranks_path = Path(directory) / "tokenizer.tiktoken"
    if not ranks_path.is_file():
        raise BPEError(f"no tokenizer.tiktoken in {directory}: train with --format tiktoken")
    specials = {t: tokenizer.token_ids[t.encode("utf-8")] for t in tokenizer.special_tokens}
    ranks = ranks_of(ranks_path.read_text(encoding="ascii"))
    return tiktoken.Encoding(name, pat_str=tokenizer.pattern, mergeable_ranks=ranks, special_tokens=specials)


def token_report(vocab: dict[int, bytes], special_tokens: Sequence[str] = (), top: int = 5) -> list[str]:
    """Lines printed after training: the longest tokens (also without whitespace-only ones, such as runs of
    spaces) and how many are not valid UTF-8 alone."""
    special = {t.encode("utf-8") for t in special_tokens}
    learned = [(i, t) for i, t in vocab.items() if i >= 256 and t not in special]
    by_length = sorted(learned, key=lambda item: (-len(item[1]), item[0]))
    invalid = 0
    for _, token in learned:
        try:
            token.decode("utf-8")
        except UnicodeDecodeError:
            invalid += 1

    def shown(tokens) -> str:
        return ", ".join(f"{t.decode('utf-8', errors='replace')!r} ({len(t)} bytes, id {i})" for i, t in tokens)

    lines = ["longest tokens: " + shown(by_length[:top])]
    worded = [(i, t) for i, t in by_length if t.strip()][:top]  # bytes.strip(): ASCII whitespace
    if worded != by_length[:top]:
        lines.append("longest tokens that are not only whitespace: " + shown(worded))
    lines.append(f"learned tokens that are not valid UTF-8 on their own: {invalid:,} of {len(learned):,}")
    return lines


