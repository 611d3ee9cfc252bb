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


def decode_token(text: str) -> bytes:
    return bytes(map(unicode_to_byte().__getitem__, text))  # map: the loop stays in C (50,000 merges load faster)
