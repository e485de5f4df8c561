"""The likelihood-ratio attack on a transcript: calibration against an exact mechanism.

The mechanism is PATE with one query: ``k = 2`` teachers, clean votes ``n1 = 1`` "real"
in ``D`` and ``n1 = 2`` in ``D' = D ∪ {target}`` (the target's teacher flips), the
noisy answer ``1[n1 + N1 > n0 + N0]`` with ``N0, N1 ~ Lap(beta)``: PATE-GAN's vote
(:func:`dpaudit.generators.pate_gan.teachers.noisy_labels`), whose transcript is one
bit. Its privacy profile is exact: for a two-outcome mechanism with ``p = P(1 | D)``,
``p' = P(1 | D')``, ``epsilon(delta) = max log((Q(S) - delta) / P(S))`` over the two
outcomes ``S`` and both orders ``(P, Q)``. Each simulated audit scores every round with
the attack's own statistic (:func:`log_probability`,
:func:`log_likelihood_ratio`) and bounds epsilon with the audit's own analysis
(threshold on validation rounds, Clopper-Pearson on test rounds).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from dpaudit.attacks.likelihood_ratio import log_likelihood_ratio
from dpaudit.audit.games.plan import GamePlan
from dpaudit.audit.stats import estimators as est
from dpaudit.audit.stats.thresholds import select_threshold
from dpaudit.generators.pate_gan.transcript import log_probability
from dpaudit.rng import Rngs

K, BETA, DELTA, ALPHA = 2, 1.0, 1e-5, 0.05


def answer_probabilities() -> tuple[float, float]:
    """``P(answer 1)`` in ``D`` (``n1 = 1``) and in ``D'`` (``n1 = 2``)."""
    one = torch.tensor([True])
    p = math.exp(
        float(
            log_probability(torch.tensor([1]), one, k=K, beta=BETA, single_draw=False)
        )
    )
    q = math.exp(
        float(
            log_probability(torch.tensor([2]), one, k=K, beta=BETA, single_draw=False)
        )
    )
    return p, q


def exact_epsilon(p: float, q: float, delta: float) -> float:
    """The exact epsilon(delta) of a two-outcome mechanism (both orders)."""
    best = 0.0
    for a, b in ((p, q), (q, p)):
        for pa, qb in ((a, b), (1.0 - a, 1.0 - b)):
            if qb - delta > 0 and pa > 0:
                best = max(best, math.log((qb - delta) / pa))
    return best


def simulated_audit(seed: int, *, rounds: int) -> float:
    """eps_emp of one audit of the one-query mechanism with the LR attack."""
    plan = GamePlan.create(rounds=rounds, seed=seed)
    rng = Rngs.from_seed(seed).numpy
    p, q = answer_probabilities()
    bits = plan.bits.astype(bool)
    answers = rng.random(len(bits)) < np.where(bits, q, p)
    labels = torch.from_numpy(answers)
    ll_with = log_probability(
        torch.full((len(bits),), 2), labels, k=K, beta=BETA, single_draw=False
    ).numpy()
    ll_without = log_probability(
        torch.full((len(bits),), 1), labels, k=K, beta=BETA, single_draw=False
    ).numpy()
    none = np.zeros(len(bits), dtype=bool)
    scores = log_likelihood_ratio(
        ll_with, ll_without, impossible_with=none, impossible_without=none
    )
    val, test = plan.indices("validation"), plan.indices("test")
    threshold, direction = select_threshold(
        scores[val], plan.bits[val], delta=DELTA, alpha=ALPHA
    )
    counts = est.AttackCounts.from_scores(
        scores[test], plan.bits[test], threshold=threshold, direction=direction
    )
    return float(est.eps_lower_bound(counts, delta=DELTA, alpha=ALPHA))


def test_the_exact_epsilon_of_the_one_query_vote() -> None:
    p, q = answer_probabilities()
    assert p == pytest.approx(0.5)
    assert q == pytest.approx(1.0 - 0.5 * math.exp(-2.0) * 2.0)
    # P(0 | D) / P(0 | D') = e^{2} / 2: epsilon(0) = 2 - log 2.
    assert exact_epsilon(p, q, 0.0) == pytest.approx(2.0 - math.log(2.0))


@pytest.mark.slow
@pytest.mark.statistical
def test_false_alarms_stay_within_alpha_over_200_audits() -> None:
    """200 audits (1,000 rounds per world each) of the exact mechanism: eps_emp
    exceeds its exact epsilon(delta) in at most 20 of them, and they detect it (the
    median eps_emp is above 30% of the truth: a wrong statistic gives AUC 0.5 and
    eps_emp 0, so the test can fail).

    The guarantee is a false-alarm probability of at most alpha = 0.05 per audit;
    if it holds, more than 20 false alarms in 200 audits have probability at most
    P(Binomial(200, 0.05) > 20) = 0.0012 (the failure probability of this test).
    Measured on 20,000 audits of this mechanism (seeds 1,000 to 20,999): 98 false
    alarms, a rate of 0.49% (95% interval 0.40% to 0.60%), largest eps_emp 1.53
    against the exact 1.307 (docs/soundness.md, "The transcript release"); seeds 0
    to 199 give 3. "No false alarm in 100 audits" is not what the guarantee promises
    for a mechanism this tight: at 0.49% per audit, 100 audits show one with
    probability 39%.
    """
    p, q = answer_probabilities()
    truth = exact_epsilon(p, q, DELTA)
    found = np.array([simulated_audit(seed, rounds=1000) for seed in range(200)])
    assert int((found > truth).sum()) <= 20
    assert np.median(found) > 0.3 * truth
