"""Sequential looks (``--sequential``): the looks' plan, the level they spend, the
nested game plan, the stop at the first VIOLATION, resuming, and the calibration of
the whole sequential procedure on an exactly epsilon-DP mechanism."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.estimate import per_attack_alpha
from dpaudit.audit.games.looks import (
    LOOK_FRACTIONS,
    LOOK_WEIGHTS,
    audit_looks,
    plan_looks,
)
from dpaudit.audit.games.plan import SPLIT_CODES, GamePlan, split_sizes
from dpaudit.audit.games.scores import judge_scores
from dpaudit.audit.result.model import AuditResult, Verdict
from dpaudit.audit.run import run_audit
from dpaudit.errors import InvalidParameterError
from dpaudit.reports.wording import rounds_text

SPLIT = (0.4, 0.2, 0.4)


@pytest.mark.parametrize("rounds", [5, 6, 7, 9, 12, 20, 33, 50, 99, 100, 1000, 4321])
@pytest.mark.parametrize("alpha", [0.05, 0.01, 0.2])
def test_levels_sum_to_alpha_and_blocks_are_games(rounds: int, alpha: float) -> None:
    """The looks spend exactly ``alpha`` (the union bound's budget), increase to the
    planned size, and every block has rounds in each split."""
    looks = plan_looks(rounds, split=SPLIT, alpha=alpha)
    assert math.isclose(math.fsum(looks.alphas), alpha, rel_tol=0, abs_tol=1e-15)
    assert all(a > 0 for a in looks.alphas)
    assert looks.per_world[-1] == rounds
    assert list(looks.per_world) == sorted(set(looks.per_world))
    assert all(min(split_sizes(b, SPLIT)) >= 1 for b in looks.blocks)


def test_default_looks_and_weights() -> None:
    looks = plan_looks(1000, split=SPLIT, alpha=0.05)
    assert looks.per_world == tuple(round(f * 1000) for f in LOOK_FRACTIONS)
    assert looks.alphas == pytest.approx([0.05 * w for w in LOOK_WEIGHTS])
    assert max(LOOK_WEIGHTS) == LOOK_WEIGHTS[-1]  # most power kept at full size
    single = audit_looks(AuditConfig(rounds=300, alpha=0.05))
    assert single.per_world == (300,) and single.alphas == (0.05,)


def test_bad_looks_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="fractions"):
        plan_looks(100, split=SPLIT, alpha=0.05, fractions=(0.5, 1.0), weights=(1.0,))
    with pytest.raises(InvalidParameterError, match="empty split"):
        plan_looks(2, split=SPLIT, alpha=0.05)
    with pytest.raises(InvalidParameterError, match="looks"):
        GamePlan.create(rounds=100, split=SPLIT, seed=0, looks=(50, 40, 100))


@pytest.mark.parametrize("rounds", [20, 1000])
def test_nested_plan_blocks_are_balanced_split_games(rounds: int) -> None:
    looks = plan_looks(rounds, split=SPLIT, alpha=0.05).per_world
    plan = GamePlan.create(rounds=rounds, split=SPLIT, seed=3, looks=looks)
    assert plan.n_rounds == 2 * rounds
    for k, per_world in enumerate(looks):
        sub = plan.at_look(k)
        assert sub.n_rounds == 2 * per_world
        before = 2 * looks[k - 1] if k else 0
        block_bits = plan.bits[before : 2 * per_world]
        block_splits = plan.splits[before : 2 * per_world]
        m = per_world - before // 2
        for world in (0, 1):
            counts = [
                int(np.sum((block_bits == world) & (block_splits == code)))
                for code in SPLIT_CODES.values()
            ]
            assert tuple(counts) == split_sizes(m, SPLIT)
        # The look's own splits are disjoint and cover its rounds.
        idx = [set(sub.indices(s).tolist()) for s in SPLIT_CODES]
        assert sum(map(len, idx)) == sub.n_rounds and not (idx[0] & idx[2])


def test_plan_analysed_once_is_unchanged() -> None:
    """The default plan is the one of earlier versions (pinned digest)."""
    import hashlib

    plan = GamePlan.create(rounds=1000, seed=0)
    digest = hashlib.sha256(plan.bits.tobytes() + plan.splits.tobytes()).hexdigest()
    assert digest[:12] == "bb18aa9edcd7"
    assert plan.looks == ()
    assert "sequential" not in AuditConfig().to_json()
    assert AuditConfig(sequential=True).identity() != AuditConfig().identity()


# --------------------------------------------------------------- calibration


def sequential_false_alarm(
    rng: np.random.Generator,
    *,
    epsilon: float,
    rounds: int,
    alpha: float,
    seed: int,
    spend: bool = True,
) -> bool:
    """One simulated sequential audit of randomized response (exactly
    ``epsilon``-DP on the membership bit, the optimal attack scoring a round by its
    released bit) claiming its true ``epsilon``: whether any look calls a VIOLATION.
    Each look is decided by the audit's own code (the nested plan, its look's game
    and :func:`~dpaudit.audit.games.scores.judge_scores` at the look's level); ``spend=False`` takes every
    look at the full ``alpha`` (the unsound procedure, for comparison)."""
    looks = plan_looks(rounds, split=SPLIT, alpha=alpha)
    plan = GamePlan.create(rounds=rounds, split=SPLIT, seed=seed, looks=looks.per_world)
    keep = rng.random(plan.n_rounds) < math.exp(epsilon) / (1 + math.exp(epsilon))
    released = np.where(keep, plan.bits, 1 - plan.bits).astype(np.float64)
    for k, level in enumerate(looks.alphas):
        game = plan.at_look(k)
        val, test = game.indices("validation"), game.indices("test")
        eps = judge_scores(
            released[val],
            game.bits[val],
            released[test],
            game.bits[test],
            delta=0.0,
            alpha=per_attack_alpha(level if spend else alpha, 1),
            method="clopper_pearson",
        ).eps_emp
        if eps > epsilon:
            return True
    return False


AUDITS = 200


@pytest.mark.slow  # 3 to 9 s on 2 cores, by the load
@pytest.mark.statistical
def test_sequential_looks_are_calibrated(seed: int) -> None:
    """Soundness of the whole sequential procedure (docs/soundness.md, "Sequential
    looks"): each of ``AUDITS`` = 200 simulated sequential audits (100 rounds per
    world, looks at 10, 20, 50, 100) of an exactly 2-DP randomized response claiming
    2 raises a false VIOLATION with probability at most alpha = 0.2 (a large alpha,
    so that the levels matter), so the count X is at most Bin(200, 0.2) in law; the
    test fails when X > 62, which a sound procedure does with probability
    P(Bin(200, 0.2) > 62) < 1e-4.

    Measured (seed 0, 400 audits): 5.3% false alarms with the level spent, 12.8%
    when every look is taken at the full 0.2 (Clopper-Pearson's conservatism keeps
    both below 0.2: the union bound is what makes the spent procedure sound whatever
    the mechanism, not this margin)."""
    rng = np.random.default_rng(seed)
    alarms = sum(
        sequential_false_alarm(
            rng, epsilon=2.0, rounds=100, alpha=0.2, seed=seed * AUDITS + i
        )
        for i in range(AUDITS)
    )
    limit = 62
    assert stats.binom.sf(limit, AUDITS, 0.2) < 1e-4
    assert alarms <= limit, alarms


# ----------------------------------------------------------- the audit itself


def _leaky(**kw: Any) -> AuditConfig:
    """An audit of the ``copy`` toy (no privacy, claims epsilon 1): its 24 + 24 test
    rounds at look 2 of 300 rounds per world already prove a VIOLATION."""
    return AuditConfig(
        generator="copy",
        dataset="worst-case",
        attack="querybased",
        rounds=300,
        sequential=True,
        jobs=1,
        batch_size=16,
        **kw,
    )


def _drop_rounds_from(out: Path, first: int) -> None:
    """The store as a run killed during a look left it: rounds from ``first`` on
    missing, no result.json."""
    (out / "result.json").unlink()
    with sqlite3.connect(out / "audit.sqlite") as conn:
        for table in ("rounds", "features", "digests"):
            conn.execute(f"DELETE FROM {table} WHERE round >= ?", (first,))


def _same(a: AuditResult, b: AuditResult) -> None:
    skip = {"timing"}
    da = {k: v for k, v in a.to_json().items() if k not in skip}
    db = {k: v for k, v in b.to_json().items() if k not in skip}
    assert json.dumps(da, sort_keys=True) == json.dumps(db, sort_keys=True)


@pytest.mark.slow  # about 10 s: three runs of a 120-round audit
def test_stops_at_the_first_violation_and_resumes_to_the_same_result(
    tmp_path: Path,
) -> None:
    first = run_audit(_leaky(), out_dir=tmp_path / "a")
    seq = first.sequential
    assert seq is not None and first.verdict == Verdict.VIOLATION
    assert seq.stopped_early and seq.planned_per_world == 300
    assert [look.per_world for look in seq.looks] == [30, 60, 150, 300]
    decided = seq.looks[seq.decided - 1]
    assert first.rounds.per_world == decided.per_world < 300
    assert first.rounds.total == 2 * decided.per_world
    assert all(look.verdict is None for look in seq.looks[seq.decided :])
    assert all(look.eps_max_attainable is not None for look in seq.looks)
    assert first.estimator.overall_alpha == pytest.approx(decided.alpha)
    with sqlite3.connect(tmp_path / "a" / "audit.sqlite") as conn:
        (stored,) = conn.execute("SELECT COUNT(*) FROM rounds").fetchone()
    assert stored == first.rounds.total  # nothing trained past the deciding look
    doc = json.loads((tmp_path / "a" / "result.json").read_text())
    assert AuditResult.from_json(doc).sequential == seq  # round trip

    # A finished audit that stopped early, analysed again: the same, trains nothing.
    again = run_audit(_leaky(), out_dir=tmp_path / "a", resume=True)
    _same(first, again)
    assert again.timing.rounds_stored_before == stored

    # Killed inside the deciding look's block: the same command continues it.
    _drop_rounds_from(tmp_path / "a", 2 * decided.per_world - 10)
    continued = run_audit(_leaky(), out_dir=tmp_path / "a")
    _same(first, continued)
    assert continued.timing.resumed


@pytest.mark.slow
def test_a_sequential_audit_without_violation_runs_every_round(tmp_path: Path) -> None:
    result = run_audit(
        AuditConfig(
            generator="randomized-response",
            dataset="worst-case",
            attack="querybased",
            epsilon=8.0,
            delta=0.0,
            rounds=20,
            sequential=True,
            jobs=1,
        ),
        out_dir=tmp_path / "b",
    )
    seq = result.sequential
    assert seq is not None and not seq.stopped_early
    assert seq.decided == len(seq.looks) and result.rounds.per_world == 20
    assert result.verdict != Verdict.VIOLATION
    assert "sequential: all 20 rounds per world" in rounds_text(result)
