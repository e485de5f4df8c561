"""The one-run game: its bound against direct computation, its calibration on exact
per-canary mechanisms, its guesses, its canaries, its result and its command."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.config.names import GUESS_RULES, GuessRule
from dpaudit.audit.games.one_run.plan import OneRunPlan, guess
from dpaudit.audit.games.one_run.rules import (
    apply_rules,
    best_outcome,
    threshold_sizes,
)
from dpaudit.audit.games.one_run.scoring import score_canaries
from dpaudit.audit.result.model import AuditResult
from dpaudit.audit.stats.onerun_bound import (
    eps_lower_bound,
    eps_max_attainable,
    p_value,
)
from dpaudit.errors import InvalidParameterError
from dpaudit.reports.schema import schema_errors
from dpaudit.rng import Rngs
from dpaudit.worst_case.canaries import CANARY_COLUMN, canary_design

# ------------------------------------------------------------------ the bound


def _tail(r: int, q: Fraction, v: int) -> Fraction:
    """P[Binomial(r, q) >= v], exactly (1 for v <= 0)."""
    if v <= 0:
        return Fraction(1)
    return sum(
        (math.comb(r, k) * q**k * (1 - q) ** (r - k) for k in range(v, r + 1)),
        Fraction(0),
    )


def _direct_p_value(m: int, r: int, v: int, eps: float, delta: float) -> float:
    """The theorem's right-hand side, term by term over i = 1 .. m as the paper
    states it, in exact rational arithmetic (q rounded once to a fraction)."""
    q = Fraction(1.0 / (1.0 + math.exp(-eps)))
    f_v = _tail(r, q, v)
    slope = max((_tail(r, q, v - i) - f_v) / i for i in range(1, m + 1))
    return float(min(f_v + 2 * m * Fraction(delta) * slope, Fraction(1)))


@pytest.mark.parametrize(
    ("m", "r", "v", "eps", "delta"),
    [
        (40, 20, 20, 1.0, 0.0),
        (40, 20, 15, 0.5, 0.0),
        (60, 30, 25, 1.5, 1e-3),
        (60, 30, 30, 2.0, 1e-5),
        (50, 10, 3, 0.2, 1e-2),
        (30, 30, 0, 1.0, 1e-2),
    ],
)
def test_p_value_equals_the_theorem_computed_directly(
    m: int, r: int, v: int, eps: float, delta: float
) -> None:
    """Against an exact sum over the binomial and the paper's maximum over all
    ``i <= m``: the pure-DP case is the Binomial(r, e^eps / (1 + e^eps)) tail."""
    got = p_value(canaries=m, guesses=r, correct=v, epsilon=eps, delta=delta)
    assert got == pytest.approx(_direct_p_value(m, r, v, eps, delta), rel=1e-9)
    if delta == 0 and v > 0:
        q = math.exp(eps) / (1 + math.exp(eps))
        assert got == pytest.approx(stats.binom.sf(v - 1, r, q), rel=1e-9)


def test_eps_lower_bound_sits_on_the_rejection_boundary() -> None:
    """Every epsilon below eps_lo is rejected at alpha, and a little above is not."""
    args = {"canaries": 1000, "guesses": 200, "delta": 1e-5}
    eps = eps_lower_bound(correct=180, alpha=0.05, **args)
    assert eps > 0
    for below in np.linspace(0, eps, 25):
        assert p_value(correct=180, epsilon=float(below), **args) <= 0.05
    assert p_value(correct=180, epsilon=eps + 1e-3, **args) > 0.05


def test_eps_lower_bound_is_monotone_and_capped_by_the_maximum() -> None:
    args = {"canaries": 500, "guesses": 100, "delta": 1e-5, "alpha": 0.05}
    values = [eps_lower_bound(correct=v, **args) for v in range(50, 101, 5)]
    assert values == sorted(values)
    assert values[-1] == eps_max_attainable(
        canaries=500, guesses=100, delta=1e-5, alpha=0.05
    )
    assert eps_lower_bound(correct=50, **args) == 0.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"canaries": 10, "guesses": 11, "correct": 1}, "correct <= guesses"),
        ({"canaries": 10, "guesses": 5, "correct": 6}, "correct <= guesses"),
        ({"canaries": 10.0, "guesses": 5, "correct": 1}, "`canaries` must be"),
    ],
)
def test_bad_counts_are_refused(kwargs: dict, match: str) -> None:
    with pytest.raises(InvalidParameterError, match=match):
        p_value(epsilon=1.0, delta=0.0, **kwargs)


# ------------------------------------------------------------- calibration


def _false_alarms(
    *,
    seed: int,
    audits: int,
    m: int,
    k: int,
    eps: float,
    delta: float,
    rule: GuessRule = "count",
) -> int:
    """Audits of an exactly (eps, delta)-DP per-canary mechanism whose eps_emp
    exceeds eps. The mechanism: each canary's inclusion bit is passed through
    eps-randomized response independently; with probability delta (per canary) it
    is released as it is. It is (eps, delta)-DP in each bit, and the bits are
    independent, so the whole release is (eps, delta)-DP in each canary. The
    score is the released bit (threshold 1: the release says "in"); ties are
    broken by a uniform key independent of the bits; the count rule makes k "in"
    and k "out" guesses; eps_emp comes from the audit's own rules
    (:func:`apply_rules`, :func:`best_outcome`) at alpha 0.05."""
    rng = Rngs.from_seed(seed).numpy
    q = math.exp(eps) / (1 + math.exp(eps))
    alarms = 0
    for _ in range(audits):
        bits = rng.integers(0, 2, size=m)
        keep = rng.random(m) < q
        shown = np.where(keep, bits, 1 - bits)
        leak = rng.random(m) < delta
        shown = np.where(leak, bits, shown)
        outcomes = apply_rules(
            shown.astype(np.float64),
            bits,
            rule=rule,
            guesses_in=k,
            guesses_out=k,
            threshold=1.0,
            tie_break=rng.random(m),
            delta=delta,
            alpha=0.05,
        )
        alarms += best_outcome(outcomes).eps_emp > eps
    return alarms


@pytest.mark.statistical
@pytest.mark.parametrize("rule", GUESS_RULES)
@pytest.mark.parametrize(("eps", "delta"), [(1.0, 0.0), (2.0, 1e-3)])
def test_exact_per_canary_mechanisms_are_calibrated(
    seed: int, eps: float, delta: float, rule: GuessRule
) -> None:
    """False alarms (eps_emp > the true epsilon) of 300 audits at alpha 0.05, per
    guess rule.

    If the bound's coverage holds, the count is dominated by Binomial(300, 0.05);
    the test fails when it exceeds that distribution's 0.999 quantile, so it fails
    with probability at most 0.001 for a correct bound (per parameter set, rule and
    seed). Randomized response is the mechanism the count rule's bound is tight for,
    so a bound that overshot would show here.
    """
    audits = 300
    alarms = _false_alarms(
        seed=seed, audits=audits, m=400, k=60, eps=eps, delta=delta, rule=rule
    )
    limit = int(stats.binom.ppf(0.999, audits, 0.05))
    assert alarms <= limit, (alarms, limit)


@pytest.mark.statistical
@pytest.mark.parametrize("rule", ["threshold", "both"])
def test_a_subsample_release_is_seen_by_the_threshold_rule(
    seed: int, rule: GuessRule
) -> None:
    """A release that shows each included canary with probability 0.6 and never an
    excluded one (the bit-level picture of a generator that copies a random
    subsample of its rows): the threshold rule's guesses are all right, and eps_emp
    exceeds 2 from one release of 1,000 canaries. It fails only when fewer than 192
    canaries are shown (the shown count is Binomial(1000, 0.3): probability below
    1e-12). The count rule's 100 "out" guesses fall among unshown canaries, about a
    quarter of them included: its bound stays far lower."""
    rng = Rngs.from_seed(seed).numpy
    bits = rng.integers(0, 2, size=1000)
    shown = (bits == 1) & (rng.random(1000) < 0.6)
    outcomes = apply_rules(
        shown.astype(np.float64),
        bits,
        rule=rule,
        guesses_in=100,
        guesses_out=100,
        threshold=1.0,
        tie_break=rng.random(1000),
        delta=1e-5,
        alpha=0.05,
    )
    best = best_outcome(outcomes)
    assert best.rule == "threshold" and best.made.correct == best.guesses >= 192
    assert best.eps_emp >= 2.0
    count = apply_rules(
        shown.astype(np.float64),
        bits,
        rule="count",
        guesses_in=100,
        guesses_out=100,
        threshold=1.0,
        tie_break=rng.random(1000),
        delta=1e-5,
        alpha=0.05,
    )[0]
    assert count.eps_emp < best.eps_emp


def test_threshold_sizes_and_levels() -> None:
    """The grid is fixed by the canaries alone; the threshold rule is tested at its
    share of alpha over the grid's size, and ``both`` halves alpha."""
    assert threshold_sizes(1) == (1,)
    assert threshold_sizes(13) == (1, 2, 3, 4, 6, 8, 12)
    sizes = threshold_sizes(1000)
    assert sizes[-1] == 768 and len(sizes) == 19
    scores = np.array([1.0, 1.0, 1.0, 0.0, 0.0, np.nan])
    bits = np.array([1, 1, 0, 0, 1, 0])
    out = apply_rules(
        scores,
        bits,
        rule="both",
        guesses_in=1,
        guesses_out=1,
        threshold=1.0,
        tie_break=np.linspace(0, 1, 6),
        delta=0.0,
        alpha=0.1,
    )
    assert [o.rule for o in out] == ["count", "threshold"]
    assert out[0].alpha == pytest.approx(0.05)
    assert out[1].alpha == pytest.approx(0.05 / len(threshold_sizes(6)))
    # Three passed (NaN never does), rounded down to the grid's 3; ties by the key.
    assert out[1].passed == 3 and out[1].guesses_in == 3 and out[1].made.correct == 2
    with pytest.raises(InvalidParameterError, match="threshold"):
        apply_rules(
            scores,
            bits,
            rule="threshold",
            guesses_in=1,
            guesses_out=1,
            threshold=None,
            tie_break=np.zeros(6),
            delta=0.0,
            alpha=0.1,
        )


@pytest.mark.statistical
def test_a_leaky_mechanism_is_detected(seed: int) -> None:
    """The same mechanism at epsilon 4 audited against a claim of 1: eps_emp exceeds
    1 in nearly every audit (fails with probability below 1e-6: the correct count
    is Binomial(120, 0.98) and needs only about 100 right)."""
    rng = Rngs.from_seed(seed).numpy
    q = math.exp(4) / (1 + math.exp(4))
    bits = rng.integers(0, 2, size=400)
    shown = np.where(rng.random(400) < q, bits, 1 - bits)
    made = guess(
        shown.astype(float),
        bits,
        guesses_in=60,
        guesses_out=60,
        tie_break=rng.random(400),
    )
    assert (
        eps_lower_bound(
            canaries=400, guesses=120, correct=made.correct, delta=1e-5, alpha=0.05
        )
        > 1.0
    )


# ------------------------------------------------------------------ guesses


def test_guesses_depend_on_the_scores_alone() -> None:
    """The bits are read only to count: other bits give the same guesses."""
    rng = Rngs.from_seed(3).numpy
    scores = rng.integers(0, 3, size=50).astype(float)
    key = rng.random(50)
    a = guess(
        scores, rng.integers(0, 2, 50), guesses_in=7, guesses_out=9, tie_break=key
    )
    b = guess(
        scores, rng.integers(0, 2, 50), guesses_in=7, guesses_out=9, tie_break=key
    )
    assert np.array_equal(a.guess, b.guess)
    assert (a.guess == 1).sum() == 7 and (a.guess == -1).sum() == 9


def test_plan_draws_half_the_canaries_and_fixes_its_counts() -> None:
    plan = OneRunPlan.create(fits=3, canaries=1000, guesses=None, seed=0)
    assert plan.bits.shape == (3, 1000)
    assert abs(plan.bits.mean() - 0.5) < 0.05  # 6 standard deviations
    assert plan.guesses_in == plan.guesses_out == 300
    again = OneRunPlan.create(fits=3, canaries=1000, guesses=None, seed=0)
    assert np.array_equal(plan.bits, again.bits)
    with pytest.raises(InvalidParameterError, match="guesses"):
        OneRunPlan.create(fits=1, canaries=10, guesses=6, seed=0)
    lopsided = OneRunPlan.create(fits=1, canaries=10, guesses=7, guesses_out=0, seed=0)
    assert (lopsided.guesses_in, lopsided.guesses_out) == (7, 0)


# ------------------------------------------------------------------ canaries


def test_point_canaries_are_distinct_far_and_in_the_domain() -> None:
    design = canary_design("worst-case-continuous", canaries=300)
    points = design.canaries.to_numpy()
    assert len(np.unique(points, axis=0)) == 300
    assert points.min() >= 0.5 and points.max() <= 1.0
    design.domain.validate(design.canaries, name="canaries")
    included = np.zeros(300, dtype=bool)
    included[[3, 7]] = True
    scores = score_canaries(design.training_table(included), design)
    assert set(np.flatnonzero(scores == 0)) == {3, 7}


def test_category_canaries_each_carry_a_value_the_domain_lists() -> None:
    design = canary_design("worst-case", canaries=12, base_rows=6)
    values = list(design.canaries[CANARY_COLUMN])
    assert len(set(values)) == 12
    assert set(values) < set(design.domain[CANARY_COLUMN].categories)
    assert len(design.base) == 6
    table = design.training_table(np.arange(12) % 3 == 0)
    assert score_canaries(table, design).tolist() == [
        1.0 if i % 3 == 0 else 0.0 for i in range(12)
    ]


def test_other_datasets_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="designs its canaries"):
        canary_design("cervical_cancer", canaries=10)


# ------------------------------------------------------- the game, end to end


@pytest.mark.slow
def test_a_copying_plugin_is_a_violation_from_one_fit(tmp_path: Path) -> None:
    """CopyData releases its training rows: every guess is right, and eps_emp >= 2
    from one fit (at most 4 are allowed)."""
    from dpaudit.audit.run import run_audit

    config = AuditConfig(
        generator="dpaudit.generators.toy_plugins:CopyData",
        game="one-run",
        canaries=200,
        guesses=40,
        guess_rule="count",
    )
    result = run_audit(config, out_dir=tmp_path / "a")
    assert result.verdict == "VIOLATION"
    assert result.eps_emp is not None and result.eps_emp >= 2
    assert result.rounds.total == 1 and result.game == "one-run"
    assert result.one_run is not None and result.one_run.correct == 80
    doc = json.loads((tmp_path / "a" / "result.json").read_text())
    assert schema_errors(doc) == []
    assert AuditResult.from_json(doc).to_json() == result.to_json()
    # A second run into the same folder needs --force; a two-world store is never
    # replaced.
    with pytest.raises(InvalidParameterError, match="--force"):
        run_audit(config, out_dir=tmp_path / "a")


def test_two_world_identity_is_unchanged_by_the_game_keys() -> None:
    base = AuditConfig()
    assert "game" not in json.dumps(base.identity())
    one = AuditConfig(game="one-run")
    assert one.identity() != base.identity()
    assert AuditConfig.from_json(one.to_json()) == one


@pytest.mark.parametrize(
    ("flags", "match"),
    [
        (["--dataset", "cervical_cancer"], "`--game` needs --dataset worst-case"),
        (["--target", "2"], "`--target` is a setting of --game two-world"),
        (["--attack", "distance"], "`--attack` is a setting of --game two-world"),
        (["--guesses", "600"], "`guesses` + `guesses_out` must be at most 1000"),
        (["--max-memory", "100"], "dpaudit itself needs about 450 MiB"),
    ],
)
def test_command_refuses_with_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flags: list[str], match: str
) -> None:
    from dpaudit.cli import main

    out = tmp_path / "o"
    code = main(["audit", "--game", "one-run", "--quiet", "--out", str(out), *flags])
    err = capsys.readouterr().err
    assert code == 2, err
    assert match in err and "Traceback" not in err
    assert err.count("\n") == 1
    assert not out.exists()


def test_max_memory_is_kept_where_it_bounds_the_workers(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A plug-in's worker processes are bounded by --max-memory in the one-run game
    too: the setting is accepted there (the dry run plans it and writes nothing)."""
    from dpaudit.cli import main

    out = tmp_path / "o"
    flags = ["--generator", "dpaudit.generators.toy_plugins:CopyData"]
    flags += ["--max-memory", "500", "--dry-run"]
    code = main(["audit", "--game", "one-run", "--out", str(out), *flags])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert not out.exists()


def test_docs_state_the_attainable_maxima_the_code_computes() -> None:
    """docs/onerun.md's attainable maxima are the bound's (alpha 0.05, delta 1e-5)."""
    text = " ".join(
        (Path(__file__).resolve().parents[2] / "docs" / "onerun.md")
        .read_text(encoding="utf-8")
        .split()
    )
    for canaries, per_side in ((1000, 100), (200, 20), (200, 40)):
        value = eps_max_attainable(
            canaries=canaries, guesses=2 * per_side, delta=1e-5, alpha=0.05
        )
        assert f"{value:.3f}" in text, (canaries, per_side, value)


def test_a_builtin_generator_on_category_canaries_in_two_fits(tmp_path: Path) -> None:
    """dpaudit's own ``copy`` generator (in process) on the binary worst case's
    category canaries, two fits: every guess right, the fits counted as rounds."""
    from dpaudit.audit.run import run_audit
    from dpaudit.reports.markdown import render_markdown
    from dpaudit.reports.terminal import render_terminal

    config = AuditConfig(
        generator="copy",
        dataset="worst-case",
        game="one-run",
        canaries=60,
        fits=2,
        guess_rule="count",
    )
    result = run_audit(config, out_dir=tmp_path / "b")
    assert result.verdict == "VIOLATION" and result.rounds.total == 2
    assert result.one_run is not None
    # The counts the game plans for this configuration (count rule at all of alpha).
    from dpaudit.audit.games.one_run.counts import plan_counts

    planned = plan_counts(
        canaries=120, epsilon=1.0, delta=1e-5, alpha=0.05, bound="fdp"
    ).guesses_in
    r = 2 * planned
    assert (result.one_run.canaries, result.one_run.guesses) == (120, r)
    assert result.one_run.guesses_planned and result.one_run.planning_mu is not None
    assert result.one_run.correct == r and result.one_run.canary_kind == "category"
    for text in (render_terminal(result), render_markdown([result])):
        assert "one-run" in text and f"{r} of {r}" in text and "120" in text


def test_a_claim_above_the_attainable_maximum_is_inconclusive(tmp_path: Path) -> None:
    """Every guess right, but 2 + 2 guesses cannot refute a claim of 5: INCONCLUSIVE,
    with the attainable maximum reported."""
    from dpaudit.audit.run import run_audit

    config = AuditConfig(
        generator="copy",
        dataset="worst-case",
        game="one-run",
        canaries=20,
        guesses=2,
        epsilon=5.0,
        guess_rule="count",
    )
    result = run_audit(config, out_dir=tmp_path / "c")
    assert result.one_run is not None and result.one_run.correct == 4
    assert result.verdict == "INCONCLUSIVE"
    assert result.eps_max_attainable == result.one_run.eps_max_attainable < 5.0
    assert result.verdict_reason is not None
    assert "even all 4 guesses correct" in result.verdict_reason


@pytest.mark.slow
def test_a_subsample_copying_plugin_is_a_violation_from_one_fit(tmp_path: Path) -> None:
    """SubsampleCopy releases about 60% of its training rows: the default rule
    (``both``) guesses "in" for the canaries the release holds, all of them right,
    and eps_emp >= 2 from one fit; the count rule alone, with "out" guesses among the
    unshown canaries, shows less."""
    from dpaudit.audit.run import run_audit

    config = AuditConfig(
        generator="dpaudit.generators.leaky_plugins:SubsampleCopy", game="one-run"
    )
    result = run_audit(config, out_dir=tmp_path / "s")
    assert result.verdict == "VIOLATION" and result.rounds.total == 1
    s = result.one_run
    assert s is not None and s.guess_rule == "both" and s.rule == "threshold"
    assert s.correct == s.guesses >= 192 and s.guesses_out == 0
    assert result.eps_emp is not None and result.eps_emp >= 2
    count = next(r for r in s.rules if r.rule == "count")
    assert count.alpha == pytest.approx(0.025) and count.eps_emp < result.eps_emp
    doc = json.loads((tmp_path / "s" / "result.json").read_text())
    assert schema_errors(doc) == []
    assert AuditResult.from_json(doc).to_json() == result.to_json()


def test_the_default_rule_runs_both_rules_on_category_canaries(tmp_path: Path) -> None:
    """dpaudit's ``copy`` generator releases every included canary's value: under
    the default ``both`` the threshold rule's "in" guesses are exactly the included
    canaries (rounded down to the grid), each rule at half of alpha, and the result
    records both and names the one that gave eps_emp."""
    from dpaudit.audit.run import run_audit
    from dpaudit.reports.markdown import render_markdown

    config = AuditConfig(
        generator="copy", dataset="worst-case", game="one-run", canaries=60, fits=2
    )
    result = run_audit(config, out_dir=tmp_path / "d")
    s = result.one_run
    assert s is not None and s.guess_rule == "both" and s.threshold == 1.0
    count, threshold = s.rules
    assert (count.rule, threshold.rule) == ("count", "threshold")
    assert count.alpha == pytest.approx(0.025)
    assert threshold.alpha == pytest.approx(0.025 / len(threshold_sizes(120)))
    assert threshold.passed == s.included and threshold.correct == threshold.guesses_in
    assert threshold.guesses_in == max(
        r for r in threshold_sizes(120) if r <= s.included
    )
    assert result.eps_emp == max(count.eps_emp, threshold.eps_emp)
    assert s.rule == ("threshold" if threshold.eps_emp > count.eps_emp else "count")
    assert result.eps_max_attainable == max(
        count.eps_max_attainable, threshold.eps_max_attainable
    )
    assert "rules' guesses about 120 canaries" in render_markdown([result])


def test_a_chance_level_score_is_said_plainly() -> None:
    """A result that is no VIOLATION and whose score was at chance says that the game
    did not see the generator; a VIOLATION or a separating score does not."""
    from dpaudit.audit.games.one_run.game import one_run_reason
    from dpaudit.audit.result.model import Verdict
    from dpaudit.audit.result.onerun import OneRunSummary

    names = "fits canaries canaries_per_fit included guesses_in guesses_out guesses"
    counts = dict(zip(names.split(), (1, 100, 100, 50, 10, 10, 20), strict=True))
    s = OneRunSummary(
        canary_kind="point",
        score="canary-distance",
        correct_in=5,
        correct_out=5,
        correct=10,
        eps_max_attainable=1.8,
        **counts,
    )
    kw = {"eps_emp": 0.0, "eps_claimed": 1.0, "eps_max": 1.8, "summary": s}
    said = "no better than chance (AUC 0.510)"
    assert said in one_run_reason(Verdict.CONSISTENT, auc=0.51, **kw)
    assert said in one_run_reason(Verdict.INCONCLUSIVE, auc=0.51, **kw)
    assert "chance" not in one_run_reason(Verdict.CONSISTENT, auc=0.64, **kw)
    assert "chance" not in one_run_reason(Verdict.VIOLATION, auc=0.5, **kw)


def test_the_laplace_marginals_example_releases_noisy_marginals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """examples/laplace_marginals.py (the generator docs/onerun.md measures) releases
    rows of the domain, each column drawn from its own noisy histogram: with almost
    no noise the marginals are the data's."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "examples"))
    from laplace_marginals import LaplaceMarginals

    design = canary_design("worst-case", canaries=4, base_rows=96)
    domain = design.domain.to_json()
    data = design.training_table(np.array([1, 1, 1, 1]))
    model = LaplaceMarginals(epsilon=1.0, noise_factor=1e-9)
    model.fit(data, domain=domain, seed=0)
    rows = model.sample(10_000, seed=1)
    assert list(rows.columns) == design.domain.names and len(rows) == 10_000
    design.domain.validate(design.domain.cast(rows), name="release")
    # 4 of the 100 training rows carry a = 1: the release's share within 6 standard
    # deviations of 0.04 (fails with probability below 1e-8).
    share = float((rows["a"] == 1).mean())
    assert abs(share - 0.04) < 6 * math.sqrt(0.04 * 0.96 / 10_000)
    assert model.privacy_claim["epsilon"] == 1.0
    with pytest.raises(ValueError, match="noise_factor"):
        LaplaceMarginals(epsilon=1.0, noise_factor=0.0)
