"""The verdict rule with power, rounds needed, saturation, tightness, the headline."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from dpaudit.audit.games.claims import summarise_claims
from dpaudit.audit.games.estimate import planned_attainable_maximum
from dpaudit.audit.games.plan import GamePlan
from dpaudit.audit.games.two_world.analysis import headline_attack
from dpaudit.audit.games.verdict import (
    Verdict,
    decide,
    saturated,
    tightness,
    verdict_reason,
)
from dpaudit.audit.result.model import AttackResult
from dpaudit.audit.stats.estimators import (
    AttackCounts,
    eps_max_attainable,
    rounds_needed,
)


def test_decide_rule() -> None:
    assert (
        decide(eps_emp=1.2, eps_claimed=1.0, eps_max_attainable=0.9)
        is Verdict.VIOLATION
    )
    assert (
        decide(eps_emp=0.3, eps_claimed=1.0, eps_max_attainable=4.7)
        is Verdict.CONSISTENT
    )
    # An audit that could not have refuted the claim is not CONSISTENT.
    assert (
        decide(eps_emp=0.0, eps_claimed=0.998, eps_max_attainable=0.535)
        is Verdict.INCONCLUSIVE
    )
    assert (
        decide(eps_emp=1.0, eps_claimed=1.0, eps_max_attainable=1.0)
        is Verdict.INCONCLUSIVE
    )
    assert (
        decide(eps_emp=None, eps_claimed=1.0, eps_max_attainable=4.7)
        is Verdict.INCONCLUSIVE
    )
    assert (
        decide(eps_emp=math.nan, eps_claimed=1.0, eps_max_attainable=4.7)
        is Verdict.INCONCLUSIVE
    )
    with pytest.raises(TypeError):
        decide(0.3, 1.0, 4.7)  # type: ignore[misc]


@pytest.mark.parametrize("method", ["clopper_pearson", "jeffreys"])
@pytest.mark.parametrize(
    ("eps", "alpha", "split"),
    [
        (0.998, 0.05, (0.4, 0.2, 0.4)),
        (1.0, 0.025, (0.4, 0.2, 0.4)),
        (3.0, 0.05, (0.5, 0.25, 0.25)),
        (0.1, 0.05, (0.4, 0.2, 0.4)),
    ],
)
def test_rounds_needed_is_the_smallest_that_exceeds_the_claim(
    eps: float, alpha: float, split: tuple[float, float, float], method: str
) -> None:
    delta = 1e-5

    def attainable(rounds: int) -> float:
        n0, n1 = GamePlan.create(rounds=rounds, split=split, seed=0).world_sizes("test")
        return eps_max_attainable(n0, n1, delta=delta, alpha=alpha, method=method)  # type: ignore[arg-type]

    needed = rounds_needed(
        eps_claimed=eps, delta=delta, alpha=alpha, split=split, method=method
    )  # type: ignore[arg-type]
    assert needed is not None
    assert attainable(needed) > eps
    assert all(attainable(r) <= eps for r in range(5, needed))


def test_rounds_needed_without_a_feasible_size() -> None:
    assert rounds_needed(eps_claimed=15.0, delta=1e-5, max_rounds=100_000) is None
    assert rounds_needed(eps_claimed=0.998, delta=1e-5) == 30


def test_saturation_and_tightness() -> None:
    assert saturated(eps_emp=4.68, eps_max_attainable=4.68)
    assert not saturated(eps_emp=4.0, eps_max_attainable=4.68)
    assert not saturated(eps_emp=0.0, eps_max_attainable=0.0)
    assert tightness(eps_emp=0.5, eps_reference=2.0, eps_claimed=1.0) == 0.25
    assert tightness(eps_emp=0.5, eps_reference=None, eps_claimed=1.0) == 0.5
    assert tightness(eps_emp=0.5, eps_reference=None, eps_claimed=math.inf) is None


def test_verdict_reason_says_why() -> None:
    text = verdict_reason(
        Verdict.INCONCLUSIVE,
        eps_emp=0.0,
        eps_claimed=0.998,
        eps_max_attainable=0.535,
        rounds_needed=30,
    )
    assert "0.535" in text and "30 rounds per world" in text
    text = verdict_reason(
        Verdict.VIOLATION,
        eps_emp=4.68,
        eps_claimed=1.0,
        eps_max_attainable=4.68,
        approximate=True,
        is_saturated=True,
    )
    assert "approximate" in text and "more rounds" in text
    assert verdict_reason(
        Verdict.CONSISTENT, eps_emp=0.1, eps_claimed=1.0, eps_max_attainable=4.7
    ).startswith("CONSISTENT")


def test_verdict_reason_names_a_constant_release() -> None:
    text = verdict_reason(
        Verdict.CONSISTENT,
        eps_emp=0.0,
        eps_claimed=1.0,
        eps_max_attainable=4.4,
        constant_release=True,
    )
    assert text.startswith("CONSISTENT") and "same features" in text
    text = verdict_reason(
        Verdict.INCONCLUSIVE,
        eps_emp=0.0,
        eps_claimed=1.0,
        eps_max_attainable=0.5,
        rounds_needed=30,
        constant_release=True,
    )
    # More rounds cannot help when nothing differs: no "rounds would be needed".
    assert "same features" in text and "rounds per world would be needed" not in text
    assert "same features" not in verdict_reason(
        Verdict.CONSISTENT, eps_emp=0.0, eps_claimed=1.0, eps_max_attainable=4.4
    )


def test_constant_release_is_detected_from_the_store(tmp_path: Path) -> None:
    """A generator that releases the same table whatever its data (``ConstantRelease``
    below, through the plug-in path) gives identical features in every round: the
    reason says so; the copy plug-in's do not."""
    from dpaudit.audit import AuditConfig, run_audit
    from dpaudit.audit.result.model import AuditResult
    from dpaudit.reports.junit import case_from_result, render_junit
    from dpaudit.reports.markdown import render_markdown

    config = AuditConfig(
        generator="dpaudit.generators.toy_plugins:ConstantRelease", rounds=40, seed=1
    )
    constant = run_audit(config, out_dir=tmp_path / "constant", progress=False)
    assert "same features" in (constant.verdict_reason or "")
    # The attainable maximum forecast before the run (what `dpaudit check`'s Power
    # paragraph states) is the one the analysis records: the Bonferroni split over
    # the default set's three attacks included.
    assert constant.estimator.n_attacks == 3 and constant.estimator.several
    assert constant.estimator.overall_alpha == pytest.approx(config.alpha)
    assert constant.estimator.alpha == pytest.approx(config.alpha / 3)
    assert constant.power is not None
    assert constant.power.eps_max_attainable == pytest.approx(
        planned_attainable_maximum(config)
    )
    # TPR at low FPR, with the test rounds' resolution, for every attack.
    n0 = constant.estimator.test_non_members
    assert n0 is not None and 1.0 / n0 > 0.01  # 40 rounds: neither is resolvable
    for attack in constant.attacks.values():
        assert attack.fpr_resolution == pytest.approx(1.0 / n0)
        assert [(r.fpr, r.tpr, r.resolvable) for r in attack.tpr_at_low_fpr] == [
            (0.001, None, False),
            (0.01, None, False),
        ]
    assert constant.power is not None and constant.power.constant_release
    # The flag survives result.json and every report states it.
    again = AuditResult.from_json(constant.to_json())
    assert again.power is not None and again.power.constant_release
    assert "changed nothing in this release" in render_markdown([constant])
    assert "constant_release: true" in render_junit([case_from_result(constant)])
    copy = run_audit(
        AuditConfig(
            generator="dpaudit.generators.toy_plugins:CopyData", rounds=40, seed=1
        ),
        out_dir=tmp_path / "copy",
        progress=False,
    )
    assert "same features" not in (copy.verdict_reason or "")
    assert copy.power is not None and not copy.power.constant_release
    assert "changed nothing in this release" not in render_markdown([copy])


def _attack(eps: float, *, constant: bool, val_auc: float, auc: float) -> AttackResult:
    return AttackResult(
        name="a",
        eps_emp=eps,
        constant_scores=constant,
        validation_auc=val_auc,
        auc=auc,
        counts=AttackCounts(tp=0, fp=0, tn=0, fn=0),
    )


def test_headline_never_favours_a_constant_guess() -> None:
    # All bounds at 0: the test AUC (chance) must not decide, nor may a constant guess.
    attacks = {
        "groundhog-naive": _attack(0.0, constant=True, val_auc=0.5, auc=0.62),
        "querybased": _attack(0.0, constant=False, val_auc=0.55, auc=0.48),
        "distance": _attack(0.0, constant=False, val_auc=0.52, auc=0.7),
    }
    assert headline_attack(attacks) == "querybased"
    # A larger bound always wins.
    attacks["distance"] = dataclasses.replace(attacks["distance"], eps_emp=0.2)
    assert headline_attack(attacks) == "distance"
    # Only constant guesses: the first one, deterministically.
    const = {
        "a": _attack(0.0, constant=True, val_auc=0.5, auc=0.9),
        "b": _attack(0.0, constant=True, val_auc=0.5, auc=0.1),
    }
    assert headline_attack(const) == "a"


def test_claims_carry_a_generators_extra_keys_and_iterations() -> None:
    """``claim.extra`` over the rounds (numbers summarised, other values distinct and
    capped) and ``iterations_mean`` from the claims' iterations, a plug-in's extra
    included; ``None`` when no round reports iterations (never a made-up 0)."""
    rows = {
        r: {
            "epsilon": 1.0 + r,
            "delta": 1e-5,
            "accountant": "plug-in",
            "iterations": None,
            "extra": {
                "iterations": 10 * (r + 1),
                "noise": 0.5 * (r + 1),
                "optimizer": "adam" if r < 2 else "sgd",
                "label": f"run-{r}",
            },
        }
        for r in range(12)
    }
    claim = summarise_claims(rows)
    assert claim.epsilon == 12.0 and claim.iterations == 120
    assert claim.iterations_mean == pytest.approx(65.0)
    assert claim.extra["noise"] == {"mean": 3.25, "min": 0.5, "max": 6.0, "rounds": 12}
    assert claim.extra["optimizer"]["values"] == ("adam", "sgd")
    assert claim.extra["label"]["distinct"] == 12
    assert len(claim.extra["label"]["values"]) == 10
    # A claim without extra (a built-in generator, or stored before extra existed).
    plain = summarise_claims({0: {"epsilon": 1.0, "delta": 1e-5, "accountant": "x"}})
    assert plain.iterations_mean is None and dict(plain.extra) == {}
