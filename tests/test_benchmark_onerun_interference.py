"""benchmarks/onerun_interference.py: the rare-leak mechanism is exactly mu-GDP for
every canary (its privacy profile, in closed form, checked against a direct sum and
against the mu-GDP profile), a test that treats the canaries as independent raises
false alarms on it far above alpha, and the game's f-DP bound does not."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom, norm

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import onerun_interference as bench  # noqa: E402

from dpaudit.audit.stats.tradeoff import gdp_delta  # noqa: E402


@pytest.mark.parametrize(("shift", "half"), [(1.4, 1.0), (2.0, 0.5)])
def test_clip_profile_is_the_direct_sum(shift: float, half: float) -> None:
    """The closed form against ``sum (P - e^eps Q)_+`` over a fine discretisation
    of the clipped pair (interior cells and both atoms)."""
    lo, hi = shift / 2 - half, shift / 2 + half
    edges = np.linspace(lo, hi, 400_001)
    p = np.diff(norm.cdf(edges - shift))
    q = np.diff(norm.cdf(edges))
    p = np.concatenate([p, [norm.cdf(lo - shift), norm.sf(hi - shift)]])
    q = np.concatenate([q, [norm.cdf(lo), norm.sf(hi)]])
    for eps in (0.0, 0.3, 1.0, 1.7):
        direct = float(np.maximum(p - np.exp(eps) * q, 0.0).sum())
        closed = float(bench.clip_profile(np.array([eps]), shift, half)[0])
        assert closed == pytest.approx(direct, abs=1e-6)


def test_rare_leak_is_mu_gdp_and_largest_q_is_tight() -> None:
    """q * delta_clip <= delta_mu on a fine grid for the chosen q, and a q 10% above
    the largest breaks it somewhere (the bracket is not vacuous)."""
    q_max, top = bench.largest_q(1.4, 1.0, 1.0)
    assert 0.2 < q_max < 0.35 and 1.0 < top < 3.0
    grid = np.linspace(0.0, top, 3001)
    leak = bench.clip_profile(grid, 1.4, 1.0)
    bound = np.array([gdp_delta(float(e), mu=1.0) for e in grid])
    assert np.all(q_max * leak <= bound * (1 + 1e-9))
    assert np.any(1.1 * q_max * leak > bound)
    # Above the largest privacy loss the clipped pair has no delta left.
    assert bench.clip_profile(np.array([top + 1e-6, top + 1.0]), 1.4, 1.0).max() == 0.0


@pytest.mark.statistical
def test_independence_is_refuted_and_fdp_holds(
    benchmark_smoke: Callable[[str], Path],
) -> None:
    """The smoke run (200 audits a row). Failure probabilities: the independent
    test's false alarms on the rare leak are about q * 0.95 = 0.25 a audit; seeing at
    most 2 alpha (20 of 200) has probability below 1e-6. The f-DP bound's false alarm
    rate is at most alpha by its theorem; its one-sided 95% upper bound exceeding
    alpha + 0.02 has probability below 0.01 at a true rate of alpha."""
    run = json.loads(benchmark_smoke("onerun_interference.py").read_text())
    assert run["q"] <= run["q_max"]
    rows = {(r["mechanism"], r["test"]): r for r in run["rows"]}
    n = rows["rare leak", "independent"]["audits"]
    assert n == 200
    alpha = run["alpha"]
    assert binom.sf(2 * alpha * n, n, 0.9 * run["q"]) > 1 - 1e-6  # the claim above
    assert rows["rare leak", "independent"]["false_alarms"] > 2 * alpha * n
    for mechanism in ("ideal Gaussian", "rare leak"):
        assert rows[mechanism, "fdp"]["upper95"] <= alpha + 0.02
    # On independent canaries the independent test is valid.
    assert rows["ideal Gaussian", "independent"]["upper95"] <= alpha + 0.02
