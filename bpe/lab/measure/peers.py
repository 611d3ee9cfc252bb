"""Peers for the bench: the Rust trainers of HF ``tokenizers`` (two ways), ``rustbpe`` and ``bpeasy``, same data.

``bench --peers`` (``pip install -e '.[peers]'``) runs each after our variant(s), on the same file,
vocab size and special tokens, each repeat in a fresh process, asked for the same work as ours:

* all but tokenizers-file get the file's documents split on the special tokens (in their time);
* **tokenizers**: ``models.BPE`` with ``BpeTrainer(vocab_size, special_tokens, initial_alphabet=
  ByteLevel.alphabet())``, the GPT-2 ``Split`` (isolated) then ``ByteLevel`` without its own regex,
  ``train_from_iterator``; **tokenizers-file**: the same trained from the file itself
  (``Tokenizer.train([path], trainer)``: Rust reads and pre-tokenizes it in parallel), the special
  tokens removed by a first ``Split(..., "removed")``;
* **rustbpe** and **bpeasy** (``max_token_length=128``): the GPT-2 pattern, ``vocab_size -
  len(special_tokens)``: their vocab is the 256 bytes plus the merges.

``RAYON_NUM_THREADS`` is the bench's ``workers``.  Their merges are not compared with ours (their
pre-tokenization differs in details); the bench shows how many each made, so the work is the same size.
"""

from __future__ import annotations

import json
import os
import sys
import time
from importlib.util import find_spec
from pathlib import Path

from bpe.errors import BPEError
from bpe.lab.measure.fresh_process import run_json_child, write_result
from bpe.lab.measure.spread import ratio_text, summary

#: Peer name -> the module it needs.
PEERS = {"tokenizers": "tokenizers", "tokenizers-file": "tokenizers", "rustbpe": "rustbpe", "bpeasy": "bpeasy"}
INSTALL_HINT = ".venv/bin/pip install -e '.[peers]'"


def missing_message(name: str) -> str:
    """What to say when peer ``name``'s module is missing (it names the module: pip installs modules)."""
    return f"{PEERS.get(name, name)} is not installed; install the peers with: {INSTALL_HINT}"


def read_documents(path: str, special_tokens: list[str]) -> list[str]:
    from bpe.training.pretokenize import split_on_special_tokens

    with open(path, encoding="utf-8", newline="") as f:
        return split_on_special_tokens(f.read(), special_tokens)


def _hf_tokenizer_and_trainer(vocab_size: int, special_tokens: list[str], *, split_specials: bool):
    """HF tokenizers' BPE with the GPT-2 split and byte-level mapping; its trainer."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    from bpe.training.pretokenize import GPT2_PATTERN, special_token_regex

    steps = [pre_tokenizers.Split(Regex(GPT2_PATTERN), behavior="isolated"),
             pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    if split_specials and special_tokens:  # training from a file: drop the special tokens from the text
        steps.insert(0, pre_tokenizers.Split(Regex(special_token_regex(special_tokens).pattern), behavior="removed"))
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(steps)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=list(special_tokens),
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    return tokenizer, trainer


def train_tokenizers(path: str, vocab_size: int, special_tokens: list[str]) -> int:
    """Train HF tokenizers' BPE on documents read in Python; returns the number of merges it made."""
    docs = read_documents(path, special_tokens)
    tokenizer, trainer = _hf_tokenizer_and_trainer(vocab_size, special_tokens, split_specials=False)
    tokenizer.train_from_iterator(docs, trainer, length=len(docs))
    return tokenizer.get_vocab_size() - 256 - len(special_tokens)


def train_tokenizers_file(path: str, vocab_size: int, special_tokens: list[str]) -> int:
    """Train HF tokenizers' BPE on the file itself (Rust reads and splits it); the number of merges."""
    tokenizer, trainer = _hf_tokenizer_and_trainer(vocab_size, special_tokens, split_specials=True)
    tokenizer.train([str(path)], trainer)
    return tokenizer.get_vocab_size() - 256 - len(special_tokens)


def train_rustbpe(path: str, vocab_size: int, special_tokens: list[str]) -> int:
    """Train rustbpe with the GPT-2 pattern; returns the number of merges it made."""
    import rustbpe

    from bpe.training.pretokenize import GPT2_PATTERN

    docs = read_documents(path, special_tokens)
    tokenizer = rustbpe.Tokenizer()
    tokenizer.train_from_iterator(iter(docs), vocab_size - len(special_tokens), pattern=GPT2_PATTERN)
    return tokenizer.vocab_size - 256


def train_bpeasy(path: str, vocab_size: int, special_tokens: list[str]) -> int:
    """Train bpeasy with the GPT-2 pattern; returns the number of merges it made."""
    import bpeasy

    from bpe.training.pretokenize import GPT2_PATTERN

    docs = read_documents(path, special_tokens)
    vocab = bpeasy.train_bpe(iter(docs), GPT2_PATTERN, 128, vocab_size - len(special_tokens))
    return len(vocab) - 256


_TRAINERS = {"tokenizers": train_tokenizers, "tokenizers-file": train_tokenizers_file, "rustbpe": train_rustbpe,
             "bpeasy": train_bpeasy}
_CHILD_CODE = "from bpe.lab.measure.peers import peer_child_main; peer_child_main()"


def peer_child_main() -> None:
    """One timed peer run in a fresh process (settings as JSON on stdin, result via ``write_result``)."""
    from bpe.training.timer import peak_rss_bytes

    settings = json.load(sys.stdin)
    started = time.perf_counter()
    merges = _TRAINERS[settings["peer"]](settings["path"], settings["vocab_size"], settings["special_tokens"])
    total = time.perf_counter() - started
    write_result({"total": total, "merges": merges, "peak_rss": peak_rss_bytes()["self"]})


def run_peer(name: str, path: str | Path, vocab_size: int, special_tokens: list[str],
             workers: int | None = None) -> dict:
    """``{"total": s, "merges": n, "peak_rss": bytes}`` for one run, or ``{"missing": message}``."""
    if find_spec(PEERS[name]) is None:
        return {"missing": missing_message(name)}
    settings = {"peer": name, "path": str(path), "vocab_size": vocab_size, "special_tokens": special_tokens}
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


def run_peers(path: Path, vocab_size: int, special_tokens: list[str], workers: int | None, repeat: int,
              names: list[str] | None = None) -> dict:
    """Each peer's median over ``repeat`` fresh-process runs, the peers taking turns (the bench's ``--peers``);
    one missing or failed: its line (``{"missing": ...}``, ``{"error": ...}``)."""
    from bpe.lab.measure.plan import in_turns

    results = {name: {} for name in names or PEERS}

    def run_one(name: str, _: int) -> dict | None:
        run = results[name] = run_peer(name, path, vocab_size, special_tokens, workers)  # a run: replaced below
        return run if "total" in run else None

    for name, runs in in_turns(list(results), repeat, run_one).items():
        results[name] = {"total": summary([r["total"] for r in runs])["median"], "merges": runs[0]["merges"],
                         "peak_rss": summary([r["peak_rss"] for r in runs])["median"], "runs": runs}
    return results


def peers_table(peers: dict, variants: dict) -> str:
    """One line per peer: its median time, merges, peak RSS, and each variant's time as a multiple of it."""
    lines = ["\npeers (median total; 'vN 2.00x faster': our variant against the peer)"]
    width = max(12, *(len(name) + 2 for name in peers)) if peers else 12
    for name, result in peers.items():
        if "missing" in result or "error" in result:
            lines.append(f"{name:<{width}}{result.get('missing') or result.get('error')}")
            continue
        ratios = "  ".join(f"{v} {ratio_text(result['total'] / info['median']['total'])}"
                           for v, info in variants.items())
        lines.append(f"{name:<{width}}{result['total']:>8.3f}s{result['merges']:>8,} merges"
                     f"{'peak RSS ' + format(result['peak_rss'] / 1e6, ',.1f') + ' MB':>20}   {ratios}")
    return "\n".join(lines)
