"""Canary teachers (the transcript game's adversarial teachers) and the exact privacy
of their transcript."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.setup import AuditSetup, build_setup
from dpaudit.audit.stats.tradeoff import eps_of_gdp
from dpaudit.errors import InvalidParameterError
from dpaudit.generators.pate_gan import PateGan
from dpaudit.generators.pate_gan.canary import (
    CanaryPrivacy,
    canary_mask,
    canary_privacy,
)
from dpaudit.generators.pate_gan.model import _with_canary
from dpaudit.generators.pate_gan.transcript import Recorder, log_probability, vote_noise
from dpaudit.rng import Rngs

SMALL = {"max_iterations": 3, "device": "cpu"}


def _setup(options: dict[str, object], dataset: str = "worst-case") -> AuditSetup:
    return build_setup(
        AuditConfig(
            dataset=dataset,
            rounds=5,
            epsilon=4.0,
            device="cpu",
            generator_options=options,
            release="transcript",
            teachers="canary",
        )
    )


def _run(
    setup: AuditSetup, datasets: list[pd.DataFrame]
) -> tuple[PateGan, Recorder, int]:
    gen = setup.make_generator()
    assert isinstance(gen, PateGan)
    public = setup.public_streams()
    assert public is not None
    trainer = gen._trainer(
        datasets,
        domain=setup.domain,
        rngs=Rngs.from_seed(5).spawn(len(datasets)),
        public_rngs=[public[0]] * len(datasets),
    )
    _with_canary(trainer, datasets, setup.canary)
    trainer.recorder = Recorder(keep_votes=True)
    trainer.run()
    return gen, trainer.recorder, trainer.k


def test_the_canary_mask_finds_the_target_and_refuses_two_rows() -> None:
    d = pd.DataFrame({"a": [0, 1, 1], "b": [0.0, 2.0, 2.5]})
    assert canary_mask([d, d.iloc[:2]], d.iloc[[2]], n_max=3).tolist() == [
        [False, False, True],
        [False, False, False],
    ]
    with pytest.raises(InvalidParameterError, match="one row"):
        canary_mask([d], d.iloc[:2], n_max=3)


def test_canary_votes_are_the_target_teachers_and_zero_without_it() -> None:
    """With the target, exactly one teacher (the reference's disjoint partition)
    holds it and votes "real" once it has trained on it; without it, none does."""
    setup = _setup(SMALL)
    _, with_rec, k = _run(setup, [setup.with_target] * 3)
    _, without_rec, _ = _run(setup, [setup.without] * 3)
    with_votes = torch.stack(with_rec.votes, dim=1)
    assert set(with_votes.unique().tolist()) <= {0, 1}
    assert int(with_votes[:, -1].min()) == 1  # trained on it by the last step
    assert int(torch.stack(without_rec.votes).abs().sum()) == 0
    assert k == 2


def test_shared_sampling_lets_the_target_reach_every_teacher() -> None:
    setup = _setup({**SMALL, "shared_sampling": True, "max_iterations": 6})
    _, rec, k = _run(setup, [setup.with_target] * 2)
    assert int(torch.stack(rec.votes, dim=1)[:, -1].max()) == k


def test_the_replay_gives_the_exact_likelihood_of_the_canary_transcript() -> None:
    """The replay's log-likelihoods equal the closed form of each world's Bernoulli
    answers (clean votes known: the canary count with the target, 0 without), to
    1e-9, and the statistic is not 0 (the transcript carries the target)."""
    setup = _setup(SMALL)
    gen, rec, k = _run(setup, [setup.with_target, setup.without])
    transcripts = rec.transcripts()
    votes = torch.stack(rec.votes, dim=1)  # [M, S, B]
    public = setup.public_streams()
    assert public is not None
    beta, single = vote_noise(gen.config)
    for m, t in enumerate(transcripts):
        ll, bad = gen.replay_log_likelihoods(
            [setup.with_target, setup.without],
            [t, t],
            domain=setup.domain,
            public_rngs=[public[0]] * 2,
            canary=setup.canary,
        )
        assert not bad.any()
        labels = torch.from_numpy(t.labels[t.used])
        n1_with = votes[0, : len(t.used)][torch.from_numpy(t.used)]
        exact_with = float(
            log_probability(n1_with, labels, k=k, beta=beta, single_draw=single).sum()
        )
        exact_without = float(
            log_probability(
                torch.zeros_like(n1_with), labels, k=k, beta=beta, single_draw=single
            ).sum()
        )
        assert ll[0] == pytest.approx(exact_with, abs=1e-9)
        assert ll[1] == pytest.approx(exact_without, abs=1e-9)
        assert ll[0] != ll[1]
        assert m in (0, 1)


def test_trained_and_canary_teachers_are_told_apart_in_the_config() -> None:
    with pytest.raises(InvalidParameterError, match="--teachers"):
        AuditConfig(dataset="worst-case", teachers="canary").check_settings()
    cfg = AuditConfig(dataset="worst-case", release="transcript", teachers="canary")
    assert cfg.to_json()["teachers"] == "canary"
    # Audits that do not set it keep the identities of earlier versions.
    plain = AuditConfig(dataset="worst-case", release="transcript")
    trained = AuditConfig(
        dataset="worst-case", release="transcript", teachers="trained"
    )
    assert plain.identity() == trained.identity() != cfg.identity()


def _privacy(n1_with: int, queries: int, beta: float) -> CanaryPrivacy:
    return canary_privacy(
        np.full(queries, n1_with, dtype=np.int64),
        np.zeros(queries, dtype=np.int64),
        k=2,
        beta=beta,
        single_draw=False,
        delta=1e-5,
    )


def test_the_exact_privacy_agrees_with_its_gaussian_limit() -> None:
    """Many small queries: the composed PLD's epsilon is within 5% of the epsilon of
    mu-GDP at the central-limit mu (the reference's vote at lambda 1e-3, k = 2)."""
    p = _privacy(1, 32_000, 1000.0)
    assert p.differing == 32_000
    assert p.mu == pytest.approx(0.1789, abs=1e-3)
    assert p.epsilon == pytest.approx(eps_of_gdp(p.mu, 1e-5), rel=0.05)
    same = _privacy(0, 10, 1.0)
    assert (same.epsilon, same.mu, same.differing) == (0.0, 0.0, 0)


@pytest.mark.slow
def test_a_transcript_with_no_vote_changed_is_a_constant_release(tmp_path) -> None:
    """Trained teachers on the worst case change no vote in two iterations: the
    likelihood ratio is 0 in every round, which the result and its report call a
    constant release (the log-likelihoods themselves vary); canary teachers do
    change them."""
    from dpaudit.audit.run import run_audit
    from dpaudit.reports.meaning import power_rows

    results = {}
    for teachers in ("trained", "canary"):
        cfg = AuditConfig(
            dataset="worst-case",
            rounds=5,
            device="cpu",
            release="transcript",
            teachers=teachers,
            generator_options=SMALL,
        )
        results[teachers] = run_audit(cfg, out_dir=tmp_path / teachers)
    trained = results["trained"]
    assert trained.power is not None and trained.power.constant_release
    rows = dict(power_rows(trained))
    assert "exactly as likely in both worlds" in rows["constant release"]
    canary = results["canary"]
    assert canary.power is not None and not canary.power.constant_release


def _binomial_epsilon(p: float, q: float, c: int, delta: float) -> float:
    """epsilon(delta) of Binomial(c, p) over Binomial(c, q) (the count of "real"
    answers of c identical votes is sufficient), by enumerating every count."""
    from scipy import stats
    from scipy.optimize import brentq

    j = np.arange(c + 1)
    a, b = stats.binom.pmf(j, c, p), stats.binom.pmf(j, c, q)

    def excess(e: float) -> float:
        return float(np.maximum(a - np.exp(e) * b, 0.0).sum()) - delta

    return 0.0 if excess(0.0) <= 0 else float(brentq(excess, 0.0, 50.0, xtol=1e-9))


def test_the_exact_privacy_is_the_larger_direction() -> None:
    """The calibration row of benchmarks/transcript_canary.py (lambda 0.5, so
    Laplace noise of scale 2 on the vote margin; 8 queries, the target's teacher
    voting "real"): each direction by enumerating the binomial counts, and by
    dp-accounting with ``symmetric=False`` (both directions) and each direction
    alone; the reported epsilon is the larger (4.754; the other 2.962), by
    enumeration; the PLD's pessimistic discretisation (1e-5 per query) puts it at
    most 8e-5 above."""
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    from dpaudit.generators.pate_gan.canary import log_vote_probabilities

    (lp, lp0), (lq, lq0) = log_vote_probabilities(
        1, 0, k=2, beta=2.0, single_draw=False
    )
    p, q = np.exp(lp), np.exp(lq)
    with_over = _binomial_epsilon(p, q, 8, 1e-5)
    without_over = _binomial_epsilon(q, p, 8, 1e-5)
    assert without_over == pytest.approx(2.962, abs=1e-3)
    assert with_over == pytest.approx(4.754, abs=1e-3)
    pmf_with, pmf_without = {1: lp, 0: lp0}, {1: lq, 0: lq0}

    def pld_epsilon(lower: dict, upper: dict, symmetric: bool) -> float:
        one = pld_lib.from_two_probability_mass_functions(
            lower, upper, value_discretization_interval=1e-5, symmetric=symmetric
        )
        return float(one.self_compose(8).get_epsilon_for_delta(1e-5))

    # dp-accounting's PLD of (lower, upper) is the loss of upper over lower.
    assert pld_epsilon(pmf_with, pmf_without, True) == pytest.approx(
        without_over, abs=1e-4
    )
    assert pld_epsilon(pmf_without, pmf_with, True) == pytest.approx(
        with_over, abs=1e-4
    )
    both = pld_epsilon(pmf_with, pmf_without, False)
    assert both == pytest.approx(pld_epsilon(pmf_without, pmf_with, False))
    got = _privacy(1, 8, 2.0)
    assert got.method == "enumeration"
    assert got.epsilon == pytest.approx(with_over, abs=1e-6)
    assert with_over - 1e-6 <= both <= with_over + 1e-4


def test_enumeration_and_the_pld_agree_on_several_vote_pairs(monkeypatch) -> None:
    """Three pairs of clean votes (k = 9): the enumerated epsilon (exact) lies at
    most the PLD's pessimistic rounding (12 queries x 1e-5) below dp-accounting's
    both-direction PLD, which the fallback uses above MAX_CELLS cells."""
    from dpaudit.generators.pate_gan import canary

    with_target = np.array([1] * 5 + [2] * 4 + [4] * 3)
    args = dict(k=9, beta=1.0, single_draw=False, delta=1e-5)
    exact = canary_privacy(with_target, np.zeros(12, dtype=np.int64), **args)
    monkeypatch.setattr(canary, "MAX_CELLS", 0)
    pld = canary_privacy(with_target, np.zeros(12, dtype=np.int64), **args)
    assert (exact.method, pld.method) == ("enumeration", "pld")
    assert exact.epsilon - 1e-6 <= pld.epsilon <= exact.epsilon + 12e-5
