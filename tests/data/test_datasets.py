"""Data set names (bpe/data/datasets.py): a missing one says how to get it; a generated one says what it does:
a file already there, statistics kept beside it, no bar in a log, nothing written that cannot fit, nothing left
behind by a signal."""

import os
import signal
import subprocess
import sys

from bpe.cli import main
from conftest import HANG_GUARD_SECONDS, REPO_ROOT, wait_for


def test_too_big_is_refused_in_one_line_before_writing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    assert main(["data", "get", "webtext-synth", "--size", "999TB"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe: error: generating webtext-synth-999TB.txt needs 999") and err.count("\n") == 1
    assert "free" in err and list(tmp_path.iterdir()) == []


def test_a_second_get_says_the_file_is_there_and_reads_its_statistics(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    assert main(["data", "get", "webtext-synth", "--size", "200KB"]) == 0
    first = capsys.readouterr()
    assert "generating" in first.err and "computing the statistics of webtext-synth-200KB.txt" in first.err
    assert "\r" not in first.err and "%|" not in first.err  # stderr is not a terminal here: no bar
    assert (tmp_path / "webtext-synth-200KB.stats.json").is_file()

    import bpe.data.generated as webtext  # where the statistics are kept and measured

    def measured_again(*args, **kwargs):
        raise AssertionError("the statistics were computed again")

    monkeypatch.setattr(webtext, "file_statistics", measured_again)
    assert main(["data", "get", "webtext-synth", "--size", "200KB"]) == 0
    second = capsys.readouterr()
    assert "webtext-synth-200KB.txt is already there" in second.err
    assert second.out == first.out  # the same statistics, read from beside the file


def test_sigterm_during_generation_leaves_no_temporary_file(tmp_path):
    env = dict(os.environ, BPE_DATA_DIR=str(tmp_path), PYTHONPATH=str(REPO_ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "bpe", "data", "get", "webtext-synth", "--size", "500MB"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    tmp = tmp_path / "webtext-synth-500MB.txt.tmp"
    try:
        wait_for(tmp.exists, "the generation never started writing", proc)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=HANG_GUARD_SECONDS)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signal.SIGTERM and "bpe: terminated (SIGTERM)" in err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_bench_on_a_missing_data_set_names_the_command(tmp_path, monkeypatch, capsys):
    """The command in the words of the interface in use, and the offline stand-in with the commands that make it."""
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    assert main(["bench", "--data", "tinystories"]) == 2
    err = capsys.readouterr().err
    assert "fetch it with: python -m bpe data get tinystories; offline, use its stand-in tinystories-synth" in err
    assert "python -m bpe data get tinystories-synth --size 20MB, then python -m bpe bench --data " \
           "tinystories-synth-20MB" in err
    monkeypatch.setenv("BPE_VIA_MAKE", "1")
    assert main(["bench", "--data", "owt"]) == 2
    err = capsys.readouterr().err
    assert "fetch it with: make data DATA=owt; offline, use its stand-in webtext-synth" in err
    assert "make data DATA=webtext-synth SIZE=20MB, then make bench DATA=webtext-synth-20MB" in err
    assert main(["bench", "--data", "gutenberg-books"]) == 2
    assert "offline, use its shipped sample gutenberg-sample" in capsys.readouterr().err


def test_every_downloadable_data_set_has_an_offline_stand_in():
    from bpe.data.datasets import DATASETS, resolve_data

    for dataset in DATASETS.values():
        if dataset.downloadable:
            assert dataset.stand_in in DATASETS, dataset.name
            stand_in = DATASETS[dataset.stand_in]
            assert stand_in.generated or stand_in.shipped_path is not None
            if stand_in.shipped_path is not None:
                assert resolve_data(stand_in.name).is_file()


def test_cli_reports_bad_input_without_traceback(capsys):
    assert main(["bench", "--data", "no-such-corpus"]) == 2
    err = capsys.readouterr().err
    assert "no data set or file named 'no-such-corpus'" in err and "Traceback" not in err


def test_missing_download_says_how_to_get_it(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path))
    assert main(["train", "--data", "tinystories", "--vocab-size", "300"]) == 2
    assert "python -m bpe data get tinystories;" in capsys.readouterr().err


def test_outside_a_checkout_data_goes_to_the_user_cache_folder_said_once(tmp_path, monkeypatch, capsys):
    """A checkout keeps data/; an installed copy, the user's cache folder (XDG), named in one line when it is made,
    never the folder the command runs in (tests/project/test_install.py runs the installed command for real)."""
    from bpe.data import datasets

    monkeypatch.delenv("BPE_DATA_DIR", raising=False)
    assert datasets.data_dir() == REPO_ROOT / "data"
    monkeypatch.setattr(datasets, "IN_CHECKOUT", False)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # XDG: a relative path is ignored
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert datasets.data_dir() == tmp_path / "home" / ".cache" / "bpe-lab"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    cache = tmp_path / "xdg" / "bpe-lab"
    assert datasets.data_dir() == cache

    monkeypatch.chdir(tmp_path)
    assert datasets.resolve_data("tinystories-synth-2KB") == cache / "tinystories-synth-2KB.txt"  # generated
    said = capsys.readouterr().err.splitlines()
    assert said[0] == (f"bpe-lab keeps its data sets and cached reference merges in {cache} (the user's cache "
                       f"folder: no checkout around this install; BPE_DATA_DIR=DIR moves them)")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["xdg"]
    datasets.resolve_data("tinystories-synth-3KB")
    assert "bpe-lab keeps" not in capsys.readouterr().err  # once: the folder is there now

    monkeypatch.setenv("BPE_DATA_DIR", str(tmp_path / "mine"))  # named by the user: nothing to say
    assert datasets.resolve_data("tinystories-synth-2KB") == tmp_path / "mine" / "tinystories-synth-2KB.txt"
    assert "bpe-lab keeps" not in capsys.readouterr().err
