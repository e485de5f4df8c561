"""Measurement transcripts (``--release transcript`` of a plug-in that states
``privacy_transcript``): the records' checks, the exact counts and likelihood
ratio, the exact privacy of the measurements, the release chosen by what the
generator declares, and the verdicts (docs/soundness.md, "The measurement
transcript")."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from dpaudit.attacks.measurements import (
    FEATURES,
    MEASUREMENT_RATIO,
    MeasurementAttack,
    exact_epsilon,
)
from dpaudit.attacks.registry import attack_class
from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.plan import GamePlan
from dpaudit.audit.games.releases import (
    MeasurementRelease,
    TranscriptRelease,
    release_for,
)
from dpaudit.audit.games.scores import analyse_scores, claimed_profile, refutable
from dpaudit.audit.games.setup import build_setup
from dpaudit.audit.games.verdict import decide
from dpaudit.audit.result.model import Claim
from dpaudit.data import worst_case_domain
from dpaudit.data.domain import Column, Domain
from dpaudit.errors import InvalidParameterError, PluginError
from dpaudit.generators.foreign.transcript import Measurement, check_transcript
from dpaudit.generators.plugins import PluginAdapter
from dpaudit.generators.toy_plugins import NoisyMarginals
from dpaudit.generators.zoo import analytic_gaussian_mu, gdp_delta
from dpaudit.rng import Rngs

TOY = "dpaudit.generators.toy_plugins:NoisyMarginals"
DOMAIN = Domain(
    columns=(
        Column(name="a", kind="binary"),
        Column(name="c", kind="categorical", categories=("x", "y", "z")),
        Column(name="n", kind="integer", lower=0.0, upper=3.0),
    )
)
GOOD = {
    "columns": ["a", "c"],
    "cells": [[0, "x"], [1, "y"]],
    "noisy": [1.5, -0.25],
    "noise": {"gaussian": 2.0},
}


def test_a_good_record_is_read_as_given() -> None:
    (m,) = check_transcript([GOOD], "g", domain=DOMAIN) or ()
    assert m.columns == ("a", "c") and m.cells == ((0, "x"), (1, "y"))
    assert m.noisy == (1.5, -0.25) and (m.noise, m.scale) == ("gaussian", 2.0)
    assert m.answer_cells() == ((0,), (1,))
    assert check_transcript(None, "g", domain=DOMAIN) is None
    sets = {**GOOD, "sets": [[0, 1]], "noisy": [3.0], "noise": {"laplace": 1}}
    (s,) = check_transcript([sets], "g", domain=DOMAIN) or ()
    assert s.answer_cells() == ((0, 1),) and s.noise == "laplace"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"noise": None}, "[0] lacks ['noise']"),
        ({"weights": [1]}, "[0] has unknown key(s) ['weights']"),
        (
            {"columns": ["a", "a"]},
            "[0]['columns'] must be a non-empty list of distinct",
        ),
        ({"columns": ["a", "q"]}, "[0]['columns'] names ['q'], not columns"),
        ({"cells": [[0]]}, "[0]['cells'] must be a list of cells, each a list of 2"),
        ({"cells": [[0, "w"], [1, "y"]]}, "'w' of column 'c' is not one of its"),
        ({"cells": [[2, "x"], [1, "y"]]}, "2 of column 'a' is not 0 or 1"),
        ({"noisy": [1.0]}, "[0]['noisy'] must be a list of 2 finite number(s)"),
        ({"noisy": [1.0, float("nan")]}, "[0]['noisy'] must be a list of 2 finite"),
        ({"noise": {"gaussian": 0}}, "[0]['noise'] must be {'gaussian': sigma}"),
        ({"noise": {"cauchy": 1}}, "[0]['noise'] must be {'gaussian': sigma}"),
        ({"sets": [[0, 0]]}, "[0]['sets'] must be a list with one non-empty list"),
        ({"sets": [[5]]}, "distinct cell indices (0 to 1)"),
    ],
)
def test_a_bad_record_is_refused_naming_it_and_the_fix(
    change: dict[str, Any], words: str
) -> None:
    record = {k: v for k, v in {**GOOD, **change}.items() if v is not None}
    with pytest.raises(PluginError) as err:
        check_transcript([GOOD, record][1:], "g", domain=DOMAIN)
    text = str(err.value)
    assert "generator 'g' breaks the plug-in contract: `privacy_transcript`" in text
    assert words in text and "\n" not in text


def test_a_transcript_that_is_not_a_list_is_refused() -> None:
    with pytest.raises(PluginError, match="must be a list of measurement records"):
        check_transcript({"columns": []}, "g", domain=DOMAIN)


def _worlds() -> tuple[pd.DataFrame, pd.DataFrame]:
    without = pd.DataFrame({"a": [0, 0, 1], "c": ["x", "y", "x"], "n": [0, 1, 3]})
    target = pd.DataFrame({"a": [1], "c": ["y"], "n": [2]})
    return without, pd.concat([without, target], ignore_index=True)


def test_the_score_is_the_exact_log_likelihood_ratio() -> None:
    without, with_target = _worlds()
    attack = MeasurementAttack(without=without, with_target=with_target, delta=1e-5)
    gauss = Measurement(
        columns=("a", "c"),
        cells=((1, "y"), (0, "x"), (1, "x")),
        noisy=(0.7, 1.2, 0.1),
        noise="gaussian",
        scale=2.0,
    )
    lap = Measurement(
        columns=("n",),
        cells=((2,), (3,), (0,)),
        noisy=(1.5, 0.2),
        noise="laplace",
        scale=0.5,
        sets=((0, 1), (2,)),
    )
    c0, c1 = attack.exact_counts(gauss)
    assert c0.tolist() == [0, 1, 1] and c1.tolist() == [1, 1, 1]
    c0, c1 = attack.exact_counts(lap)
    assert c0.tolist() == [1, 1] and c1.tolist() == [2, 1]
    x = attack.featurize_transcripts([[gauss, lap]])
    by = dict(zip(FEATURES, x[0]))
    # By hand: only the first answer of each record changes (0 -> 1 and 1 -> 2).
    ll_g = ((0.7 - 0) ** 2 - (0.7 - 1) ** 2) / (2 * 4.0)
    ll_l = (abs(1.5 - 1) - abs(1.5 - 2)) / 0.5
    assert by["log_likelihood_ratio"] == pytest.approx(ll_g + ll_l, abs=1e-12)
    assert by["gaussian_mu_squared"] == pytest.approx(1 / 4.0, abs=1e-12)
    assert (by["records"], by["gaussian_answers"], by["laplace_answers"]) == (2, 3, 2)
    assert by["answers_changed"] == 2
    # Gaussian mu 0.5 composed with one Laplace of ratio 1 / 0.5 = 2.
    assert by["eps_exact"] == pytest.approx(exact_epsilon(0.5, ((2.0, 1),), 1e-5))
    assert attack.fit(x, np.array([1])).score(x).tolist() == [x[0, 0]]
    with pytest.raises(InvalidParameterError, match="needs the transcript release"):
        attack.featurize([without])


def test_the_exact_epsilon_agrees_with_the_closed_forms() -> None:
    """dp-accounting's privacy-loss distributions against the closed forms: Laplace
    of ratio r is r-DP (for delta small enough) and k of them compose to k r; a
    mu-Gaussian's epsilon at delta solves gdp_delta(eps, mu) = delta. Tolerance
    2e-3: the pessimistic discretisation (1e-4 per mechanism) and the truncation."""
    assert exact_epsilon(0.0, ((0.5, 1),), 1e-9) == pytest.approx(0.5, abs=2e-3)
    assert exact_epsilon(0.0, ((0.25, 4),), 1e-12) == pytest.approx(1.0, abs=2e-3)
    mu = analytic_gaussian_mu(1.0, 1e-5)
    assert exact_epsilon(mu, (), 1e-5) == pytest.approx(1.0, abs=2e-3)
    assert gdp_delta(exact_epsilon(1.3, (), 1e-6), 1.3) == pytest.approx(1e-6, rel=0.05)
    assert exact_epsilon(0.0, (), 1e-5) == 0.0


def test_the_attack_is_declared_and_fits_nothing() -> None:
    cls = attack_class(MEASUREMENT_RATIO)
    assert cls is MeasurementAttack and cls.fits is False
    assert cls.trains_classifier is False


def test_the_release_is_chosen_by_what_the_generator_declares() -> None:
    """A plug-in's transcript is its measurements; dpaudit's own generators replay."""
    plugin = release_for(AuditConfig(generator=TOY, release="transcript"))
    assert type(plugin) is MeasurementRelease and plugin.white_box
    own = release_for(AuditConfig(generator="pategan", release="transcript"))
    assert type(own) is TranscriptRelease


def test_canary_teachers_are_refused_for_a_plugin() -> None:
    config = AuditConfig(
        generator=TOY,
        release="transcript",
        teachers="canary",
        dataset="worst-case",
        rounds=5,
    )
    with pytest.raises(InvalidParameterError, match="drop --teachers canary"):
        build_setup(config)


def _fitted(noise_scale: float, seed: int) -> PluginAdapter:
    domain = worst_case_domain()
    data = pd.DataFrame({c: [0, 0, 0, 0] for c in domain.names})
    adapter = PluginAdapter(
        NoisyMarginals, "toy", epsilon=1.0, delta=1e-5, noise_scale=noise_scale
    )
    return adapter.fit(data, domain=domain, rng=Rngs.from_seed(seed))


def test_the_toy_states_the_noise_it_is_told_to_state() -> None:
    """The plug-in states sigma = sqrt(d) / mu whatever it adds; its claim is the
    exact privacy of what it states (mu-GDP, rho = mu^2 / 2)."""
    records = _fitted(0.25, 0).read_transcript() or ()
    mu = analytic_gaussian_mu(1.0, 1e-5)
    assert len(records) == 3
    assert all(m.scale == pytest.approx(math.sqrt(3) / mu) for m in records)
    claim = _fitted(1.0, 0).privacy_claim_
    assert claim.gdp_mu == pytest.approx(mu) and claim.zcdp_rho == pytest.approx(
        mu**2 / 2
    )


def _llr_of_toy(bits: np.ndarray, noise_scale: float, seed: int) -> np.ndarray:
    """The attack's score of drawn toy transcripts, vectorised: the worst case's
    target changes one cell of each of the 3 one-way histograms by 1 (count 0 in
    D, 1 in D'), and the other cells cancel from the ratio."""
    mu = analytic_gaussian_mu(1.0, 1e-5)
    sigma = math.sqrt(3) / mu
    rng = np.random.default_rng([seed, 7])
    y = bits[:, None] + rng.normal(0.0, sigma * noise_scale, size=(bits.size, 3))
    return np.asarray(np.sum((y**2 - (y - 1.0) ** 2) / (2 * sigma**2), axis=1))


def test_the_vectorised_score_is_the_attacks_score_on_real_transcripts() -> None:
    """The simulation below scores drawn transcripts with a closed form; on the
    toy's own transcripts (in-process fits) the attack gives the same."""
    domain = worst_case_domain()
    without = pd.DataFrame({c: [0, 0, 0, 0] for c in domain.names})
    with_target = pd.concat(
        [without, pd.DataFrame({c: [1] for c in domain.names})], ignore_index=True
    )
    attack = MeasurementAttack(without=without, with_target=with_target, delta=1e-5)
    sigma = math.sqrt(3) / analytic_gaussian_mu(1.0, 1e-5)
    for seed, world in [(1, without), (2, with_target), (3, with_target)]:
        adapter = PluginAdapter(NoisyMarginals, "toy", epsilon=1.0, delta=1e-5)
        records = adapter.fit(
            world, domain=domain, rng=Rngs.from_seed(seed)
        ).read_transcript()
        assert records is not None
        ones = np.array([m.noisy[m.cells.index((1,))] for m in records])
        closed = float(np.sum((ones**2 - (ones - 1.0) ** 2) / (2 * sigma**2)))
        score = attack.featurize_transcripts([records])[0, 0]
        assert score == pytest.approx(closed, abs=1e-9)


def _simulated_verdict(seed: int, noise_scale: float) -> str:
    """One audit of the toy at the default size (1,000 rounds per world, split
    400/200/400, alpha 0.05), its transcripts drawn, decided by the audit's own
    code (threshold on validation rounds, bound on test rounds, the verdict rule
    against the claimed profile)."""
    mu = analytic_gaussian_mu(1.0, 1e-5)
    plan = GamePlan.create(rounds=1000, split=(0.4, 0.2, 0.4), seed=seed)
    score = _llr_of_toy(plan.bits, noise_scale, seed)
    claim = Claim(epsilon=1.0, delta=1e-5, gdp_mu=mu, zcdp_rho=mu**2 / 2)
    profile = claimed_profile(claim, delta=1e-5)
    val, test = plan.indices("validation"), plan.indices("test")
    head = analyse_scores(
        MEASUREMENT_RATIO,
        score[val],
        plan.bits[val],
        score[test],
        plan.bits[test],
        delta=1e-5,
        alpha=0.05,
        method="clopper_pearson",
        profile=profile,
    )
    return decide(
        eps_emp=head.eps_emp,
        eps_claimed=1.0,
        eps_max_attainable=head.eps_max_attainable,
        refutation_ratio=head.refutation_ratio,
        profile_refutable=refutable(head, profile, "clopper_pearson"),
    ).value


@pytest.mark.statistical
def test_honest_measurements_raise_false_alarms_at_most_alpha() -> None:
    """200 simulated audits of the toy adding the noise it states: at most
    alpha = 5% (10) VIOLATIONs. The test's own failure probability, over the
    seeds: measured on 2,000 such audits (seeds 0 to 1,999) the false-alarm rate
    is 0.002 (4 of 2,000; its 99.9% upper bound 0.0074), and
    P(Binomial(200, 0.0074) > 10) < 1e-6."""
    verdicts = [_simulated_verdict(seed, 1.0) for seed in range(200)]
    assert verdicts.count("VIOLATION") <= 10


@pytest.mark.statistical
def test_a_quarter_of_the_stated_noise_is_a_violation() -> None:
    """50 simulated audits of the toy adding a quarter of the noise it states: at
    least 47 VIOLATIONs. Failure probability, over the seeds: 1,999 of 2,000 such
    audits (seeds 0 to 1,999) were VIOLATIONs (miss rate <= 0.0046 at 99.9%), and
    P(Binomial(50, 0.0046) >= 4) < 1e-4."""
    verdicts = [_simulated_verdict(5000 + seed, 0.25) for seed in range(50)]
    assert verdicts.count("VIOLATION") >= 47


def _head(mu_emp: float) -> Any:
    from dpaudit.audit.result.model import AttackResult, Counts

    counts = Counts(tp=300, fp=100, tn=300, fn=100)
    return AttackResult(
        name=MEASUREMENT_RATIO, eps_emp=0.1, counts=counts, mu_emp=mu_emp
    )


def _columns(**values: list[float]) -> dict[str, np.ndarray]:
    base = {name: [0.0, 0.0] for name in FEATURES}
    return {k: np.asarray(v) for k, v in {**base, **values}.items()}


def test_the_section_of_laplace_measurements_states_epsilon_and_no_ceiling() -> None:
    from dpaudit.audit.games.measurements import summary_of

    col = _columns(
        eps_exact=[0.5, 0.5],
        records=[1, 1],
        laplace_answers=[4, 4],
        answers_changed=[1, 1],
    )
    m = summary_of(
        col,
        head=_head(0.0),
        claim=Claim(epsilon=0.4, delta=0.0),
        delta=1e-5,
        alpha=0.05,
        method="clopper_pearson",
    )
    assert m.mu_exact is None and m.rho_exact is None and m.mu_ceiling is None
    assert (m.term, m.claimed, m.spent) == ("epsilon", 0.4, 0.5)
    assert m.spends_more_than_claimed is True and not m.varies
    assert "0 Gaussian and 4 Laplace" in m.covers


def test_the_section_of_gaussian_measurements_has_the_ceiling_and_the_largest_mu() -> (
    None
):
    from dpaudit.audit.games.measurements import summary_of
    from dpaudit.audit.stats.ceiling import mu_ceiling

    col = _columns(
        gaussian_mu_squared=[0.25, 1.0],
        eps_exact=[0.9, 2.0],
        records=[2, 3],
        gaussian_answers=[6, 9],
        answers_changed=[2, 3],
    )
    claim = Claim(
        epsilon=4.0,
        delta=1e-5,
        gdp_mu=1.0,
        extra={
            "transcript_omits": {"values": ["the tree"], "distinct": 1, "rounds": 2}
        },
    )
    m = summary_of(
        col,
        head=_head(0.3),
        claim=claim,
        delta=1e-5,
        alpha=0.05,
        method="clopper_pearson",
    )
    assert m.mu_exact == 1.0 and m.rho_exact == 0.5 and m.varies
    assert m.mu_ceiling == pytest.approx(mu_ceiling(1.0, 400, 400, alpha=0.05))
    assert m.mu_to_ceiling == pytest.approx(0.3 / m.mu_ceiling)
    assert (m.term, m.claimed, m.spent, m.spends_more_than_claimed) == (
        "mu",
        1.0,
        1.0,
        False,
    )
    assert m.leaves_out.endswith("the generator names: the tree")
