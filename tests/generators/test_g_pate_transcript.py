"""G-PATE's transcript (every Confident-GNMax answer), canary teachers, the exact
answer probabilities, the replay and the exact privacy of the canary transcript."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
import torch
from numpy.typing import NDArray
from scipy import integrate, stats

from dpaudit.attacks.likelihood_ratio import log_likelihood_ratio
from dpaudit.audit.games.plan import GamePlan
from dpaudit.audit.stats import estimators as est
from dpaudit.audit.stats.thresholds import select_threshold
from dpaudit.data import worst_case_dataset, worst_case_domain
from dpaudit.generators.g_pate import GPate, GPateConfig
from dpaudit.generators.g_pate.accounting import Spending
from dpaudit.generators.g_pate.canary_privacy import (
    canary_delta,
    canary_epsilon,
    canary_law,
    outcome_probabilities,
)
from dpaudit.generators.g_pate.model import _target_rows
from dpaudit.generators.g_pate.trainer import Trainer
from dpaudit.generators.g_pate.transcript import (
    AnswerTranscript,
    Recorder,
    log_answer_probability,
    log_argmax_probability,
    replay_usage,
    stack_transcripts,
    transcript_log_likelihoods,
)
from dpaudit.rng import Rngs, public_and_privacy
from dpaudit.worst_case.datasets import neighbouring_pair, worst_case_target

TINY = {
    "num_teachers": 2,
    "batch_size": 4,
    "projection_dim": 2,
    "sigma1": 2.0,
    "sigma2": 2.0,
    "max_iterations": 3,
    "device": "cpu",
}


def _worlds() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    dom = worst_case_domain()
    target = worst_case_target(dom)
    without, with_target = neighbouring_pair(
        worst_case_dataset().train, target, domain=dom
    )
    return without, with_target, target


def _gpate(**options: object) -> GPate:
    return GPate(GPateConfig(epsilon=1e6, delta=1e-5, **{**TINY, **options}))  # type: ignore[arg-type]


def _state(model: GPate) -> dict[str, torch.Tensor]:
    assert model._fitted is not None
    return model._fitted.generator.state_dict()


# ------------------------------------------------------------------ recording


def test_recording_the_transcript_changes_no_model() -> None:
    without, with_target, _ = _worlds()
    gen = _gpate()
    kwargs = {
        "domain": worst_case_domain(),
        "rngs": Rngs.from_seed(3).spawn(2),
        "public_rngs": [Rngs.from_seed(9)] * 2,
    }
    plain = gen.fit_many([without, with_target], **kwargs)  # type: ignore[arg-type]
    recorded, transcripts = gen.fit_many_with_transcripts(
        [without, with_target],
        **kwargs,  # type: ignore[arg-type]
    )
    for a, b in zip(plain, recorded):
        sa, sb = _state(a), _state(b)
        assert all(torch.equal(sa[k], sb[k]) for k in sa)
        assert a.privacy_claim_.to_json() == b.privacy_claim_.to_json()
    for t in transcripts:
        assert t.answered.shape == (3, 4, 2) and t.used.all()
        assert ((t.winners == -1) == ~t.answered).all()
        assert t.queries == 24


def _canary_run(
    gen: GPate, datasets: list[pd.DataFrame], target: pd.DataFrame
) -> tuple[Recorder, list[int]]:
    """Trains with canary teachers through the trainer, keeping the clean counts."""
    dom = worst_case_domain()
    cfg = gen.config
    from dpaudit.generators.g_pate.layout import Layout

    layouts = [Layout.build(dom, cfg) for _ in datasets]
    streams = [
        public_and_privacy(r, Rngs.from_seed(9)) for r in Rngs.from_seed(3).spawn(2)
    ]
    trainer = Trainer(
        cfg,
        layouts,
        [dom.encode(d) for d in datasets],
        streams,
        torch.device("cpu"),
        target_rows=[_target_rows(d, target, dom) for d in datasets],
    )
    trainer.recorder = Recorder(keep_counts=True)
    trainer.run()
    holder = [int(t[-1]) for t, _ in trainer.assignments]
    return trainer.recorder, holder


def test_canary_teachers_vote_by_their_partition() -> None:
    without, with_target, target = _worlds()
    gen = _gpate(bins=4)
    rec, _ = _canary_run(gen, [without, with_target], target)
    counts = np.stack(rec.counts, axis=1)  # [M, S, B, p, bins]
    assert (counts[0] == np.array([2.0, 0.0, 0.0, 0.0])).all()
    assert (counts[1] == np.array([1.0, 0.0, 0.0, 1.0])).all()


def test_the_canary_replay_is_the_exact_likelihood_of_the_run() -> None:
    without, with_target, target = _worlds()
    gen = _gpate(bins=4)
    rec, _ = _canary_run(gen, [without, with_target], target)
    transcripts = rec.transcripts()
    counts = np.stack(rec.counts, axis=1)
    ll, contradicted = gen.replay_log_likelihoods(
        [without, with_target, with_target, without],
        [transcripts[0], transcripts[0], transcripts[1], transcripts[1]],
        domain=worst_case_domain(),
        public_rngs=[Rngs.from_seed(9)] * 4,
        canary=target,
    )
    assert not contradicted.any()
    for m, own in ((0, 0), (1, 2)):
        t = transcripts[m]
        direct = log_answer_probability(
            torch.from_numpy(counts[m].reshape(-1, 4).astype(np.float64)),
            torch.from_numpy(t.answered.reshape(-1)),
            torch.from_numpy(t.winners.reshape(-1)),
            threshold=gen.config.threshold_count,
            sigma1=gen.config.sigma1,
            sigma2=gen.config.sigma2,
        )
        assert ll[own] == pytest.approx(float(direct.sum()), abs=1e-9)
    # The other world's counts give another likelihood.
    assert ll[0] != ll[1]


def test_a_transcript_that_stops_early_contradicts_both_worlds() -> None:
    without, with_target, target = _worlds()
    gen = _gpate()
    _, transcripts = gen.fit_many_with_transcripts(
        [without],
        domain=worst_case_domain(),
        rngs=[Rngs.from_seed(1)],
        public_rngs=[Rngs.from_seed(9)],
        canary=target,
    )
    t = transcripts[0]
    short = AnswerTranscript(
        answered=t.answered[:2], winners=t.winners[:2], used=t.used[:2]
    )
    _, contradicted = gen.replay_log_likelihoods(
        [without, with_target],
        [short, short],
        domain=worst_case_domain(),
        public_rngs=[Rngs.from_seed(9)] * 2,
        canary=target,
    )
    assert contradicted.all()


def test_the_trained_replay_is_the_exact_likelihood_of_the_run() -> None:
    """Trained teachers: the replay (training re-run with the answers forced) reads
    the run's own clean counts in the run's world, and other counts in the other
    world (teachers that learn fast enough for votes to differ)."""
    without, with_target, _ = _worlds()
    gen = _gpate(max_iterations=5, lr=0.05)
    cfg, dom = gen.config, worst_case_domain()
    from dpaudit.generators.g_pate.layout import Layout

    datasets = [without, with_target]
    streams = [
        public_and_privacy(r, Rngs.from_seed(9)) for r in Rngs.from_seed(3).spawn(2)
    ]
    trainer = Trainer(
        cfg,
        [Layout.build(dom, cfg)] * 2,
        [dom.encode(d) for d in datasets],
        streams,
        torch.device("cpu"),
    )
    trainer.recorder = Recorder(keep_counts=True)
    trainer.run()
    transcripts = trainer.recorder.transcripts()
    counts = np.stack(trainer.recorder.counts, axis=1)
    assert (counts[0] != counts[1]).any()  # some votes differ between the worlds
    ll, contradicted = gen.replay_log_likelihoods(
        [without, with_target, with_target, without],
        [transcripts[0], transcripts[0], transcripts[1], transcripts[1]],
        domain=dom,
        public_rngs=[Rngs.from_seed(9)] * 4,
    )
    assert not contradicted.any()
    for m, own, other in ((0, 0, 1), (1, 2, 3)):
        t = transcripts[m]
        direct = log_answer_probability(
            torch.from_numpy(counts[m].reshape(-1, cfg.bins).astype(np.float64)),
            torch.from_numpy(t.answered.reshape(-1)),
            torch.from_numpy(t.winners.reshape(-1)),
            threshold=cfg.threshold_count,
            sigma1=cfg.sigma1,
            sigma2=cfg.sigma2,
        )
        assert ll[own] == pytest.approx(float(direct.sum()), abs=1e-9)
        assert ll[other] != ll[own]
    assert gen.transcript_support() is None
    assert gen.transcript_support(canary=True) is None


def test_replay_usage_follows_the_data_independent_stopping() -> None:
    cfg = GPateConfig(
        epsilon=6.0,
        delta=1e-5,
        num_teachers=2,
        batch_size=1,
        projection_dim=2,
        bins=3,
        sigma1=3.0,
        sigma2=3.0,
        max_iterations=4,
        device="cpu",
    )
    answered = np.zeros((2, 4, 1, 2), dtype=np.bool_)
    answered[1, :, 0, :] = True  # every query answered: the budget stops sooner
    used, continues = replay_usage(cfg, answered, None)
    assert used[0].tolist() == [True, True, True, True] and not continues[0]
    # Admission needs at most 0, 2, 1, 0 answered before iterations 0..3.
    assert used[1].tolist() == [True, True, False, False] and not continues[1]


# -------------------------------------------------------------- probabilities


def test_two_bins_match_the_closed_form() -> None:
    c = torch.tensor(
        [[3.0, 1.0], [0.0, 7.0], [2.0, 2.0], [0.0, 60.0]], dtype=torch.float64
    )
    for sigma in (0.5, 2.0, 600.0):
        got = log_argmax_probability(c, torch.zeros(4, dtype=torch.long), sigma)
        want = stats.norm.logcdf((c[:, 0] - c[:, 1]).numpy() / (sigma * math.sqrt(2)))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


def test_many_bins_match_scipy_quadrature() -> None:
    """Against SciPy's adaptive quadrature (relative tolerance 1e-13) on random
    counts with 3 to 10 bins (the integrand is below 1e-31 of its peak outside
    [-12, 18]): relative agreement 1e-10."""
    gen = np.random.default_rng(0)
    for bins in (3, 5, 10):
        c = gen.uniform(0, 12, size=(2, bins))
        w = gen.integers(0, bins, size=2)
        sigma = 2.5
        got = log_argmax_probability(torch.from_numpy(c), torch.from_numpy(w), sigma)
        for i in range(2):
            d = np.delete((c[i, w[i]] - c[i]) / sigma, w[i])
            want = integrate.quad(
                lambda z, d=d: stats.norm.pdf(z) * np.prod(stats.norm.cdf(d + z)),
                -12.0,
                18.0,
                epsabs=0,
                epsrel=1e-12,
                limit=200,
            )[0]
            assert math.exp(float(got[i])) == pytest.approx(want, rel=1e-10)


def test_a_tiny_probability_keeps_its_relative_accuracy() -> None:
    """P(the bin 40 sigma below three others wins) ~ e^-610: against SciPy's
    quadrature of the rescaled integrand."""
    c = torch.tensor([[0.0, 40.0, 40.0, 40.0]])
    got = float(log_argmax_probability(c, torch.tensor([0]), 1.0)[0])
    scale = 700.0
    want = integrate.quad(
        lambda z: math.exp(
            stats.norm.logpdf(z) + 3 * stats.norm.logcdf(z - 40) + scale
        ),
        -10,
        60,
        points=[30],
        limit=200,
        epsabs=0,
        epsrel=1e-13,
    )[0]
    assert got == pytest.approx(math.log(want) - scale, rel=1e-10)


@pytest.mark.statistical
def test_argmax_probabilities_match_monte_carlo() -> None:
    """400,000 draws of ``argmax(c + sigma N)`` with 5 bins: every bin's frequency
    within 5 standard errors of its computed probability. Failure probability if
    the probabilities are right: at most 5 x 5.8e-7 = 2.9e-6 (two-sided normal tail
    at 5, union over bins; the binomial is near normal at this size)."""
    c = torch.tensor([3.0, 1.0, 0.0, 2.5, 1.0], dtype=torch.float64)
    sigma, n = 1.5, 400_000
    g = torch.Generator().manual_seed(11)
    noise = torch.randn(n, 5, generator=g, dtype=torch.float64)
    freq = torch.bincount(torch.argmax(c + sigma * noise, 1), minlength=5) / n
    p = log_argmax_probability(c.expand(5, 5), torch.arange(5), sigma).exp()
    se = torch.sqrt(p * (1 - p) / n)
    assert float(p.sum()) == pytest.approx(1.0, abs=1e-12)
    assert bool(((freq - p).abs() <= 5 * se).all())


def test_answer_probabilities_sum_to_one() -> None:
    rows = torch.tensor([[5.0, 1.0, 0.0, 3.0], [2.0, 2.0, 0.0, 0.0]])
    for row in rows:
        c = row.expand(5, 4)
        lp = log_answer_probability(
            c,
            torch.tensor([False, True, True, True, True]),
            torch.tensor([-1, 0, 1, 2, 3]),
            threshold=3.0,
            sigma1=2.0,
            sigma2=1.5,
        )
        assert float(lp.exp().sum()) == pytest.approx(1.0, abs=1e-12)


# ---------------------------------------------------------- exact privacy

#: A canary transcript whose budget stops after 2, 3 or 4 iterations depending on
#: how many queries were answered (admission: a <= 0, 2, 1, 0 answered before
#: iterations 0..3), small enough to enumerate.
STOPPED = GPateConfig(
    epsilon=6.0,
    delta=1e-5,
    num_teachers=2,
    batch_size=1,
    projection_dim=2,
    bins=3,
    sigma1=3.0,
    sigma2=3.0,
    max_iterations=4,
    device="cpu",
)


def _enumerated_delta(
    cfg: GPateConfig, epsilons: list[float], *, reverse: bool = False
) -> list[float]:
    """delta(eps) by enumerating every transcript (outcomes U, bin 0, the middle
    bin, bin 2 per query) with the accountant's own admission at each iteration
    (``reverse``: the law without the target over the law with it)."""
    w, wo = outcome_probabilities(cfg)
    per = cfg.batch_size * cfg.projection_dim
    spend = Spending(cfg, 1)
    leaves: list[tuple[float, float]] = []

    def walk(t: int, a: int, pw: float, pwo: float) -> None:
        worst = spend._eps(np.array([t * per + per]), np.array([a + per]))[0]
        if t >= cfg.max_iterations or worst > cfg.epsilon:
            leaves.append((pw, pwo))
            return
        for combo in itertools.product(range(4), repeat=per):
            qw = math.prod(w[o] for o in combo)
            qwo = math.prod(wo[o] for o in combo)
            walk(t + 1, a + sum(o > 0 for o in combo), pw * qw, pwo * qwo)

    walk(0, 0, 1.0, 1.0)
    pw = np.array([x for x, _ in leaves])
    pwo = np.array([y for _, y in leaves])
    assert pw.sum() == pytest.approx(1.0) and pwo.sum() == pytest.approx(1.0)
    if reverse:
        pw, pwo = pwo, pw
    return [float(np.maximum(pw - math.exp(e) * pwo, 0.0).sum()) for e in epsilons]


def test_the_exact_canary_privacy_matches_enumeration() -> None:
    law = canary_law(STOPPED)
    assert law.stops == (4, 6, 8)  # the stopping time depends on the answers
    epsilons = [0.0, 0.3, 1.0, 2.0, 3.5]
    want = _enumerated_delta(STOPPED, epsilons)
    got = [canary_delta(law, e) for e in epsilons]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-13)
    # The other direction (the law without the target over the law with it).
    want = _enumerated_delta(STOPPED, epsilons, reverse=True)
    got = [canary_delta(law, e, reverse=True) for e in epsilons]
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-13)
    # The reported epsilon is the larger direction's.
    eps = canary_epsilon(law, 0.01)
    both = [canary_delta(law, eps), canary_delta(law, eps, reverse=True)]
    assert max(both) == pytest.approx(0.01, rel=1e-4)


def test_two_bins_law_matches_the_closed_form() -> None:
    cfg = GPateConfig(
        epsilon=1e6, delta=1e-5, num_teachers=2, bins=2, sigma1=1.0, sigma2=1.5
    )
    w, wo = outcome_probabilities(cfg)
    # T = 1: top 1 with the target, 2 without.
    assert w[0] == pytest.approx(0.5)
    assert wo[0] == pytest.approx(stats.norm.cdf(-1.0))
    assert w[1] == pytest.approx(0.5 * 0.5)  # counts [1, 1]
    assert wo[2] == pytest.approx(
        stats.norm.cdf(1.0) * stats.norm.cdf(-2 / (1.5 * math.sqrt(2)))
    )
    assert w[3] == wo[3] == 0.0


# ------------------------------------------------------------- calibration

#: Four queries (two iterations of one record x two coordinates), three bins; the
#: budget is never reached, the cap stops every run after 4 queries.
HANDFUL = GPateConfig(
    epsilon=1e6,
    delta=1e-5,
    num_teachers=2,
    batch_size=1,
    projection_dim=2,
    bins=3,
    sigma1=1.5,
    sigma2=1.5,
    max_iterations=2,
    device="cpu",
)
ALPHA, DELTA = 0.05, 1e-5


def simulated_audits(seeds: range, *, rounds: int, law: tuple) -> NDArray[np.float64]:  # type: ignore[type-arg]
    """eps_emp of audits of the canary transcript of :data:`HANDFUL` (one per seed),
    scored by the replay's own likelihoods (:func:`transcript_log_likelihoods`, all
    rounds of all audits in one call)."""
    w, wo = law
    plans = [GamePlan.create(rounds=rounds, seed=seed) for seed in seeds]
    bits = np.concatenate([p.bits for p in plans]).astype(bool)
    n = len(bits)
    u = np.concatenate(
        [
            Rngs.from_seed(seed).numpy.random((len(p.bits), 4))
            for seed, p in zip(seeds, plans)
        ]
    )
    # Outcomes 0: U, 1: bin 0, 2: bin 2 (last), 3: bin 1 (middle).
    cum = np.cumsum(np.where(bits[:, None], w, wo), axis=1)
    outcome = np.minimum((u[:, :, None] > cum[:, None, :]).sum(2), 3)
    answered = (outcome > 0).reshape(n, 2, 1, 2)
    winners = np.choose(outcome, [-1, 0, 2, 1]).reshape(n, 2, 1, 2)
    used = np.ones((n, 2), dtype=np.bool_)
    c_with = np.tile([1.0, 0.0, 1.0], (n, 1))
    c_without = np.tile([2.0, 0.0, 0.0], (n, 1))
    ll_with = transcript_log_likelihoods(HANDFUL, answered, winners, used, c_with)
    ll_without = transcript_log_likelihoods(HANDFUL, answered, winners, used, c_without)
    none = np.zeros(n, dtype=bool)
    scores = log_likelihood_ratio(
        ll_with, ll_without, impossible_with=none, impossible_without=none
    )
    out, start = [], 0
    for plan in plans:
        mine = scores[start : start + len(plan.bits)]
        start += len(plan.bits)
        val, test = plan.indices("validation"), plan.indices("test")
        threshold, direction = select_threshold(
            mine[val], plan.bits[val], delta=DELTA, alpha=ALPHA
        )
        counts = est.AttackCounts.from_scores(
            mine[test], plan.bits[test], threshold=threshold, direction=direction
        )
        out.append(float(est.eps_lower_bound(counts, delta=DELTA, alpha=ALPHA)))
    return np.array(out)


@pytest.mark.slow
@pytest.mark.statistical
def test_the_lr_attack_on_an_exact_canary_transcript_keeps_its_level() -> None:
    """200 audits (1,000 rounds per world each) of a four-query canary transcript
    whose exact epsilon(1e-5) is computed by :func:`canary_epsilon` (checked against
    enumeration above). A false alarm is eps_emp above the exact epsilon: each audit
    raises one with probability at most alpha = 0.05, so more than 20 in 200 has
    probability P(Binomial(200, 0.05) > 20) = 0.0012 if the audit is sound. The
    median eps_emp must exceed 30% of the exact epsilon (the attack is not vacuous;
    this part can fail if the attack is weak)."""
    law = canary_law(HANDFUL)
    exact = canary_epsilon(law, DELTA)
    assert 2.0 < exact < 4.0  # 3.85 (the larger direction; the other 2.80)
    eps = simulated_audits(range(200), rounds=1000, law=(law.with_target, law.without))
    assert int((eps > exact).sum()) <= 20
    assert float(np.median(eps)) > 0.3 * exact


def test_the_transcripts_stack_to_one_length() -> None:
    short = AnswerTranscript(
        answered=np.ones((1, 1, 2), dtype=np.bool_),
        winners=np.zeros((1, 1, 2), dtype=np.int64),
        used=np.ones(1, dtype=np.bool_),
    )
    long = AnswerTranscript(
        answered=np.zeros((2, 1, 2), dtype=np.bool_),
        winners=np.full((2, 1, 2), -1, dtype=np.int64),
        used=np.ones(2, dtype=np.bool_),
    )
    answered, winners, used = stack_transcripts(
        [short, long], batch=1, projection_dim=2
    )
    assert answered.shape == (2, 2, 1, 2)
    assert used.tolist() == [[True, False], [True, True]]
    assert (winners[0, 1] == -1).all()


def test_module_doctests() -> None:
    import doctest

    from dpaudit.generators.g_pate import canary_privacy, transcript

    for module in (transcript, canary_privacy):
        assert doctest.testmod(module).failed == 0
