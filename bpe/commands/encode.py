"""``bpe encode``: a data set or text file -> a ``.npy`` of token ids (:mod:`bpe.io.encode` does the encoding),
with a progress bar over bytes on a terminal and the figures printed; ``--peers`` then times tiktoken on the
same text and checks the ids are identical (``--json``: both timings and the check, written).
"""

from __future__ import annotations

import sys
from pathlib import Path

from tqdm import tqdm

from bpe.data.datasets import resolve_data
from bpe.errors import BPEError, out_of_memory
from bpe.io.encode import CHUNK_BYTES, MEMORY_ADVICE, EncodeStats, encode_file, peak_rss_mb
from bpe.running.sizes import parse_size


def run(args) -> int:
    """The command, from its parsed arguments."""
    if args.json and not args.peers:
        raise BPEError("--json writes the comparison with tiktoken: give --peers too")
    specials = (special_tokens_flag(args.allowed_special, "--allowed-special"),
                special_tokens_flag(args.disallowed_special, "--disallowed-special"))
    try:
        stats = run_encode(args.tokenizer, args.data, args.out, workers=args.workers, errors=args.errors,
                           chunk_bytes=parse_size(args.chunk_size, "--chunk-size"), encoder=args.encoder,
                           text_column=args.text_column, specials=specials)
    except MemoryError:  # in this process (the compiled encoder's threads, the writer): encode's advice, not train's
        raise BPEError(out_of_memory(advice=MEMORY_ADVICE)) from None
    if args.peers:
        from bpe.lab.measure.peers import run_encode_peers  # noqa: PLC0415 (start-up: the peers are optional)

        compared = run_encode_peers(args.tokenizer, stats, specials)
        if args.json:
            from bpe.lab.measure.publish import machine_info, write_json_atomic  # noqa: PLC0415 (start-up)

            command = "python -m bpe " + " ".join(sys.argv[1:]) if sys.argv[1:2] == ["encode"] else "bpe encode"
            write_json_atomic(Path(args.json), {"command": command, "machine": machine_info(),
                                                "settings": {"data": args.data, "tokenizer": str(args.tokenizer)},
                                                **compared})
            print(f"wrote {args.json}")
    return 0


def special_tokens_flag(tokens: list[str] | None, flag: str):
    """``--allowed-special``'s or ``--disallowed-special``'s tokens as ``Tokenizer.encode`` takes them: None
    (not given), ``"all"``, an empty set (``none``), or the set of those named."""
    if tokens is None or tokens in (["all"], ["none"]):
        return tokens and ("all" if tokens == ["all"] else set())
    if "all" in tokens or "none" in tokens:
        raise BPEError(f"{flag} all or none stands alone: got {' '.join(tokens)}")
    return set(tokens)


def run_encode(tokenizer_dir, data, out, *, workers=None, errors="strict", chunk_bytes=CHUNK_BYTES,
               progress: bool | None = None, encoder: str | None = None, text_column: str = "text",
               specials: tuple = (None, None)) -> EncodeStats:
    """The ``bpe encode`` command: encode, with a progress bar over bytes on a terminal, and print the figures;
    ``specials``: the special tokens allowed and disallowed (``Tokenizer.encode``'s, as tiktoken's)."""
    show = sys.stderr.isatty() if progress is None else progress
    bars = []

    def on_size(total: int) -> None:  # the bar starts once encode_file has checked every input
        bars.append(tqdm(total=total, unit="B", unit_scale=True, desc="encoding", disable=not show,
                         file=sys.stderr))

    try:
        stats = encode_file(tokenizer_dir, resolve_data(data), out, workers=workers, errors=errors,
                            chunk_bytes=chunk_bytes, on_bytes=lambda n: bars[0].update(n), on_size=on_size,
                            encoder=encoder, text_column=text_column, allowed_special=specials[0],
                            disallowed_special=specials[1])
    finally:
        for bar in bars:
            bar.close()
    ratio = f"{stats.bytes_per_token:.2f} bytes/token" if stats.tokens else "an empty file"
    print(f"encoded {stats.path}: {stats.bytes:,} bytes -> {stats.tokens:,} tokens "
          f"({ratio}) in {stats.seconds:.2f}s, {stats.mb_per_second:.1f} MB/s, "
          f"{stats.workers} {'thread' if stats.encoder == 'compiled' else 'worker'}{'s' if stats.workers != 1 else ''} "
          f"({stats.encoder} encoder)")
    peak = peak_rss_mb()
    print(f"wrote {stats.out} ({stats.dtype}, {stats.tokens:,} ids)"
          + (f"; peak memory of the largest process {peak:.1f} MB" if peak is not None else ""))
    return stats
