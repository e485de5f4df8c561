"""Results of the exact test's calibration kept between processes, through a store
the caller installs (:func:`use_store`); this module does no I/O itself.

The calibrated levels (:func:`dpaudit.audit.stats.calibrated.claim_level`) and the
families' levels (:func:`dpaudit.audit.stats.families.family`) are pure functions of their
inputs: the test sizes, the level, delta, the method and the claim. Within a process
they are cached (``functools.lru_cache``); :func:`use_store` installs a :class:`Store`
that also keeps them across processes (:func:`dpaudit.audit.run.run_audit` installs
the disk store of :mod:`dpaudit.audit.storage.exactcache` while it runs). A stored result is found by
:func:`key`: a SHA-256 of its function's name and its inputs, written exactly
(floats in hexadecimal), together with the store's own digest of the code that
computes it; a store returns what :meth:`Store.save` was given for that key or
``None``. Nothing read back is trusted: a caller recomputes on ``None`` or on arrays
of the wrong shape, and uses a kept level only once it has checked it is the level
its search would find (:func:`dpaudit.audit.stats.levels.is_largest_level`), the
rejection sets computed by that check. So a result read back is the result computing
it would give, whatever the store holds: the same verdict and figures, bit for bit
(tests/audit/test_exact_memo.py).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

__all__ = ["Store", "key", "load", "save", "use_store"]


class Store(Protocol):
    """Where results are kept: arrays by key (a hex string)."""

    def load(self, key: str) -> dict[str, NDArray[Any]] | None:
        """The arrays saved under ``key``; ``None`` if none (or unreadable)."""
        ...

    def save(self, key: str, arrays: Mapping[str, NDArray[Any]]) -> None:
        """Keeps ``arrays`` under ``key`` (a failure to keep them is silent)."""
        ...


_store: Store | None = None


def use_store(store: Store | None) -> Store | None:
    """Installs ``store`` (``None``: none) and returns the one it replaces."""
    global _store
    previous, _store = _store, store
    return previous


def _plain(value: Any) -> Any:
    """``value`` as JSON-able data with every float exact (hexadecimal)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        v = float(value)
        return {"float": v.hex() if math.isfinite(v) else repr(v)}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    fields = getattr(value, "__dataclass_fields__", None)
    if fields is not None:
        return {
            "type": type(value).__name__,
            **{f: _plain(getattr(value, f)) for f in sorted(fields)},
        }
    raise TypeError(f"no exact key for {type(value).__name__}")


def key(name: str, *parts: Any) -> str:
    """The key of ``name``'s result on ``parts`` (scalars, tuples, dataclasses)."""
    text = json.dumps([name, _plain(list(parts))], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def load(name: str, *parts: Any) -> dict[str, NDArray[Any]] | None:
    """The arrays the installed store keeps for ``name`` on ``parts``, or ``None``."""
    store = _store
    return None if store is None else store.load(key(name, *parts))


def save(name: str, parts: tuple[Any, ...], arrays: Mapping[str, NDArray[Any]]) -> None:
    """Keeps ``arrays`` as ``name``'s result on ``parts`` in the installed store."""
    store = _store
    if store is not None:
        store.save(key(name, *parts), arrays)
