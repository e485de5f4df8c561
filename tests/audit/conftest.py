"""Shared by the one-run calibration tests (test_onerun_fdp, test_onerun_counts,
test_onerun_profile): simulated releases of whole canary sets, and the game's own
verdict (:func:`apply_rules` then :func:`decide_bound`) counted over them."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from dpaudit.audit.games.one_run.rules import apply_rules, decide_bound

Releases = Callable[..., tuple[np.ndarray, np.ndarray]]
FalseAlarms = Callable[..., int]


def _releases(
    mechanism: str,
    gen: np.random.Generator,
    *,
    audits: int,
    canaries: int,
    mu: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """``audits`` releases of ``canaries`` canaries at once: (bits, scores). The
    Gaussian score ``N(mu S_i, 1)``, or randomized response at epsilon 1 of the
    bit (``mechanism`` "rr")."""
    bits = gen.integers(0, 2, size=(audits, canaries))
    if mechanism == "gaussian":
        return bits, gen.normal(size=bits.shape) + mu * bits
    q = math.exp(1.0) / (1.0 + math.exp(1.0))
    shown = np.where(gen.random(bits.shape) < q, bits, 1 - bits)
    return bits, shown.astype(np.float64)


def _false_alarms(
    bits: np.ndarray,
    scores: np.ndarray,
    ties: np.ndarray,
    *,
    guesses: int,
    delta: float,
    alpha: float,
    bound: str,
    claim_epsilon: float,
    claim_mu: float | None = None,
    claim_curve: Any = None,
    check: Callable[[Any], None] | None = None,
) -> int:
    """The releases the game calls a VIOLATION (rule ``both`` with no threshold,
    ``guesses`` per side): the claim's curve rejected where the bound tests one,
    else eps_emp above the claimed epsilon. ``check`` sees every decision."""
    alarms = 0
    for i in range(bits.shape[0]):
        outcomes = apply_rules(
            scores[i],
            bits[i],
            rule="both",
            guesses_in=guesses,
            guesses_out=guesses,
            threshold=None,
            tie_break=ties[i],
            delta=delta,
            alpha=alpha,
            bound=bound,
            claim_epsilon=claim_epsilon,
            claim_mu=claim_mu,
            claim_curve=claim_curve,
        )
        decided = decide_bound(
            outcomes,
            bound=bound,
            claim_epsilon=claim_epsilon,
            claim_mu=claim_mu,
            claim_curve=claim_curve,
        )
        if check is not None:
            check(decided)
        if decided.refuted is None:
            alarms += decided.eps_emp > claim_epsilon
        else:
            alarms += decided.refuted
    return alarms


@pytest.fixture
def onerun_releases() -> Releases:
    """:func:`_releases`."""
    return _releases


@pytest.fixture
def onerun_false_alarms() -> FalseAlarms:
    """:func:`_false_alarms`."""
    return _false_alarms
