from bpe.cli import run

run()
