"""The merge algorithms, one file per rung of the optimization ladder: ``vN_<idea>.py``.

Each file defines ``IDEA``, ``count_pretokens`` and ``Merger`` (the contract:
:mod:`bpe.training.rung`); the registry finds them by file name and imports one only when it is first
looked up.  The folder sits at the top of the repository and is installed as ``bpe.variants``
(``pyproject.toml``), so a variant imports an earlier one relatively: ``from .v2_inverted_index import
Merger``.
"""
