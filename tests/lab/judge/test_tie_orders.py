"""A tie broken the wrong way, on small counts (bpe/lab/judge/tie_orders.py through the diagnosis): the wrong order
is named where it alone explains the choice, and the plain "chose the smaller" stays where it does not.
Each order caught on the tie probe by a fixture trainer: lab/judge/test_probe.py."""

from bpe.lab.judge.diagnose import Evidence, diagnose

CS336 = "CS336 breaks ties by the larger pair (compare the byte strings: max by (count, pair))"


def tie_verdict(counts, mine, reference):
    return diagnose(mine, reference, Evidence(lambda: counts, lambda: "", []), "mine")


def test_two_tied_pairs_told_apart_by_a_space_are_the_smaller_chosen():
    """As GPT-2 characters the space reads 'Ġ' (U+0120), above the letters: that order picks (' ', 'f') too,
    but so does a min-heap, so only the smaller is said."""
    verdict = tie_verdict({b" f": 3, b"ed": 3}, [(b" ", b"f")], [(b"e", b"d")])
    assert verdict["cause"] == "tie" and verdict["explanation"] == (
        f"tie broken the wrong way: both pairs occur 3 times and mine chose the smaller; {CS336}")


def test_parts_of_characters_that_decode_alike_are_not_put_down_to_text_order():
    """’ and “ share their first two bytes; their last bytes alone both decode to U+FFFD, so text order leaves
    the tie to something else and is not named."""
    counts = {"’".encode(): 2, "“".encode(): 2}
    first = (b"\xe2", b"\x80")
    verdict = tie_verdict(counts, [first, (b"\xe2\x80", b"\x99")], [first, (b"\xe2\x80", b"\x9c")])
    assert verdict["step"] == 2 and verdict["explanation"].endswith(f"mine chose the smaller; {CS336}")


def test_text_order_is_named_where_it_and_byte_order_disagree():
    counts = {"é".encode(): 4, "éo".encode(): 3, "ö".encode(): 3}
    before = [(b"\xc3", b"\xa9")]
    verdict = tie_verdict(counts, [*before, (b"\xc3", b"\xb6")], [*before, ("é".encode(), b"o")])
    assert ("byte order and text order disagree here: decoded as text (errors='replace'), a token holding part "
            "of a character reads '\ufffd' (U+FFFD), above whole characters whose bytes sort above its own, so the "
            "chosen pair reads ('\ufffd', '\ufffd') and the byte-larger one ('é', 'o')") in verdict["explanation"]


def test_the_pair_met_first_is_named_only_when_it_is_not_the_smaller():
    """The counts' order is the text's: cd, ab, ef.  (c, d) is neither the smallest nor the largest."""
    counts = {b"cd": 2, b"ab": 2, b"ef": 2}
    verdict = tie_verdict(counts, [(b"c", b"d")], [(b"e", b"f")])
    assert "chose neither the larger nor the smallest of the 3 tied pairs; it is the pair met first" in \
        verdict["explanation"]
    verdict = tie_verdict({b"ab": 2, b"ef": 2}, [(b"a", b"b")], [(b"e", b"f")])
    assert verdict["explanation"].endswith(f"mine chose the smaller; {CS336}")
