"""The audit's entry points, kept importable from their historical home.

The audit is split by concept: :mod:`~dpaudit.audit.config` (:class:`AuditConfig`),
:mod:`~dpaudit.audit.setup` (:func:`build_setup`), :mod:`~dpaudit.audit.selection`
(``--target auto``), :mod:`~dpaudit.audit.rounds` (training a batch of rounds),
:mod:`~dpaudit.audit.run` (:func:`run_audit`: batches, backends, store, resume) and
:mod:`~dpaudit.audit.analysis` (bounds, claim, verdict).
"""

from __future__ import annotations

from dpaudit.audit.analysis import (
    analyse,
    analyse_attack,
    summarise_claims,
)
from dpaudit.audit.config import AuditConfig
from dpaudit.audit.names import Backend, Randomness
from dpaudit.audit.result import SCHEMA_VERSION, AuditResult, Verdict
from dpaudit.audit.rounds import compact_claim, train_batch
from dpaudit.audit.run import run_audit
from dpaudit.audit.setup import AuditSetup, build_setup

__all__ = [
    "SCHEMA_VERSION",
    "AuditConfig",
    "AuditResult",
    "AuditSetup",
    "Backend",
    "Randomness",
    "Verdict",
    "analyse",
    "analyse_attack",
    "build_setup",
    "compact_claim",
    "run_audit",
    "summarise_claims",
    "train_batch",
]
