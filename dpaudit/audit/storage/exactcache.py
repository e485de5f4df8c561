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
:func:`code_digest`: a SHA-256 of the ``dpaudit/audit/stats`` modules as loaded (their
functions' and classes' bytecode and constants, their module-level data; not the
files on disk) and of the NumPy and SciPy versions (the binomial tables come from
SciPy's incomplete beta). A change to the code that computes a result, or to the
libraries under it, files it anew. A file holds levels alone, and nothing in it is
trusted: a file that is missing, unreadable or malformed is recomputed, and every
level read back is checked by the loaded code before it is used
(:func:`dpaudit.audit.stats.levels.is_largest_level`: in range, its test's size at
most alpha, the next level's over it), recomputed when a check fails. So a forged or
stale file costs a recomputation and never changes a figure (docs/soundness.md,
"Keeping the calibrations between audits").
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import os
import pkgutil
import sys
import tempfile
import types
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
    """SHA-256 of the statistics modules as loaded (:func:`_module_parts`) and of the
    NumPy and SciPy versions; computed from the objects in memory, not from files."""
    import scipy

    import dpaudit.audit.stats as package

    digest = hashlib.sha256(
        f"numpy {np.__version__} scipy {scipy.__version__}".encode()
    )
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        name = f"{package.__name__}.{info.name}"
        module = sys.modules.get(name) or importlib.import_module(name)
        digest.update(name.encode() + b"\0")
        for part in _module_parts(module):
            digest.update(part + b"\0")
    return digest.hexdigest()


def _module_parts(module: types.ModuleType) -> Iterator[bytes]:
    """What a module defines, as loaded: per name in its namespace (sorted), its
    functions' and classes' code (bytecode, constants, names, defaults, nested code;
    not file names or line numbers) and its plain data (numbers, strings, arrays,
    containers of them). Imported modules and objects defined elsewhere are left to
    their own module."""
    for name in sorted(vars(module)):
        value = vars(module)[name]
        if isinstance(value, types.ModuleType):
            continue
        yield name.encode() + b"=" + _describe(value, module.__name__)


def _describe(value: Any, owner: str, depth: int = 0) -> bytes:
    """A stable description of ``value`` (the same in every process)."""
    if depth > 8:
        return b"..."
    inner = getattr(value, "__wrapped__", None)  # functools.cache and the like
    if inner is not None and callable(value):
        return b"wrapped:" + _describe(inner, owner, depth + 1)
    if isinstance(value, types.FunctionType):
        if value.__module__ != owner:
            return f"function {value.__module__}.{value.__qualname__}".encode()
        return (
            b"function:"
            + _code(value.__code__)
            + _describe((value.__defaults__, value.__kwdefaults__), owner, depth + 1)
        )
    if isinstance(value, type):
        if value.__module__ != owner:
            return f"class {value.__module__}.{value.__qualname__}".encode()
        body = [
            k.encode() + b"=" + _describe(v, owner, depth + 1)
            for k, v in sorted(vars(value).items())
            if not k.startswith("__") or k in {"__init__", "__call__"}
        ]
        return b"class:" + b";".join(body)
    if isinstance(value, staticmethod | classmethod):
        return b"method:" + _describe(value.__func__, owner, depth + 1)
    if isinstance(value, property):
        return b"property:" + _describe(value.fget, owner, depth + 1)
    return _data(value)


def _data(value: Any) -> bytes:
    """Plain data by value; anything else by its type's name alone."""
    if value is None or isinstance(value, bool | int | float | complex | str):
        return repr(value).encode()
    if isinstance(value, bytes):
        return b"bytes:" + value
    if isinstance(value, np.ndarray):
        return f"array {value.dtype.str} {value.shape}:".encode() + value.tobytes()
    if isinstance(value, np.generic):
        return _data(value.item())
    if isinstance(value, list | tuple):
        return b"[" + b",".join(_data(v) for v in value) + b"]"
    if isinstance(value, frozenset | set):
        return b"{" + b",".join(sorted(_data(v) for v in value)) + b"}"
    if isinstance(value, dict):
        items = sorted((_data(k), _data(v)) for k, v in value.items())
        return b"{" + b",".join(k + b":" + v for k, v in items) + b"}"
    if isinstance(value, types.CodeType):
        return _code(value)
    kind = type(value)
    return f"<{kind.__module__}.{kind.__qualname__}>".encode()


def _code(code: types.CodeType) -> bytes:
    """A code object's bytecode, constants (nested code too) and names."""
    return b"|".join(
        (
            code.co_code,
            _data(code.co_consts),
            repr((code.co_names, code.co_varnames, code.co_freevars)).encode(),
            repr((code.co_argcount, code.co_kwonlyargcount, code.co_flags)).encode(),
        )
    )


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
