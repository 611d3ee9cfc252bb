"""The packages bpe-lab needs at run time, and the one line that says how to get them when one is missing.

``python -m bpe`` checks them before anything else, so a Python without them (the system one instead
of the project's ``.venv``) gets ``bpe: error: ...`` with the command to fix it, not an import
traceback from deep inside the package.
"""

from __future__ import annotations

REQUIRED = ("regex", "tqdm", "numpy")


def missing_dependencies() -> list[str]:
    """The required modules this interpreter cannot import."""
    missing = []
    for name in REQUIRED:
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    return missing


def missing_dependency_message(missing: list[str]) -> str:
    """One sentence: what is missing and the two ways to get an interpreter that has it."""
    names = ", ".join(repr(m) for m in missing)
    return (f"this Python lacks the package(s) {names} that bpe-lab needs; use the project's venv "
            f"(make venv, then .venv/bin/bpe ... or: source .venv/bin/activate) or install them into "
            f"this one: pip install -e .")




def optional_module(name: str, needed_for: str, extra: str, package: str | None = None):
    """The optional module ``name`` imported, or a :class:`~bpe.errors.BPEError` in one line: what needs it
    and the pip command that installs it (``bpe-lab[extra]``, or the package alone).

    >>> optional_module("json", "reading JSON", "corpora").__name__
    'json'
    """
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        from bpe.errors import BPEError

        package = package or name.split(".")[0]
        raise BPEError(f"{needed_for} needs {package}, which this Python lacks: pip install 'bpe-lab[{extra}]' "
                       f"(or: pip install '{package}')") from None
