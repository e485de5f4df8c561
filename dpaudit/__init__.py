"""dpaudit: audit differentially private synthetic-data generators.

dpaudit trains a generator many times with and without a target record (the
distinguishing game), attacks the released synthetic data with black-box
membership-inference attacks, turns the attack's errors into a Clopper-Pearson lower
bound on epsilon and compares it with the generator's privacy claim.

The Python API (:mod:`dpaudit.api`), its names imported on first use (PEP 562), so
that ``import dpaudit`` imports neither torch nor pandas:

* ``dpaudit.audit(**settings)``: run an audit (the settings of ``dpaudit audit``)
  and get its ``AuditResult``;
* ``check``: run a policy file; ``load``: read an audit directory; ``fit``: train
  a generator once; ``to_frame``: a table of results;
* ``BadInputError``: the one exception type of bad input, with the command line's
  message.

``dpaudit.audit`` is also the package of the audit's machinery (:mod:`dpaudit.audit`),
made callable: calling it calls :func:`dpaudit.api.audit` (type checkers see a
module; they accept ``from dpaudit.api import audit``).
"""

from __future__ import annotations

import importlib
from typing import Any

from dpaudit.lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS: dict[str, tuple[str, ...]] = {
    "dpaudit.api": (
        "SETTINGS",
        "AuditResult",
        "FitResult",
        "check",
        "fit",
        "load",
        "to_frame",
    ),
    "dpaudit.errors": ("BadInputError",),
}

_lazy, _names = lazy_exports(__name__, _EXPORTS)


def __getattr__(name: str) -> Any:
    if name == "audit":
        # The package of the audit's machinery, callable (dpaudit.api.audit).
        return importlib.import_module(f"{__name__}.audit")
    return _lazy(name)


def __dir__() -> list[str]:
    return sorted({*_names(), "audit"})


__all__ = [
    "SETTINGS",
    "AuditResult",
    "BadInputError",
    "FitResult",
    "__version__",
    "audit",
    "check",
    "fit",
    "load",
    "to_frame",
]
