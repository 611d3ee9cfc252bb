"""GPT-2's reversible byte <-> printable-unicode mapping, used by the vocab/merges file formats.

GPT-2 (Radford et al. 2019) stores tokens as text by mapping each byte to a printable character:
printable Latin-1 bytes map to themselves, the other 68 bytes to U+0100 onward, so a space is
``Ġ`` and a newline ``Ċ``.

>>> encode_token(b" the\\n")
'Ġthe\u010a'
>>> decode_token(encode_token(bytes(range(256)))) == bytes(range(256))
True
"""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=None)
def byte_to_unicode() -> dict[int, str]:
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    mapping = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in mapping:
            mapping[b] = chr(256 + extra)
            extra += 1
    return mapping


@lru_cache(maxsize=None)
def unicode_to_byte() -> dict[str, int]:
    return {char: b for b, char in byte_to_unicode().items()}


def encode_token(token: bytes) -> str:
    table = byte_to_unicode()
    return "".join(table[b] for b in token)


@lru_cache(maxsize=None)
def _translation() -> dict[int, int]:
    """For ``str.translate``: each character's byte; a character below 256 that stands for no byte maps
    to U+0100, so that no character without a byte survives the latin-1 encoding after it."""
    table = {ord(char): b for char, b in unicode_to_byte().items()}
    for code in range(256):
        table.setdefault(code, 0x100)
    return table


def decode_token(text: str) -> bytes:
    """The bytes of a token in this form; a character that stands for no byte is a ``KeyError``."""
    try:  # translate, then latin-1: one character per byte, both loops in C (a vocab of 50,000 loads faster)
        return text.translate(_translation()).encode("latin-1")
    except UnicodeEncodeError as exc:
        raise KeyError(text[exc.start]) from None
