"""A NumPy ``.npy`` of token ids written as it grows: header space reserved first, the ids appended, the header
(which holds the array's length) written last, the file a temporary sibling renamed into place at the end.

A 1-D array's header is 128 bytes for every length below 10**19, so the ids are never held in memory or
rewritten; an error, Ctrl-C or a kill leaves no output under the name (and the next run into it removes what a
killed run left).  :mod:`bpe.io.encode` writes through it.
"""

from __future__ import annotations

import io
import os
from array import array
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from bpe.errors import BPEError
from bpe.running.files import remove_orphaned_temporaries, temporary_of

#: Bytes reserved for the .npy header: the header of any 1-D array shorter than 10**19 fits (tested).
NPY_HEADER_BYTES = 128


class NpyWriter:
    """A 1-D ``.npy`` written as it grows: header space first, data appended, header filled in at the end.

    The file is a temporary sibling of ``out`` until :meth:`commit` renames it; :meth:`abort` removes it, and
    the next run into ``out`` those that runs killed outright left.  An OS error while writing (a full disk, a
    file-size limit) is a :class:`BPEError` naming ``out``.
    """

    def __init__(self, out: Path, dtype):
        self.out, self.dtype = out, np.dtype(dtype)
        remove_orphaned_temporaries(out)
        self.tmp = self.temporary(out)
        self.count = 0
        self._file = None
        try:
            with self._naming_out():
                self._file = open(self.tmp, "wb")
                self._file.write(b"\0" * NPY_HEADER_BYTES)
        except BaseException:  # a full disk, or a stop signal that lands once the file is there
            self.abort()
            raise

    @staticmethod
    def temporary(out: Path) -> Path:
        """The temporary sibling of ``out`` that this process writes before the rename: ``.NAME.PID.tmp``."""
        return temporary_of(out)

    def write(self, packed: bytes) -> None:
        with self._naming_out():
            self._file.write(packed)
        self.count += len(packed) // self.dtype.itemsize

    def commit(self) -> None:
        with self._naming_out():
            self._file.seek(0)
            self._file.write(npy_header(self.dtype, self.count))
            self._file.close()
            os.replace(self.tmp, self.out)

    def abort(self) -> None:
        try:
            if self._file is not None:
                self._file.close()
        except OSError:  # what was still buffered cannot be written either (the disk is full): it goes anyway
            pass
        self.tmp.unlink(missing_ok=True)

    @contextmanager
    def _naming_out(self):
        try:
            yield
        except OSError as exc:
            raise BPEError(f"cannot write {self.out}: {exc.strerror or exc}") from None


def npy_header(dtype, length: int) -> bytes:
    """The ``.npy`` (format 1.0) header of a 1-D array of ``length`` items, exactly NPY_HEADER_BYTES long."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False,
                 "shape": (length,)})
    header = buffer.getvalue()
    if len(header) != NPY_HEADER_BYTES:  # numpy pads 1-D headers to 128 bytes; a change would show here
        raise BPEError(f"unexpected .npy header size {len(header)} (expected {NPY_HEADER_BYTES})")
    return header


def check_output_file(out: str | os.PathLike) -> Path:
    """``out`` as a Path if a file can be written there, else a :class:`BPEError` saying why."""
    out = Path(out)
    if out.is_dir():
        raise BPEError(f"--out {out} is a directory; give a file name such as {out / 'ids.npy'}")
    if not out.parent.is_dir():
        raise BPEError(f"cannot write {out}: directory {out.parent} does not exist")
    if not os.access(out.parent, os.W_OK):
        raise BPEError(f"cannot write {out}: directory {out.parent} is not writable")
    return out


def numpy_dtype(typecode: str):
    return np.dtype(f"=u{array(typecode).itemsize}")
