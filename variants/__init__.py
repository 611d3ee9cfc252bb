"""The merge algorithms, one file per step of the optimization ladder (see bpe.training.registry)."""
