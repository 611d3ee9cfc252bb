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


