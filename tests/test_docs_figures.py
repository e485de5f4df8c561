"""The figures README.md and docs/ state are the figures the code computes today.

Each documented number that a formula of the package produces (attainable maxima,
rounds needed, the default audit's settings) is recomputed here and looked for, as
written, in the page that states it. A change that moves a figure fails this test
until the page says the new one. Figures that only a long run produces (a 1,000-round
audit's AUC) are named with the command that produced them; the test checks that the
command is named and that the settings it depends on are still the defaults.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dpaudit.attacks.registry import expand_attacks
from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.plan import GamePlan
from dpaudit.audit.stats.calibrated import eps_max_attainable as exact_max
from dpaudit.audit.stats.calibrated import rounds_needed
from dpaudit.audit.stats.estimators import bonferroni_alpha


def eps_max_attainable(n0: int, n1: int, *, delta: float, alpha: float = 0.05) -> float:
    """The audit's attainable maximum: the exact test's."""
    return exact_max(n0, n1, alpha=alpha, delta=delta)


ROOT = Path(__file__).resolve().parents[1]
DELTA = 1e-5


def _text(name: str) -> str:
    return " ".join((ROOT / name).read_text(encoding="utf-8").split())


def _test_rounds(rounds: int) -> int:
    """Test rounds per world of ``rounds`` rounds per world at the default split."""
    plan = GamePlan.create(rounds=rounds, split=AuditConfig().split, seed=0)
    return int(((plan.splits == 2) & (plan.bits == 1)).sum())


def _default_attacks() -> list[str]:
    config = AuditConfig()
    assert config.attack == "default"
    return expand_attacks(
        config.attack,
        worst_case=True,
        continuous=config.dataset == "worst-case-continuous",
    )


def _attainable(rounds: int, attacks: int) -> float:
    n = _test_rounds(rounds)
    return eps_max_attainable(n, n, delta=DELTA, alpha=bonferroni_alpha(0.05, attacks))


def test_attainable_maxima_in_the_docs() -> None:
    readme, soundness = _text("README.md"), _text("docs/soundness.md")
    attacks = len(_default_attacks())
    assert attacks == 3
    assert _test_rounds(1000) == 400
    # One attack at 95%: the study's figure; the default set of three, Bonferroni.
    assert f"{_attainable(1000, 1):.2f}" == "4.69"
    assert f"{_attainable(1000, attacks):.2f}" == "4.44"
    assert "4.69" in readme and "4.44" in readme
    assert "4.44" in soundness
    assert f"{eps_max_attainable(1000, 1000, delta=DELTA):.2f}" == "5.59"
    assert "5.59 for 1,000 + 1,000" in soundness


def test_rounds_20_example() -> None:
    soundness = _text("docs/soundness.md")
    assert _test_rounds(20) == 8
    assert f"{_attainable(20, 3):.2f}" == "0.96"
    needed = rounds_needed(
        eps_claimed=0.998, delta=DELTA, alpha=bonferroni_alpha(0.05, 3)
    )
    assert needed == 21
    assert re.search(
        r"`dpaudit audit --rounds 20` \(8 \+ 8 test rounds, three attacks", soundness
    )
    assert "attainable maximum of 0.96" in soundness
    assert f"about {needed} rounds per world" in soundness


def test_default_audit_as_documented() -> None:
    """The README's and docs' account of the default audit names today's defaults
    and the commands that measured it."""
    readme, soundness = _text("README.md"), _text("docs/soundness.md")
    config = AuditConfig()
    assert (config.generator, config.dataset, config.rounds) == (
        "pategan",
        "worst-case-continuous",
        1000,
    )
    assert sorted(_default_attacks()) == ["distance", "fingerprint", "moments"]
    for page in (readme, soundness):
        assert "worst-case-continuous" in page
    assert "python benchmarks/default_audit_release.py" in soundness
    assert "dpaudit audit --variant original" in readme


def test_ci_power_table() -> None:
    """docs/ci.md's table of attainable maxima (200 and 400 test rounds per world, one
    attack and the default three, the policy's alpha split over 1, 2 and 4 audits) and
    its 20-round example."""
    ci = _text("docs/ci.md")
    rows = {
        (200, 0.05): ("4.02", "3.76"),
        (200, 0.025): ("3.85", "3.64"),
        (200, 0.0125): ("3.72", "3.53"),
        (400, 0.05): ("4.69", "4.44"),
    }
    for (n, alpha), (one, three) in rows.items():
        assert f"{eps_max_attainable(n, n, delta=DELTA, alpha=alpha):.2f}" == one
        assert f"{eps_max_attainable(n, n, delta=DELTA, alpha=alpha / 3):.2f}" == three
        assert re.search(
            rf"\| {n}\b[^|]*\| {alpha:g} [^|]*\| {one} \| {three} \|", ci
        ), (n, alpha)
    assert f"{_attainable(20, 1):.3f}" == "1.191"
    assert "attainable maximum of 1.191 with one attack" in ci
    assert "and 0.96 with the default set of three attacks" in ci


@pytest.mark.parametrize("page", ["README.md", "docs/soundness.md", "docs/ci.md"])
def test_no_stale_default_audit_wording(page: str) -> None:
    text = _text(page)
    assert "releases one constant row" not in text
    assert "one extra fit after the audit" not in text
