"""Where an audit lives: the SQLite store, the output folder's rules, staging of a
forced run, training traces, and the exact test's disk cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpaudit.lazy import lazy_exports

if TYPE_CHECKING:
    from dpaudit.audit.storage.exactcache import DiskStore
    from dpaudit.audit.storage.store import (
        ResultStore,
        StoreLock,
    )
    from dpaudit.audit.storage.traces import (
        only_trace_files,
        write_trace,
    )

_EXPORTS: dict[str, tuple[str, ...]] = {
    "dpaudit.audit.storage.exactcache": ("DiskStore",),
    "dpaudit.audit.storage.store": (
        "ResultStore",
        "StoreLock",
    ),
    "dpaudit.audit.storage.traces": (
        "only_trace_files",
        "write_trace",
    ),
}

__all__ = [
    "DiskStore",
    "ResultStore",
    "StoreLock",
    "only_trace_files",
    "write_trace",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
