"""bpe/running/disk_cache.py: the scanners' class tables kept on disk for the next process, equal to those read
off ``regex``; a file cut, edited, of another format or in a folder that cannot be written is as if there were
none; a killed run's temporary removed by the next; ``BPE_CACHE_DIR`` set and empty keeps nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest

from bpe.running import disk_cache
from bpe.split.pattern_classes import scanner_tables
from conftest import REPO_ROOT


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """A cache folder of this test's own, and no tables remembered in this process."""
    monkeypatch.setenv("BPE_CACHE_DIR", str(tmp_path / "cache"))
    disk_cache.stored_tables.cache_clear()
    yield tmp_path / "cache"
    disk_cache.stored_tables.cache_clear()


def read_afresh(name: str) -> tuple[bytes, bytes]:
    """The tables as a new process finds them: nothing remembered, ``regex`` not asked (it would fail)."""
    disk_cache.stored_tables.cache_clear()
    return disk_cache.stored_tables(name)


@pytest.mark.parametrize("name", ["gpt2", "cl100k", "o200k"])
def test_the_tables_kept_are_those_read_off_regex(folder, monkeypatch, name):
    made = disk_cache.stored_tables(name)
    assert made == scanner_tables(name)
    assert [p.name for p in folder.iterdir()] == [disk_cache.tables_file(name).name]
    monkeypatch.setattr(disk_cache, "scanner_tables", lambda name: pytest.fail("regex read again"))
    assert read_afresh(name) == made


def test_the_file_is_named_by_the_pattern_regexs_version_and_the_classes(folder, monkeypatch):
    names = {disk_cache.tables_file(name).name for name in ("gpt2", "cl100k", "o200k")}
    assert len(names) == 3
    gpt2 = disk_cache.tables_file("gpt2")
    monkeypatch.setattr(disk_cache.regex, "__version__", "0.0.0")
    assert disk_cache.tables_file("gpt2") != gpt2
    monkeypatch.undo()
    monkeypatch.setenv("BPE_CACHE_DIR", str(folder))
    monkeypatch.setattr(disk_cache, "CLASS_PATTERNS", {**disk_cache.CLASS_PATTERNS, 4: r"\p{M}+"})
    assert disk_cache.tables_file("gpt2") != gpt2


@pytest.mark.parametrize("damage", ["cut", "flipped", "other format", "empty", "length"])
def test_a_damaged_file_is_read_as_none_and_made_again(folder, damage):
    made = disk_cache.stored_tables("gpt2")
    path = disk_cache.tables_file("gpt2")
    data = bytearray(path.read_bytes())
    if damage == "cut":
        data = data[:-100]
    elif damage == "flipped":
        data[-1] ^= 1
    elif damage == "other format":
        data[: len(disk_cache.FORMAT)] = b"bpe-lab class tables 0\n"
    elif damage == "empty":
        data = b""
    else:  # a stage 1 longer than the file
        data[len(disk_cache.FORMAT) : len(disk_cache.FORMAT) + 8] = (10**9).to_bytes(8, "little")
    path.write_bytes(bytes(data))
    assert disk_cache.read_tables(path) is None
    assert read_afresh("gpt2") == made
    assert disk_cache.read_tables(path) == made  # written again, whole


def test_a_folder_that_cannot_be_written_keeps_nothing_and_says_nothing(tmp_path, monkeypatch, capsys):
    blocked = tmp_path / "a file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("BPE_CACHE_DIR", str(blocked / "cache"))
    assert read_afresh("gpt2") == scanner_tables("gpt2")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a file"]
    assert capsys.readouterr() == ("", "")
    disk_cache.stored_tables.cache_clear()


def test_set_and_empty_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert disk_cache.cache_dir() is None
    assert read_afresh("gpt2") == scanner_tables("gpt2")
    assert list(tmp_path.iterdir()) == []
    disk_cache.stored_tables.cache_clear()


def test_without_the_variable_the_users_cache_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("BPE_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert disk_cache.cache_dir() == tmp_path / "bpe-lab" / "class-tables"


def test_a_killed_runs_temporary_is_removed_by_the_next_write(folder):
    ended = subprocess.Popen([sys.executable, "-c", ""])
    ended.wait()  # its pid names a process that has ended
    path = disk_cache.tables_file("gpt2")
    folder.mkdir(parents=True)
    dead = folder / f".{path.name}.{ended.pid}.tmp"
    dead.write_bytes(b"half a file")
    disk_cache.stored_tables("gpt2")
    assert sorted(p.name for p in folder.iterdir()) == [path.name]


def test_a_new_process_counts_with_the_file_it_finds(folder):
    """The first process writes the file; the next one's scanner counts with it, ``regex``'s classes out of its
    reach, and gives v1's merges."""
    from bpe.training.registry import VARIANTS

    if "v9" not in VARIANTS:
        pytest.skip("v9 is not built here")
    train = ("from bpe import train_bpe; import sys; "
             "print(train_bpe(sys.argv[1], 300, ['<|endoftext|>'], variant=sys.argv[2], workers=1)[1] "
             "== train_bpe(sys.argv[1], 300, ['<|endoftext|>'], variant='v1')[1])")
    blocked = ("import bpe.split.gpt2_classes as g; "
               "g.class_of_every_code_point = lambda: (_ for _ in ()).throw(AssertionError('regex read')); ")
    corpus = str(REPO_ROOT / "tests" / "fixtures" / "corpus.en")
    for script in (train, blocked + train):
        done = subprocess.run([sys.executable, "-c", script, corpus, "v9"], capture_output=True, text=True,
                              cwd=REPO_ROOT, timeout=300)
        assert (done.returncode, done.stdout, done.stderr) == (0, "True\n", "")
    assert [p.name for p in folder.iterdir()] == [disk_cache.tables_file("gpt2").name]
