"""Shared by the one-run tests (test_onerun_fdp, test_onerun_counts,
test_onerun_profile): simulated releases of whole canary sets, the game's own
verdict (:func:`apply_rules` then :func:`decide_bound`) counted over them, and the
linear program that checks the f-DP bound's greedy."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from scipy import optimize

from dpaudit.audit.games.one_run.rules import apply_rules, decide_bound

Releases = Callable[..., tuple[np.ndarray, np.ndarray]]
FalseAlarms = Callable[..., int]
LpTail = Callable[..., float]


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


def _lp_tail(m: int, r: int, v: int, lines: list[tuple[float, float]]) -> float:
    """The largest ``P[W >= v]`` over laws of ``W`` on ``0 .. r`` that satisfy every
    constraint ``C_u`` of the minimum of the ``lines`` (each (eps, delta)), by linear
    programming (the curve is piecewise linear, so the program is exact): the check
    of the greedy."""
    w = np.arange(r + 1)
    rows, rhs = [], []
    for u in range(1, r + 1):
        y = np.where(w >= u, w, 0).astype(float)
        x = np.where(w >= u - 1, r - w, 0).astype(float)
        for eps, delta in lines:
            # Y_u <= m delta + e^eps X_u, Y_u <= m - e^-eps (m (1 - delta) - X_u)
            rows.append(y - math.exp(eps) * x)
            rhs.append(m * delta)
            rows.append(y - math.exp(-eps) * x)
            rhs.append(m - math.exp(-eps) * m * (1 - delta))
    res = optimize.linprog(
        -np.where(w >= v, 1.0, 0.0),
        A_ub=np.array(rows),
        b_ub=np.array(rhs),
        A_eq=np.ones((1, r + 1)),
        b_eq=[1.0],
        bounds=(0, None),
        method="highs",
    )
    assert res.status == 0
    return float(-res.fun)


@pytest.fixture
def onerun_lp_tail() -> LpTail:
    """:func:`_lp_tail`."""
    return _lp_tail


@pytest.fixture
def onerun_releases() -> Releases:
    """:func:`_releases`."""
    return _releases


@pytest.fixture
def onerun_false_alarms() -> FalseAlarms:
    """:func:`_false_alarms`."""
    return _false_alarms
