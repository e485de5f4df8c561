"""dpaudit: audit differentially private synthetic-data generators.

dpaudit trains a generator many times with and without a target record (the
distinguishing game), attacks the released synthetic data with black-box
membership-inference attacks, turns the attack's errors into a Clopper-Pearson lower
bound on epsilon and compares it with the generator's privacy claim.

The Python API (:mod:`dpaudit.api`; its names are imported on first use, PEP 562, so
``import dpaudit`` imports neither torch nor pandas):

* ``dpaudit.audit(**settings)``: run an audit (the settings of ``dpaudit audit``),
  get its :class:`AuditResult`;
* :func:`check`: run a policy file; :func:`load`: read an audit directory;
  :func:`fit`: train a generator once; :func:`to_frame`: a table of results;
* :class:`BadInputError`: the one exception type of bad input, with the command
  line's message.

``dpaudit.audit`` is also the package of the audit's machinery (:mod:`dpaudit.audit`):
calling it calls :func:`dpaudit.api.audit` (type checkers see a module; they accept
``from dpaudit.api import audit``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dpaudit import audit as audit  # the package, callable: dpaudit.api.audit
from dpaudit.lazy import lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:
    from dpaudit.api import (
        SETTINGS,
        FitResult,
        check,
        fit,
        load,
        to_frame,
    )
    from dpaudit.audit.result.model import AuditResult
    from dpaudit.errors import BadInputError

_EXPORTS: dict[str, tuple[str, ...]] = {
    "dpaudit.api": ("SETTINGS", "FitResult", "check", "fit", "load", "to_frame"),
    "dpaudit.audit.result.model": ("AuditResult",),
    "dpaudit.errors": ("BadInputError",),
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

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
