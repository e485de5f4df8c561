"""The split follows the attacks (no training rounds when none fits) and an attack
that cannot separate the worlds on the validation rounds is dropped before the test,
its share of alpha going to the others (docs/soundness.md, "No round trains an attack
that trains nothing" and "Dropping an attack that cannot separate")."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.config.reproduce import audit_command
from dpaudit.audit.config.split import NO_FIT_SPLIT
from dpaudit.audit.games.estimate import per_attack_alpha, planned_attainable_maximum
from dpaudit.audit.games.looks import plan_looks
from dpaudit.audit.games.plan import GamePlan
from dpaudit.audit.games.scores import judge_scores
from dpaudit.audit.games.two_world.analysis import dropped_attacks, split_warnings
from dpaudit.cli import main
from dpaudit.errors import InvalidParameterError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_default_split_follows_the_attacks() -> None:
    assert AuditConfig().split == (0.4, 0.2, 0.4)
    transcript = AuditConfig(dataset="worst-case", release="transcript")
    assert transcript.split == NO_FIT_SPLIT == (0.0, 0.2, 0.8)
    assert AuditConfig(attack="distance").split == NO_FIT_SPLIT
    assert AuditConfig(attack="distance", dataset="worst-case-continuous").split == (
        0.0,
        0.2,
        0.8,
    )
    given = AuditConfig(attack="distance", split=(0.4, 0.2, 0.4))
    assert given.split == (0.4, 0.2, 0.4)
    # The resolved split is recorded: a stored config reads back the same.
    assert AuditConfig.from_json(transcript.to_json()) == transcript
    assert transcript.to_json()["split"] == [0.0, 0.2, 0.8]


def test_no_training_rounds_for_attacks_that_fit_is_refused(capsys) -> None:
    with pytest.raises(InvalidParameterError, match="no training rounds"):
        AuditConfig(split=(0.0, 0.5, 0.5))
    code = main(["audit", "--split", "0,0.5,0.5", "--rounds", "10"])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "learn from them" in err


def test_a_plan_without_training_rounds() -> None:
    plan = GamePlan.create(rounds=50, split=NO_FIT_SPLIT, seed=3)
    assert len(plan.indices("train")) == 0
    assert plan.world_sizes("validation") == (10, 10)
    assert plan.world_sizes("test") == (40, 40)
    looks = plan_looks(1000, split=NO_FIT_SPLIT, alpha=0.05)
    nested = GamePlan.create(
        rounds=1000, split=NO_FIT_SPLIT, seed=3, looks=looks.per_world
    )
    assert len(nested.indices("train")) == 0
    with pytest.raises(InvalidParameterError, match="validation and test"):
        GamePlan.create(rounds=50, split=(0.5, 0.0, 0.5), seed=3)


def test_the_power_figures_follow_the_effective_split() -> None:
    """The transcript's default tests 800 rounds per world of 1,000, not 400: its
    planned attainable maximum is that of 800 + 800 test rounds."""
    base = dict(dataset="worst-case", release="transcript", rounds=1000)
    new = planned_attainable_maximum(AuditConfig(**base))
    old = planned_attainable_maximum(AuditConfig(**base, split=(0.4, 0.2, 0.4)))
    assert new > old


def test_the_reproduce_command_writes_only_a_split_the_user_chose() -> None:
    assert "--split" not in audit_command(AuditConfig(release="transcript"))
    assert "--split" not in audit_command(AuditConfig())
    assert "--split 0.5,0.2,0.3" in audit_command(AuditConfig(split=(0.5, 0.2, 0.3)))


def test_a_split_that_trains_nothing_is_explained() -> None:
    (warning,) = split_warnings((0.4, 0.2, 0.4), ["likelihood-ratio"])
    assert warning.code == "unused_training"
    assert "learns nothing" in warning.message and "0,0.2,0.8" in warning.message
    assert split_warnings((0.4, 0.2, 0.4), ["likelihood-ratio", "moments"]) == ()


def _scores(s_val: np.ndarray) -> tuple[np.ndarray, ...]:
    y = np.arange(s_val.size) % 2
    return s_val, y, np.zeros(4), np.array([0, 1, 0, 1])


def test_constant_validation_scores_are_dropped() -> None:
    scores = {
        "const": _scores(np.full(6, 0.5)),
        "varies": _scores(np.arange(6.0)),
    }
    assert list(dropped_attacks(scores)) == ["const"]
    assert "constant scores (0.5)" in dropped_attacks(scores)["const"]
    # Every attack constant: none is dropped (none could reject anyway).
    assert dropped_attacks({"a": _scores(np.zeros(6)), "b": _scores(np.ones(6))}) == {}


@pytest.mark.statistical
def test_dropping_keeps_the_level_on_an_exact_mechanism() -> None:
    """1,000 simulated games of an exactly 1-DP randomized response (each round's
    score is the response bit: 1 with probability e / (1 + e) with the target and
    1 / (1 + e) without), audited by it and by a constant attack, which the
    validation rounds drop: the kept attack's bound is then at the full alpha 0.05.
    A false alarm is eps_emp above the true epsilon 1; the game is sound if each
    audit raises one with probability at most 0.05, so more than 73 in 1,000 has
    probability P(Binomial(1000, 0.05) > 73) = 6.5e-4."""
    rng = np.random.default_rng(7)
    n_val, n_test, eps, games = 100, 200, 1.0, 1000
    p1 = math.e / (1 + math.e)
    alarms = 0
    for _ in range(games):
        y_val = np.repeat([0, 1], n_val)
        y_test = np.repeat([0, 1], n_test)
        s_val = (rng.random(y_val.size) < np.where(y_val, p1, 1 - p1)).astype(float)
        s_test = (rng.random(y_test.size) < np.where(y_test, p1, 1 - p1)).astype(float)
        const = np.zeros_like(s_val)
        dropped = dropped_attacks(
            {
                "rr": (s_val, y_val, s_test, y_test),
                "const": (const, y_val, np.zeros_like(s_test), y_test),
            }
        )
        assert list(dropped) == ["const"]
        alpha = per_attack_alpha(0.05, 2 - len(dropped))
        judged = judge_scores(
            s_val,
            y_val,
            s_test,
            y_test,
            delta=0.0,
            alpha=alpha,
            method="clopper_pearson",
        )
        alarms += int(judged.eps_emp > eps)
    assert stats.binom.sf(73, games, 0.05) < 1e-3
    assert alarms <= 73


def test_an_audit_drops_an_attack_that_cannot_separate(
    tmp_path: Path, monkeypatch
) -> None:
    """The per-column Laplace histogram on the continuous worst case releases values
    drawn uniformly within bins: no release repeats, so ``fingerprint`` gives one
    score on every validation round and is dropped; the two others share alpha."""
    from dpaudit.audit.run import run_audit

    monkeypatch.syspath_prepend(str(EXAMPLES))
    cfg = AuditConfig(
        generator="laplace_marginals:LaplaceMarginals",
        rounds=40,
        jobs=1,
        generator_options={"noise_factor": 0.25},
    )
    result = run_audit(cfg, out_dir=tmp_path / "a")
    assert result.dropped_attacks is not None
    assert list(result.dropped_attacks) == ["fingerprint"]
    assert "constant scores" in result.dropped_attacks["fingerprint"]
    assert list(result.attacks) == ["moments", "distance"]
    assert result.estimator.n_attacks == 2
    assert result.estimator.alpha == pytest.approx(0.025)
    doc = result.to_json()
    assert doc["dropped_attacks"] == dict(result.dropped_attacks)
    assert type(result).from_json(doc) == replace(result, source=None)


def test_a_transcript_audit_spends_no_round_on_training(tmp_path: Path) -> None:
    from dpaudit.audit.run import run_audit

    cfg = AuditConfig(
        dataset="worst-case",
        rounds=10,
        device="cpu",
        release="transcript",
        teachers="canary",
        generator_options={"max_iterations": 2, "device": "cpu"},
    )
    result = run_audit(cfg, out_dir=tmp_path / "t")
    assert result.rounds.train == 0
    assert (result.rounds.validation, result.rounds.test) == (4, 16)
    assert result.warnings == ()
    old = run_audit(
        AuditConfig.from_mapping({**cfg.to_json(), "split": [0.4, 0.2, 0.4]}),
        out_dir=tmp_path / "old",
    )
    assert old.rounds.train == 8
    assert [w.code for w in old.warnings] == ["unused_training"]
