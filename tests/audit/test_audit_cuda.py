"""One audit on CUDA agrees with the same audit on the CPU within sampling error.

The audit: the reference PATE-GAN on the worst case, the ``distance`` attack (a
threshold attack: a round's score is a function of that round's release alone), the
``independent`` game (every round's draws from its own stream, so rounds are
independent), the same seed on both devices.

The statistical test (:func:`compare_audits`). Let ``A`` be the AUC of the rounds'
scores over ALL rounds (``n1`` with the target, ``n0`` without). Changing one round
moves ``A`` by at most ``1/n1`` (a member round) or ``1/n0``, so changing one round's
randomness moves the difference ``D = A_cpu - A_cuda`` of the two audits (which share
their rounds' seeds) by at most twice that. If both devices run the same randomised
algorithm, ``E[D] = 0`` and McDiarmid's inequality gives
``P(|D| >= t) <= 2 exp(-t^2 / (2 (1/n1 + 1/n0)))``; the test fails at
``t = sqrt(2 (1/n1 + 1/n0) ln(2 / 1e-6))``: failure probability at most 1e-6 when the
devices agree (dependence between the two audits only helps). The eps_emp of each
audit (at ``alpha = 1e-4``) is a lower confidence bound on the reference's epsilon:
both must be at most the claimed epsilon, each failing with probability at most 1e-4
for a correct (eps, delta)-DP implementation. Total failure probability: at most
2.01e-4.

The comparison runs on ``cuda`` vs ``cpu`` where CUDA is present (marked ``gpu``) and,
so that its logic runs everywhere, as ``cpu`` with two batch sizes (equal by the batch
contract) with fewer rounds (marked ``slow``).
"""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from dpaudit.audit import AuditConfig, run_audit
from dpaudit.audit.storage.store import ResultStore

FAILURE = 1e-6
ALPHA = 1e-4


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """P(score of a member round > score of a non-member round), ties count 1/2."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (len(pos) * len(neg)))


def agreement_bound(n1: int, n0: int, failure: float = FAILURE) -> float:
    """The McDiarmid threshold ``t`` of the module docstring."""
    return math.sqrt(2.0 * (1.0 / n1 + 1.0 / n0) * math.log(2.0 / failure))


def all_rounds_auc(out: Path) -> tuple[float, int, int]:
    """The distance attack's AUC over every round of the audit stored in ``out``."""
    with sqlite3.connect(out / "audit.sqlite") as con:
        rows = np.array(
            con.execute("SELECT round, bit FROM rounds ORDER BY round").fetchall(),
            dtype=np.int64,
        )
    rounds, bits = rows[:, 0], rows[:, 1]
    with ResultStore(out) as store:
        scores = store.features("distance", rounds)[:, 0]
    return auc(scores, bits), int((bits == 1).sum()), int((bits == 0).sum())


def compare_audits(
    tmp: Path,
    *,
    device_a: str,
    device_b: str,
    rounds: int,
    batch_a: int = 128,
    batch_b: int = 128,
) -> tuple[float, float, float]:
    """Runs the audit twice and asserts the module docstring's test.

    Returns:
        ``(auc_a, auc_b, bound)``.
    """
    results, aucs = [], []
    for name, device, batch in (("a", device_a, batch_a), ("b", device_b, batch_b)):
        config = AuditConfig(
            generator="pategan",
            attack="distance",
            rounds=rounds,
            randomness="independent",
            device=device,
            jobs=1,
            batch_size=batch,
            alpha=ALPHA,
            seed=0,
        )
        results.append(run_audit(config, out_dir=tmp / name))
        aucs.append(all_rounds_auc(tmp / name))
    (auc_a, n1, n0), (auc_b, m1, m0) = aucs
    assert (n1, n0) == (m1, m0) and n1 > 0 and n0 > 0
    bound = agreement_bound(n1, n0)
    assert abs(auc_a - auc_b) < bound, (auc_a, auc_b, bound)
    for result in results:
        assert result.eps_emp is not None
        assert result.eps_emp <= result.eps_claimed, result.eps_emp
    return auc_a, auc_b, bound


def test_the_bound_and_the_auc() -> None:
    assert auc(np.array([0.1, 0.9, 0.5, 0.5]), np.array([0, 1, 1, 0])) == 0.875
    # 1,000 rounds per world: |D| < 0.241 at failure probability 1e-6.
    assert agreement_bound(1000, 1000) == pytest.approx(0.2409, abs=1e-4)


@pytest.mark.slow
def test_the_comparison_runs_on_cpu(tmp_path: Path) -> None:
    """CPU against CPU with another batch size: the same rounds (batch contract), so
    the AUCs are equal, and the comparison's logic runs where CUDA is absent."""
    auc_a, auc_b, _ = compare_audits(
        tmp_path, device_a="cpu", device_b="cpu", rounds=40, batch_a=128, batch_b=16
    )
    assert auc_a == auc_b


@pytest.mark.gpu
@pytest.mark.slow
def test_cuda_and_cpu_audits_agree(tmp_path: Path) -> None:
    _, _, bound = compare_audits(tmp_path, device_a="cpu", device_b="cuda", rounds=1000)
    assert bound < 0.25  # enough rounds for the comparison to mean something
