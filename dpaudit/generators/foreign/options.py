"""How foreign workers run: the interpreter, the time limit per call, the memory limit.

Standard library only (the audit's configuration and the command line read it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

DEFAULT_FIT_TIMEOUT = 3600.0
"""Seconds one call of a plug-in (import, ``fit`` or ``sample``) may take by default."""


def physical_memory_mib() -> int | None:
    """This machine's physical memory in MiB (None where it cannot be read)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2**20)
    except (ValueError, OSError, AttributeError):
        return None


@dataclass(frozen=True, kw_only=True, slots=True)
class WorkerOptions:
    """The settings of the worker processes that run a foreign generator.

    Attributes:
        python: the interpreter that runs the worker (None: this one). It needs only
            NumPy, pandas and the generator's own library.
        fit_timeout: seconds one call (the plug-in's import, ``fit`` or ``sample``)
            may take; the worker is killed after it (None: no limit).
        max_memory: MiB of resident memory one worker may use; it is killed above it
            (None: half of this machine's physical memory).
    """

    python: str | None = None
    fit_timeout: float | None = DEFAULT_FIT_TIMEOUT
    max_memory: int | None = None

    def memory_limit_mib(self) -> int | None:
        """The memory limit in force (the default resolved)."""
        if self.max_memory is not None:
            return self.max_memory
        total = physical_memory_mib()
        return None if total is None else max(1, total // 2)
