"""The build's one step beyond ``pyproject.toml``, which declares everything else: where the compiled code
cannot be built, one line says what is missing, why, and what works without it.

``pyproject.toml`` marks the three compiled modules optional, so without a C compiler setuptools goes on
without them, saying so only in a warning per module among the build's lines.  pip shows the build's
lines only with ``-v``; the installed ``bpe`` says it again on each command the missing code would have
run (``bpe train`` and ``bpe bench`` by default, ``--variant v8``, ``--variant v9``).
"""

import re
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext as setuptools_build_ext

#: What each compiled module is, for the line.
WHAT = {"bpe.variants._v8_merge": "v8's compiled merge", "bpe.variants._v9_count": "v9's compiled counter",
        "bpe.io._encoder": "the compiled encoder", "bpe.variants._v10_merge": "v10's compiled merge"}

#: The modules that start threads of their own (POSIX threads): compiled and linked with -pthread, which gcc
#: and clang take everywhere they build (MSVC has no POSIX threads: the module then runs on one thread).
THREADED = {"bpe.variants._v10_merge"}


class build_ext(setuptools_build_ext):  # noqa: N801 (the command's name, which setuptools' warnings print)
    """setuptools' ``build_ext`` (Cython's, as setuptools picks it), which remembers each module that failed
    and, after all of them, says so in one line."""

    def run(self):
        self.failures = {}
        super().run()
        if self.failures:
            names = [WHAT.get(name, name) for name in self.failures]
            listed = ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else names[0]
            why = reason(next(iter(self.failures.values())))
            many = len(names) > 1
            them = "them" if many else "it"
            print(f"bpe-lab: {listed} {'are' if many else 'is'} not built ({why}); bpe-lab works without {them}, "
                  f"slower (bpe train and bench name the rung that runs instead), and a reinstall with a C "
                  f"compiler (gcc or clang) builds {them}", file=sys.stderr, flush=True)

    def build_extension(self, ext):
        if ext.name in THREADED and self.compiler.compiler_type != "msvc":
            ext.extra_compile_args = [*ext.extra_compile_args, "-pthread"]
            ext.extra_link_args = [*ext.extra_link_args, "-pthread"]
        try:
            super().build_extension(ext)
        except Exception as error:  # an optional module's failure is setuptools' to pass over: only noted
            self.failures[ext.name] = error
            raise


def reason(error: Exception) -> str:
    """Why a module failed, short: the compiler's name and status in place of its whole command line, or that
    the compiler is missing."""
    text = str(error)
    failed = re.match(r"Command '\['([^']+)'.*returned non-zero exit status (\d+)", text)
    if failed:
        return f"the C compiler {failed[1]} exited with status {failed[2]}"
    missing = re.search(r"No such file or directory: '([^']+)'", text)
    if missing:
        return f"no C compiler found: {missing[1]} is not installed"
    return text.splitlines()[0][:200] if text else type(error).__name__


setup(cmdclass={"build_ext": build_ext})
