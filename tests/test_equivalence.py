"""Every variant gives exactly v1's merges on generated corpora (hypothesis)."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bpe import VARIANTS, train_bpe

SPECIAL = "<|endoftext|>"
# Small alphabets make repeated pairs (aaaa), ties and overlaps common; the rest covers unicode,
# emoji, NUL, CR/LF, digits and punctuation.
pieces = st.one_of(
    st.text(alphabet="ab ", min_size=1, max_size=12),
    st.text(alphabet="aé😀\x00\r\n\t 1.'s", min_size=1, max_size=8),
    st.sampled_from([SPECIAL, " ", "\n\n", "aaaa", "abab", "don't", "naïve", "日本語", "x"]),
    st.text(min_size=1, max_size=6),
)
corpora = st.lists(pieces, min_size=0, max_size=30).map("".join)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=corpora, extra_merges=st.integers(min_value=0, max_value=60))
def test_all_variants_match_v1(tmp_path_factory, text, extra_merges):
    path = tmp_path_factory.mktemp("eq") / "corpus.txt"
    path.write_bytes(text.encode("utf-8", errors="surrogatepass"))
    vocab_size = 257 + extra_merges
    expected = train_bpe(path, vocab_size, [SPECIAL], variant="v1")
    for name in VARIANTS:
        if name != "v1":
            assert train_bpe(path, vocab_size, [SPECIAL], variant=name, workers=2) == expected, name
