"""Sizes with units (bpe/running/sizes.py): read or refused in one line, also from train_bpe and the command line."""

import pytest

from bpe import BPEError, train_bpe
from bpe.cli import main
from bpe.running.sizes import parse_size
from conftest import DEFAULT_CORPUS

EOT = "<|endoftext|>"


def test_parse_size_errors():
    assert parse_size("2.5kb") == 2500 and parse_size("1MiB") == 2**20
    for bad in ("fifty", "50 parsecs", "0", "-1MB"):
        with pytest.raises(BPEError, match="size"):
            parse_size(bad)


def test_cli_limit_bad_size(capsys):
    assert main(["train", "--data", "corpus-en", "--vocab-size", "300", "--limit", "lots"]) == 2
    assert "cannot read --limit 'lots'" in capsys.readouterr().err


def test_absurd_limit_is_one_clear_error(capsys):
    huge = "1" + "0" * 400  # float() makes it inf, and int(inf) an OverflowError
    with pytest.raises(BPEError, match=r"^size 10000000000000000000\.\.\. \(401 characters\) is too large: at most "):
        parse_size(huge)
    with pytest.raises(BPEError, match="is too large"):
        train_bpe(DEFAULT_CORPUS, 300, [EOT], variant="v1", limit=huge)
    assert main(["train", "--data", "corpus-en", "--vocab-size", "300", "--limit", huge]) == 2
    err = capsys.readouterr().err
    assert err.startswith("bpe: error: --limit 1000") and err.count("\n") == 1
    assert parse_size(str(10**18)) == 10**18
