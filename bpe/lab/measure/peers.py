"""The peers, other people's code doing our work on the same data (``pip install -e '.[peers]'``).

``bench --peers`` trains the Rust trainers of HF ``tokenizers`` (two ways), ``rustbpe``, ``bpeasy`` and
``gigabpe`` after our variant(s), on the same text, vocab size and special tokens, each repeat in a fresh
process, asked for the same work as ours (:func:`train_peer`):

* all but tokenizers-file and gigabpe get the text's documents split on the special tokens (in their time):
  the file's (with ``--limit``, its first bytes that ours train on), or a corpus's documents read in place
  (with ``--limit``, those ours count); tokenizers-file and gigabpe read files: the file (with ``--limit``, its
  prefix written once), a corpus's plain text files, else a row saying why not (:func:`peer_inputs`);
* **tokenizers**: ``models.BPE`` with ``BpeTrainer(vocab_size, special_tokens, initial_alphabet=
  ByteLevel.alphabet())``, the pattern's ``Split`` (isolated; :func:`bpe.io.formats.hf_pattern`, the
  pattern as Oniguruma reads it as ``regex`` does) then ``ByteLevel`` without its own regex,
  ``train_from_iterator``; **tokenizers-file**: the same trained from the file itself
  (``Tokenizer.train([path], trainer)``: Rust reads and pre-tokenizes it in parallel), the special
  tokens removed by a first ``Split(..., "removed")``;
* **rustbpe** and **bpeasy** (``max_token_length=128``): the pattern (``--pattern``, GPT-2's by default), ``vocab_size -
  len(special_tokens)``: their vocab is the 256 bytes plus the merges;
* **gigabpe**: ``gigabpe.train_bpe([path], vocab_size, special_tokens, pretokenizer="bytelevel",
  threads=workers)``, from the file itself, as HF's ``BpeTrainer`` trains (its merges are HF's, byte for byte);
  it reads the special tokens in the text as text, a few pre-tokens more than ours.  Its alphabet is the bytes
  the text holds, not all 256, so it is asked for the vocab size that makes as many merges as ours
  (:func:`distinct_bytes`, counted before its time starts).  It takes no pattern: with another than GPT-2's it
  still splits as GPT-2's ``ByteLevel`` does, and its row says so.

``RAYON_NUM_THREADS`` is the bench's ``workers`` (and gigabpe's ``threads``).  Their merges are not compared
with ours (their pre-tokenization differs in details); the bench shows how many each made, so the work is the
same size.

``bpe encode --peers`` (:func:`run_encode_peers`) encodes the same text with tiktoken, built from our
tokenizer (:func:`bpe.io.formats.tiktoken_ranks`, the tokenizer's pattern); the text is split on the special tokens
as ours is and the pieces go to ``encode_ordinary_batch(pieces, num_threads=workers)``, and the ids must be
identical.  Its timing is that call alone, against the whole of ``bpe encode`` (chunking, pool, reading,
writing), so the ratio, if anything, flatters tiktoken; CPU time is printed too (the steadier figure on a
busy machine).  The text is held in memory: a bench for files that fit.
"""

from __future__ import annotations

import json
import os
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass
from importlib.util import find_spec
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

from bpe.errors import BPEError
from bpe.io.formats import hf_pattern, ranks_of, tiktoken_ranks
from bpe.lab.fresh_process import run_json_child, write_result
from bpe.lab.measure.result import CandidateResult, PeerResult
from bpe.lab.measure.spread import ratio_text, summary
from bpe.lab.measure.table import Column, terminal_lines
from bpe.running.timer import peak_rss_bytes
from bpe.split.patterns import (
    DEFAULT_PATTERN,
    pattern_name,
    resolve_pattern,
    special_token_regex,
    split_on_special_tokens,
)

if TYPE_CHECKING:  # imported where a corpus is read: the peer child of a text file imports no reader of corpora
    from bpe.corpus.corpus import Corpus

#: Peer name -> the module it needs.
PEERS = {"tokenizers": "tokenizers", "tokenizers-file": "tokenizers", "rustbpe": "rustbpe", "bpeasy": "bpeasy",
         "gigabpe": "gigabpe"}
#: The peers that read files (their Rust reads and pre-tokenizes them); the others take the documents.
FILE_PEERS = ("tokenizers-file", "gigabpe")
INSTALL_HINT = ".venv/bin/pip install -e '.[peers]'"
#: The peers that take no pattern: they split as GPT-2's ``ByteLevel`` does whatever ``--pattern`` says.
NO_PATTERN = ("gigabpe",)


def missing_message(name: str) -> str:
    """What to say when peer ``name``'s module is missing (it names the module: pip installs modules)."""
    return f"{PEERS.get(name, name)} is not installed; install the peers with: {INSTALL_HINT}"


def train_peer(peer: str, path: str | list[str], vocab_size: int, special_tokens: list[str],
               pattern: str = DEFAULT_PATTERN, *, end: int | None = None, text_column: str = "text") -> int:
    """Train one peer of :data:`PEERS` as the module says, splitting by ``pattern`` (gigabpe: by its own GPT-2
    split); the number of merges it made.  ``path``: a text file (a peer that takes documents: its first ``end``
    bytes), or a list of a corpus's files, the text in ``text_column`` (its documents up to ``end`` bytes of text);
    a peer that reads files (:data:`FILE_PEERS`) reads them whole, plain text files (:func:`peer_inputs`)."""
    documents = None
    if peer not in FILE_PEERS:
        documents = peer_documents(path, special_tokens, end, text_column, pattern)
    elif end is not None:
        raise BPEError(f"{peer} reads whole files, not the first {end:,} bytes of one: give it the prefix as a file")
    files = [str(path)] if isinstance(path, (str, os.PathLike)) else [str(p) for p in path]
    pattern = resolve_pattern(pattern)[1]
    # The peers are optional dependencies (the peers extra): imported here, in the child that times them.
    if peer == "rustbpe":
        import rustbpe  # noqa: PLC0415

        tokenizer = rustbpe.Tokenizer()
        tokenizer.train_from_iterator(iter(documents), vocab_size - len(special_tokens), pattern=pattern)
        return tokenizer.vocab_size - 256
    if peer == "gigabpe":
        import gigabpe  # noqa: PLC0415

        threads = int(os.environ.get("RAYON_NUM_THREADS", "0")) or None
        _, merges = gigabpe.train_bpe(files, vocab_size, special_tokens=list(special_tokens),
                                      pretokenizer="bytelevel", threads=threads)
        return len(merges)
    if peer == "bpeasy":
        import bpeasy  # noqa: PLC0415

        return len(bpeasy.train_bpe(iter(documents), pattern, 128, vocab_size - len(special_tokens))) - 256
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers  # noqa: PLC0415

    steps = [pre_tokenizers.Split(Regex(hf_pattern(pattern)), behavior="isolated"),
             pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    if documents is None and special_tokens:  # training from the file: drop the special tokens from the text
        steps.insert(0, pre_tokenizers.Split(Regex(special_token_regex(special_tokens).pattern), behavior="removed"))
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(steps)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(special_tokens),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    if documents is None:
        tokenizer.train(files, trainer)
    else:
        tokenizer.train_from_iterator(documents, trainer, length=len(documents))
    return tokenizer.get_vocab_size() - 256 - len(special_tokens)


def peer_documents(path: str | list[str], special_tokens: list[str], end: int | None = None,
                   text_column: str = "text", pattern: str = DEFAULT_PATTERN) -> list[str]:
    """The documents a peer that takes documents trains on (:func:`train_peer`'s ``path`` and ``end``), the text
    split on the special tokens: a file's, or a corpus's documents each followed by the separator
    (:func:`bpe.corpus.batches.documents_text`, the documents ``train_bpe`` counts with that limit)."""
    if isinstance(path, (str, os.PathLike)):
        with open(path, "rb") as f:
            return split_on_special_tokens((f.read() if end is None else f.read(end)).decode("utf-8"), special_tokens)
    from bpe.corpus.batches import counting_tokens, documents_text  # noqa: PLC0415
    from bpe.corpus.corpus import open_corpus  # noqa: PLC0415

    corpus = open_corpus(list(path), text_column=text_column)
    text = "".join(documents_text(corpus, special_tokens, limit=end, pattern=pattern))
    return split_on_special_tokens(text, counting_tokens(special_tokens))


#: The peer child imports this module, and its peak memory is the peer's: what only the parent needs and
#: would weigh on it (numpy; :mod:`~bpe.lab.measure.plan`, which imports the trainer) is imported where it
#: is used.
_CHILD_CODE = "from bpe.lab.measure.peers import peer_child_main; peer_child_main()"


def distinct_bytes(path: str | Path | list) -> int:
    """How many distinct byte values the file (or the files) hold: the alphabet of a trainer that starts from the
    bytes it sees.

    >>> distinct_bytes("tests/fixtures/corpus.en") < 256
    True
    """
    seen = bytearray(256)
    for one in [path] if isinstance(path, (str, os.PathLike)) else path:
        with open(one, "rb") as f:
            while block := f.read(1 << 24):
                for value in set(block.translate(None, bytes(i for i in range(256) if seen[i]))):
                    seen[value] = 1
    return sum(seen)


def peer_vocab_size(peer: str, path: str | Path | list, vocab_size: int, special_tokens: list[str]) -> int:
    """The vocab size to ask ``peer`` for, so that it makes as many merges as ours: ours less the 256 bytes, plus
    gigabpe's alphabet (the bytes the files hold); every other peer starts from the 256 bytes as ours does."""
    if peer != "gigabpe":
        return vocab_size
    return vocab_size - 256 + distinct_bytes(path)


def peer_child_main() -> None:
    """One timed peer run in a fresh process (settings as JSON on stdin, result via ``write_result``)."""
    settings = json.load(sys.stdin)
    peer, path, tokens = settings["peer"], settings["path"], settings["special_tokens"]
    vocab_size = peer_vocab_size(peer, path, settings["vocab_size"], tokens)
    started = time.perf_counter()
    merges = train_peer(peer, path, vocab_size, tokens, settings.get("pattern", DEFAULT_PATTERN),
                        end=settings.get("end"), text_column=settings.get("text_column", "text"))
    total = time.perf_counter() - started
    write_result({"total": total, "merges": merges, "peak_rss": peak_rss_bytes()["self"]})


def run_peer(name: str, path: str | Path | list, vocab_size: int, special_tokens: list[str],
             workers: int | None = None, pattern: str = DEFAULT_PATTERN, *, end: int | None = None,
             text_column: str = "text") -> dict:
    """``{"total": s, "merges": n, "peak_rss": bytes}`` for one run, or ``{"missing": message}``; ``path``,
    ``end`` and ``text_column``: :func:`train_peer`'s."""
    if find_spec(PEERS[name]) is None:
        return {"missing": missing_message(name)}
    settings = {"peer": name, "path": str(path) if isinstance(path, (str, os.PathLike)) else [str(p) for p in path],
                "vocab_size": vocab_size, "special_tokens": special_tokens, "pattern": pattern, "end": end,
                "text_column": text_column}
    proc = run_json_child(_CHILD_CODE, settings, RAYON_NUM_THREADS=str(workers or os.cpu_count() or 1),
                          TOKENIZERS_PARALLELISM="true")
    if proc.returncode != 0 or proc.result is None:
        return {"error": f"{name} failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}"}
    return proc.result


def peer_names(peers: bool | str) -> list[str]:
    """``True`` or ``"all"``: every peer; else a comma list of names from :data:`PEERS`.

    >>> peer_names("rustbpe,tokenizers-file")
    ['rustbpe', 'tokenizers-file']
    """
    if peers is True or peers == "all":
        return list(PEERS)
    names = [name.strip() for name in str(peers).split(",") if name.strip()]
    unknown = [name for name in names if name not in PEERS]
    if unknown or not names:
        raise BPEError(f"unknown peer {unknown[0] if unknown else peers!r}; peers: {', '.join(PEERS)} (or all)")
    return names


def run_peers(data: Path | Corpus, vocab_size: int, special_tokens: list[str], workers: int | None, repeat: int,
              names: list[str] | None = None, pattern: str = DEFAULT_PATTERN,
              end: int | None = None) -> dict[str, PeerResult]:
    """Each peer's median over ``repeat`` fresh-process runs, the peers taking turns (the bench's ``--peers``),
    each splitting by ``pattern`` (gigabpe: :data:`NO_PATTERN`), on the text ours train on (:func:`peer_inputs`);
    one missing, failed or reading none of it: why (:class:`PeerResult`'s ``missing``, ``error``, ``note``)."""
    from bpe.lab.fresh_process import lab_tempdir  # noqa: PLC0415 (kept out of the peer child: see _CHILD_CODE)
    from bpe.lab.measure.plan import in_turns  # noqa: PLC0415

    names = names or list(PEERS)
    results: dict[str, PeerResult] = {}
    with lab_tempdir("peers") as folder, ExitStack() as stack:
        installed = [name for name in names if find_spec(PEERS[name]) is not None]  # nothing written for the others
        inputs = peer_inputs(installed, data, special_tokens, end, Path(folder), pattern, stack)

        def run_one(name: str, _: int) -> dict | None:
            given = inputs.get(name)
            if given is None:  # not installed: how to install it
                results[name] = PeerResult(missing=missing_message(name))
                return None
            if isinstance(given, str):  # it reads no input this data gives: why
                results[name] = PeerResult(note=given)
                return None
            run = run_peer(name, given.path, vocab_size, special_tokens, workers, pattern, end=given.end,
                           text_column=given.text_column)
            if "total" not in run:  # missing or failed: why
                results[name] = PeerResult(**run)
                return None
            return run

        for name, runs in in_turns(names, repeat, run_one).items():
            results[name] = PeerResult(summary([r["total"] for r in runs])["median"], runs[0]["merges"],
                                       summary([r["peak_rss"] for r in runs])["median"], runs,
                                       note=inputs[name].note)
    return {name: results[name] for name in names}


@dataclass(frozen=True)
class PeerInput:
    """What one peer reads (:func:`train_peer`'s ``path``, ``end`` and ``text_column``), and what its row says of
    it (``note``; ``None``: the data itself, as ours read it)."""

    path: str | list[str]
    end: int | None = None
    text_column: str = "text"
    note: str | None = None


def peer_inputs(names: list[str], data: Path | Corpus, special_tokens: list[str], end: int | None, folder: Path,
                pattern: str, stack: ExitStack) -> dict[str, PeerInput | str]:
    """What each of ``names`` reads, the text our runs train on: ``data``, a text file up to ``end`` (the limit's
    end) or a corpus read in place (:class:`~bpe.corpus.corpus.Corpus`) up to ``end`` bytes of text (its limit);
    or, where a peer reads none of it, why (its row's line).  A peer that takes documents reads them itself; a
    peer that reads files (:data:`FILE_PEERS`) gets the file, or its first ``end`` bytes written once in
    ``folder``; a corpus's plain text files, or with ``end`` its documents up to it written once as one text file
    (its row says so); of another corpus (JSON lines, Parquet, compressed or remote files), nothing: writing it
    all out would be the copy the runs avoid."""
    # kept out of the peer child: see _CHILD_CODE
    from bpe.corpus.batches import text_file_of  # noqa: PLC0415
    from bpe.corpus.corpus import Corpus  # noqa: PLC0415
    from bpe.lab.measure.timed_run import write_prefix  # noqa: PLC0415

    cut = end is not None and any(name in FILE_PEERS for name in names)  # a file peer needs the cut text as a file
    files: PeerInput | str
    if not isinstance(data, Corpus):
        documents = files = PeerInput(str(data), end)
        if cut:
            files = PeerInput(str(write_prefix(Path(data), end, folder / Path(data).name)))
    else:
        documents = PeerInput([source.location for source in data.sources], end, data.text_column)
        if cut:
            joined = stack.enter_context(text_file_of(data, special_tokens, folder, limit=end, pattern=pattern))
            files = PeerInput(str(joined), note=f"read the corpus's documents up to --limit, written once as one text "
                                                f"file of {joined.stat().st_size:,} bytes (it reads files, and no "
                                                "file of the corpus holds just them)")
        elif data.plain_files is not None:
            files = PeerInput([str(path) for path in data.plain_files])
        else:
            files = (f"not run: it reads only plain text files, and {data.label} holds JSON lines, Parquet, "
                     "compressed or remote files (give it the plain text, or a --limit to write that much once)")
    return {name: files if name in FILE_PEERS else documents for name in names}


def peer_columns(variants: dict[str, CandidateResult]) -> list[Column]:
    """The peers' table, the bench's and the report's: a row ``(name, PeerResult)`` each, its median time (or why
    it has none), merges and peak RSS, and under each variant that variant's median time against the peer's."""
    def ratio(v: CandidateResult):
        return lambda row: None if row[1].total is None else ratio_text(row[1].total / v.median.total)

    return [Column("peer", lambda row: row[0], align="<", width=12),
            Column("total", lambda row: row[1].why_none or row[1].total, "{:.3f} s"),
            Column("merges", lambda row: row[1].merges, "{:,}"),
            Column("peak RSS", lambda row: row[1].peak_rss and row[1].peak_rss / 1e6, "{:,.1f} MB"),
            *(Column(name, ratio(v)) for name, v in variants.items())]


def peers_table(peers: dict[str, PeerResult], variants: dict[str, CandidateResult],
                pattern: str = DEFAULT_PATTERN) -> str:
    """The peers that ran (:func:`peer_columns`), then a line for each that did not, saying why, and for each
    that ran on other than the data itself, what it read; with another pattern than GPT-2's, a peer that takes
    none (:data:`NO_PATTERN`) says so in its row."""
    other = pattern_name(pattern) != DEFAULT_PATTERN
    ran = [(f"{name} (GPT-2 split: takes no pattern)" if other and name in NO_PATTERN else name, peer)
           for name, peer in peers.items() if peer.total is not None]
    return "\n".join(["\npeers (median total; under each variant, its time against the peer's: '2.00x faster', "
                      "the variant is faster)", *(terminal_lines(peer_columns(variants), ran) if ran else []),
                      *(f"{name}: {peer.why_none}" for name, peer in peers.items() if peer.total is None),
                      *(f"{name}: {peer.note}" for name, peer in peers.items()
                        if peer.total is not None and peer.note)])


def tiktoken_encoding(tokenizer):
    """A ``tiktoken.Encoding`` with our merges (ranks = our ids) and the tokenizer's pattern (GPT-2's unless it
    was trained with another)."""
    try:
        import tiktoken  # noqa: PLC0415 (an optional dependency: the peers extra)
    except ImportError:
        raise BPEError(f"--peers needs tiktoken, which is not installed; install it with: {INSTALL_HINT}") from None
    ranks = ranks_of(tiktoken_ranks(tokenizer.vocab, tokenizer.special_tokens))
    specials = {t: tokenizer.token_ids[t.encode("utf-8")] for t in tokenizer.special_tokens}
    return tiktoken.Encoding("bpe-lab", pat_str=tokenizer.pattern, mergeable_ranks=ranks, special_tokens=specials)


def tiktoken_ids(tokenizer, encoding, text: str, threads: int) -> tuple[list[int], float, float]:
    """tiktoken's ids of ``text`` (special tokens as their ids), and the wall and CPU seconds its encoding took."""
    from bpe.io.encode import cpu_seconds  # noqa: PLC0415 (it imports numpy: kept out of the peer child)

    split = tokenizer._special_split
    pieces = [text] if split is None else split.split(text)  # text, special, text, ..., text
    started, cpu_started = time.perf_counter(), cpu_seconds()
    encoded = encoding.encode_ordinary_batch(pieces[::2], num_threads=threads)
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu_started
    specials = [[tokenizer.token_ids[s.encode("utf-8")]] for s in pieces[1::2]] + [[]]
    return list(chain.from_iterable(chain.from_iterable(zip(encoded, specials)))), seconds, cpu


def first_difference(ours, theirs) -> int | None:
    """The first index where two id sequences differ (a length difference counts), or None."""
    import numpy as np  # noqa: PLC0415 (kept out of the peer child: see _CHILD_CODE)

    ours, theirs = np.asarray(ours), np.asarray(theirs)
    common = min(len(ours), len(theirs))
    unequal = np.flatnonzero(ours[:common] != theirs[:common])
    if len(unequal):
        return int(unequal[0])
    return None if len(ours) == len(theirs) else common


def run_encode_peers(tokenizer_dir, stats, specials: tuple = (None, None)) -> dict:
    """After ``bpe encode`` (``stats``): time tiktoken on the same file and threads; print the ratio and the
    check, and return them (``ours``, ``tiktoken``: seconds and CPU seconds; ``ids_identical``).  ``specials``:
    ``bpe encode``'s allowed and disallowed special tokens (``Tokenizer.with_specials``), which tiktoken is given."""
    # numpy (bpe.io.encode imports it too) is kept out of the peer child: see _CHILD_CODE.
    import numpy as np  # noqa: PLC0415

    from bpe.io.encode import load_tokenizer_dir  # noqa: PLC0415

    tokenizer = load_tokenizer_dir(tokenizer_dir).with_specials(*specials)
    encoding = tiktoken_encoding(tokenizer)
    with open(stats.path, encoding="utf-8", newline="") as f:
        text = f.read()
    ids, seconds, cpu = tiktoken_ids(tokenizer, encoding, text, stats.workers)
    ours = np.load(stats.out, mmap_mode="r")
    where = first_difference(ours, ids)
    ratio = stats.seconds / seconds if seconds else float("inf")
    print(f"tiktoken encode_ordinary_batch, {stats.workers} thread{'s' if stats.workers != 1 else ''}: "
          f"{seconds:.2f}s, {stats.bytes / 1e6 / seconds:.1f} MB/s; ours / tiktoken: {ratio:.2f}x the time")
    print(f"CPU time: ours {stats.cpu_seconds:.2f}s (all processes), tiktoken {cpu:.2f}s; "
          f"ours / tiktoken: {stats.cpu_seconds / cpu if cpu else float('inf'):.2f}x")
    if where is not None:
        print(f"ids DIFFER from tiktoken's at index {where:,} (ours {len(ours):,} ids, tiktoken {len(ids):,})")
        raise BPEError(f"ids differ from tiktoken's at index {where:,}")
    print(f"ids identical to tiktoken's ({len(ids):,} ids)")
    return {"ours": {"encoder": stats.encoder, "workers": stats.workers, "bytes": stats.bytes, "ids": len(ours),
                     "seconds": stats.seconds, "cpu_seconds": stats.cpu_seconds},
            "tiktoken": {"threads": stats.workers, "seconds": seconds, "cpu_seconds": cpu},
            "ids_identical": True}
