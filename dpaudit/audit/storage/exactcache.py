"""The exact test's calibrations kept on disk between audits
(:mod:`dpaudit.audit.stats.memo`).

The first audit of a claim at a test size calibrates the exact test (its level, its
families: about a second of CPU for the default audit); the next audit of the same
claim at the same size, in any process, reads them back in milliseconds. Where:
``$DPAUDIT_CACHE_DIR`` when set (``off``: no disk cache), else
``~/.cache/dpaudit/exact``. One NPZ file per result (NumPy arrays only: read with
``allow_pickle=False``), written atomically; removing the folder only costs the
recomputation.

A result is filed under its :func:`dpaudit.audit.stats.memo.key` joined with
:func:`code_digest`: a SHA-256 of every source file of ``dpaudit/audit/stats`` and
of the NumPy and SciPy versions (the binomial tables come from SciPy's incomplete
beta). A change to the code that computes a result, or to the libraries under it,
files it anew; a file that is missing, unreadable or malformed is recomputed
(:mod:`~dpaudit.audit.stats.memo` checks the arrays' shapes).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import tempfile
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpaudit.audit.stats import memo

__all__ = ["CACHE_VARIABLE", "DiskStore", "cache_dir", "code_digest", "exact_cache"]

CACHE_VARIABLE = "DPAUDIT_CACHE_DIR"
"""The environment variable naming the folder (``off``: no disk cache)."""


def cache_dir() -> Path | None:
    """The folder of the disk cache; ``None`` when it is turned off."""
    named = os.environ.get(CACHE_VARIABLE)
    if named is not None:
        return (
            None if named.strip().lower() in {"", "off"} else Path(named).expanduser()
        )
    return Path.home() / ".cache" / "dpaudit" / "exact"


@functools.cache
def code_digest() -> str:
    """SHA-256 of the statistics' source files and the NumPy and SciPy versions."""
    import scipy

    digest = hashlib.sha256(
        f"numpy {np.__version__} scipy {scipy.__version__}".encode()
    )
    root = Path(memo.__file__).parent
    for path in sorted(root.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class DiskStore:
    """A :class:`dpaudit.audit.stats.memo.Store` in ``directory`` (created when
    first written)."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        name = hashlib.sha256(f"{key}:{code_digest()}".encode()).hexdigest()
        return self.directory / f"{name}.npz"

    def load(self, key: str) -> dict[str, NDArray[Any]] | None:
        try:
            with np.load(self._path(key), allow_pickle=False) as data:
                return {name: np.asarray(data[name]) for name in data.files}
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            return None

    def save(self, key: str, arrays: Mapping[str, NDArray[Any]]) -> None:
        path = self._path(key)
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".", suffix=".npz.tmp", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as handle:
                    np.savez_compressed(handle, **dict(arrays))  # type: ignore[arg-type]
                os.replace(tmp, path)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)


@contextlib.contextmanager
def exact_cache() -> Iterator[None]:
    """The disk store of :func:`cache_dir` (none when it is off) installed for the
    block, the store before it restored after."""
    where = cache_dir()
    previous = memo.use_store(None if where is None else DiskStore(where))
    try:
        yield
    finally:
        memo.use_store(previous)
