"""dpaudit's audit: the distinguishing game and the one-run game, their analysis,
the typed result and the store.

The face of the package (its names are imported on first use, PEP 562): outside
``dpaudit.audit`` (``ci``, ``commands``, ``reports``, benchmarks) code imports these and
the faces of the sub-packages (:mod:`dpaudit.audit.config`, :mod:`dpaudit.audit.stats`,
:mod:`dpaudit.audit.result`, :mod:`dpaudit.audit.storage`, :mod:`dpaudit.audit.games`),
never a module inside them. The layout (docs/design.md, "The audit package"):

- ``config/``: the key table (every setting declared once), :class:`AuditConfig`, the
  stable names, serialisation, the reproduce line;
- ``stats/``: pure statistics (estimators, sizing, Bayesian, trade-off curves, privacy
  profiles, ceilings, thresholds, the one-run bound, the AUC);
- ``result/``: the typed result and every record type it holds;
- ``storage/``: the SQLite store, the output folder, staging, training traces;
- ``games/``: the game registry, the resolved audit, the releases, and each game
  (``two_world/``, ``one_run/``);
- :mod:`dpaudit.audit.run`: :func:`run_audit`, the prologue every game shares.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from dpaudit.lazy import lazy_exports

if TYPE_CHECKING:
    from dpaudit.audit.config.model import (
        AuditConfig,
    )
    from dpaudit.audit.config.names import (
        RESULT_FILE,
        Verdict,
    )
    from dpaudit.audit.dryrun import (
        dry_run,
    )
    from dpaudit.audit.result.model import (
        SCHEMA_VERSION,
        AuditResult,
    )
    from dpaudit.audit.run import (
        run_audit,
        shutdown_workers,
    )
    from dpaudit.audit.storage.outdir import (
        RESUME_SETTINGS,
        resume_config,
    )

_EXPORTS: dict[str, tuple[str, ...]] = {
    "dpaudit.audit.dryrun": ("dry_run",),
    "dpaudit.audit.run": (
        "run_audit",
        "shutdown_workers",
    ),
    "dpaudit.audit.storage.outdir": (
        "RESUME_SETTINGS",
        "resume_config",
    ),
    "dpaudit.audit.config.model": ("AuditConfig",),
    "dpaudit.audit.config.names": (
        "RESULT_FILE",
        "Verdict",
    ),
    "dpaudit.audit.result.model": (
        "SCHEMA_VERSION",
        "AuditResult",
    ),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


PYTHON_API = "dpaudit.api"
"""The module of the Python API, whose ``audit`` a call of this package runs. It is
the top layer (docs/design.md, "Layers"): named here and imported only when called,
as the generator registry names its factories."""


class _CallableModule(types.ModuleType):
    """This package, callable: ``dpaudit.audit(**settings)`` is
    :func:`dpaudit.api.audit` (the package keeps every name it exports)."""

    def __call__(self, *, in_process: bool = False, **settings: Any) -> Any:
        api = importlib.import_module(PYTHON_API)
        return api.audit(in_process=in_process, **settings)


sys.modules[__name__].__class__ = _CallableModule

__all__ = [
    "RESULT_FILE",
    "RESUME_SETTINGS",
    "SCHEMA_VERSION",
    "AuditConfig",
    "AuditResult",
    "Verdict",
    "dry_run",
    "resume_config",
    "run_audit",
    "shutdown_workers",
]
