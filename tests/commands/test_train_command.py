"""``bpe train``'s run (bpe/commands/train.py): checks before training, files saved, the summary."""

import io
import json

import pytest

from bpe.commands.train import TrainSettings, run_train
from bpe.data.datasets import resolve_data
from bpe.errors import BPEError
from bpe.training.train import train_bpe

EOT = ["<|endoftext|>"]


def test_a_run_saves_the_reference_merges_and_train_json_then_summarizes(tmp_path):
    out = io.StringIO()
    settings = TrainSettings("tinystories-sample", "v6", 300, EOT, workers=1, out_dir=str(tmp_path / "tok"))
    written = run_train(settings, out=out)
    assert sorted(p.name for p in written) == ["merges.txt", "train.json", "vocab.json"]
    _, reference = train_bpe(resolve_data("tinystories-sample"), 300, EOT, variant="v1", workers=1)
    saved = (tmp_path / "tok" / "merges.txt").read_text(encoding="utf-8").splitlines()
    assert len([line for line in saved if line and not line.startswith("#")]) == len(reference) == 300 - 256 - 1
    info = json.loads((tmp_path / "tok" / "train.json").read_text())
    assert info["settings"]["variant"] == "v6" and info["settings"]["vocab_size"] == 300
    assert info["result"] == {"merges": 43, "vocab_size": 300}
    printed = out.getvalue().splitlines()
    assert printed[0].startswith("bpe-lab train: v6 on tinystories-sample") and "estimate v6 ~" in printed[0]
    assert any(line.startswith("trained v6 on tinystories-sample") and "43 merges" in line for line in printed)
    assert printed[-1].startswith("wrote ") and "train.json" in printed[-1]


def test_nothing_is_trained_when_the_settings_are_wrong(tmp_path):
    with pytest.raises(BPEError, match="--format needs --out DIR"):
        run_train(TrainSettings("tinystories-sample", "v6", 300, EOT, formats=("hf",)), out=io.StringIO())
    with pytest.raises(BPEError, match="workers must be at least 1"):
        run_train(TrainSettings("tinystories-sample", "v6", 300, EOT, workers=0), out=io.StringIO())


def test_the_default_rung_says_why_when_it_is_not_the_fastest(compiled_unbuilt):
    """Without v10, v9 and v8 built, ``bpe train`` with no variant named runs v6 and its second line says why, as the
    bench's header does (the first choice's reason, once, with the fix for this install); a variant named
    says nothing more (tests/project/test_install.py runs the installed command without a compiler)."""
    from bpe.variants.v10_threads_compact import NONE_BUILT

    out = io.StringIO()
    run_train(TrainSettings("tinystories-sample", None, 300, EOT, workers=1), out=out)
    printed = out.getvalue().splitlines()
    assert printed[0].startswith("bpe-lab train: v6 on tinystories-sample")
    assert printed[1] == f"default variant: v6 ({NONE_BUILT})"
    out = io.StringIO()
    run_train(TrainSettings("tinystories-sample", "v6", 300, EOT, workers=1), out=out)
    assert not [line for line in out.getvalue().splitlines() if line.startswith("default variant")]


def test_the_fastest_rung_runs_by_default_without_a_word():
    from bpe.training.registry import DEFAULT_VARIANTS, best_variant

    if best_variant() != DEFAULT_VARIANTS[0]:
        pytest.skip(f"{DEFAULT_VARIANTS[0]} is not built here")
    out = io.StringIO()
    run_train(TrainSettings("tinystories-sample", None, 300, EOT, workers=1), out=out)
    printed = out.getvalue().splitlines()
    assert printed[0].startswith(f"bpe-lab train: {DEFAULT_VARIANTS[0]} on tinystories-sample")
    assert not [line for line in printed if line.startswith("default variant")]


def test_a_compressed_corpus_is_said_by_its_text_not_its_size_on_disk(tmp_path, capsys):
    import gzip

    from bpe.cli import main

    documents = [f"document {i}: the same words again and again, " * 20 for i in range(30)]
    path = tmp_path / "docs.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.writelines(json.dumps({"text": d}) + "\n" for d in documents)
    on_disk = path.stat().st_size
    assert main(["train", "--variant", "v2", "--data", str(path), "--vocab-size", "270", "--quiet"]) == 0
    out = capsys.readouterr().out
    header, trained = out.splitlines()[0], next(line for line in out.splitlines() if line.startswith("trained"))
    assert f"({on_disk:,} bytes on disk, its text's counted as it is read)" in header
    text_bytes = sum(len(d.encode()) for d in documents)
    counted = int(trained.split("(")[1].split(" bytes of text")[0].replace(",", ""))
    assert counted >= text_bytes > on_disk  # the text, not the compressed file
