"""The kinds of text the lab times the pre-tokenizers on: each made deterministically, of its kind."""

import hashlib
import itertools

import pytest

from tools import text_kinds

GENERATED = sorted(set(text_kinds.SOURCES) - {"ascii", "webtext"})  # those two: bpe.data.webtext, tested there


def _first(kind, docs=30):
    return "".join(itertools.islice(text_kinds.SOURCES[kind](), docs))


def _non_ascii_share(text):
    return (len(text) - len(text.encode("ascii", "ignore"))) / len(text)


@pytest.mark.parametrize("kind", GENERATED)
def test_each_kind_is_the_same_every_time(kind, tmp_path, monkeypatch):
    first = _first(kind)
    assert first == _first(kind) and first.endswith(text_kinds.SEPARATOR)
    # the sample file: whole documents up to the size, made again byte for byte
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    path = text_kinds.make_sample(kind, text_kinds.SOURCES[kind], 10_000)
    made = path.read_bytes()
    assert len(made) >= 10_000 and made.endswith(text_kinds.SEPARATOR.encode()) and first.encode().startswith(made)
    path.unlink()
    assert text_kinds.make_sample(kind, text_kinds.SOURCES[kind], 10_000).read_bytes() == made


def test_the_published_kinds_are_unchanged():
    # The samples docs/pretokenize-ratio.json was made from: a change here needs the figures made again.
    digests = {kind: hashlib.sha256(_first(kind, 300).encode()).hexdigest()[:16]
               for kind in ("accented", "cyrillic", "cjk")}
    assert digests == {"accented": "5f86db4f6478c40d", "cyrillic": "70bca36e3acaf7ee", "cjk": "4ef52f31dd486c68"}


def test_each_kind_is_of_its_kind():
    texts = {kind: _first(kind) for kind in GENERATED}
    share = {kind: _non_ascii_share(text) for kind, text in texts.items()}
    assert share["digits"] == 0 and share["whitespace"] < 0.01 and share["emoji"] < 0.03 and share["accented"] < 0.1
    assert min(share["cyrillic"], share["rtl"], share["cjk"]) > 0.5 and 0.1 < share["mixed"] < 0.5
    assert any(0x0600 <= ord(c) < 0x0700 for c in texts["rtl"]) and any(0x05D0 <= ord(c) < 0x05EB for c in texts["rtl"])
    assert "\u200d" in texts["emoji"] and any(ord(c) > 0xFFFF for c in texts["emoji"])
    assert sum(c in text_kinds.COMBINING for c in texts["combining"]) > 100
    for script in (text_kinds.CYRILLIC, text_kinds.GREEK, text_kinds.ARABIC, text_kinds.HEBREW, text_kinds.CJK):
        assert set(script) & set(texts["mixed"])
    assert sum(c.isdigit() for c in texts["digits"]) > len(texts["digits"]) / 3
    assert "\t" in texts["whitespace"] and "        " in texts["whitespace"] and "\r" in texts["whitespace"]


def test_every_kind_is_listed_once_in_report_order():
    assert sorted(text_kinds.KINDS) == sorted({"books", "wikipedia", *text_kinds.SOURCES})
    assert len(set(text_kinds.KINDS)) == len(text_kinds.KINDS)
    assert list(text_kinds.sources(None)) == [kind for kind in text_kinds.KINDS if kind != "wikipedia"]
