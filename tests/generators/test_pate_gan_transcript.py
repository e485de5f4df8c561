"""PATE-GAN's transcript (every noisy vote) and its replay in both worlds."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from dpaudit.attacks.likelihood_ratio import LikelihoodRatioAttack
from dpaudit.audit.config.model import AuditConfig
from dpaudit.audit.games.setup import AuditSetup, build_setup
from dpaudit.generators.pate_gan import PateGan
from dpaudit.generators.pate_gan.transcript import (
    Recorder,
    VoteTranscript,
    log_probability,
)
from dpaudit.rng import Rngs

#: Teachers that learn fast enough for some votes to differ between the worlds
#: within a few iterations (every teacher holds the last partition).
SENSITIVE = {
    "max_iterations": 6,
    "lr": 0.05,
    "partition_last_only": True,
    "device": "cpu",
}


def _setup(options: dict[str, object]) -> AuditSetup:
    return build_setup(
        AuditConfig(
            dataset="worst-case-continuous",
            rounds=5,
            epsilon=4.0,
            device="cpu",
            generator_options=options,
        )
    )


def _train(
    setup: AuditSetup, r: int
) -> tuple[PateGan, list[pd.DataFrame], list[PateGan], Recorder]:
    gen = setup.make_generator()
    assert isinstance(gen, PateGan)
    datasets = [setup.with_target if i % 2 else setup.without for i in range(r)]
    public = setup.public_streams()
    assert public is not None
    trainer = gen._trainer(
        datasets,
        domain=setup.domain,
        rngs=Rngs.from_seed(3).spawn(r),
        public_rngs=[public[0]] * r,
    )
    trainer.recorder = Recorder(keep_votes=True)
    models = gen._models(trainer.run())
    return gen, datasets, models, trainer.recorder


def test_recording_the_transcript_changes_no_model() -> None:
    setup = _setup(SENSITIVE)
    gen = setup.make_generator()
    assert isinstance(gen, PateGan)
    public = setup.public_streams()
    assert public is not None
    datasets = [setup.without, setup.with_target]
    kwargs = {
        "domain": setup.domain,
        "rngs": Rngs.from_seed(3).spawn(2),
        "public_rngs": [public[0]] * 2,
    }
    plain = gen.fit_many(datasets, **kwargs)  # type: ignore[arg-type]
    recorded, transcripts = gen.fit_many_with_transcripts(datasets, **kwargs)  # type: ignore[arg-type]
    for a, b in zip(plain, recorded):
        ca, cb = a.privacy_claim_.to_json(), b.privacy_claim_.to_json()
        for claim in (ca, cb):
            claim["trace"].pop("wall_seconds")  # how long it ran
        assert ca == cb
        for pa, pb in zip(a.generator_.parameters(), b.generator_.parameters()):
            assert torch.equal(pa, pb)
    for t, model in zip(transcripts, recorded):
        assert t.labels.shape[1] == gen.config.batch_size
        assert t.used.all()
        assert t.queries == int(sum(model.privacy_claim_.trace["ledger"]["gap_counts"]))


def test_the_replay_in_the_true_world_reproduces_the_run() -> None:
    """Replayed with its own transcript in its own world, a run has the same clean
    votes (the log-likelihood of its transcript from the recorded votes) and no
    contradiction; in the other world the votes differ (the log-likelihood ratio is
    not 0), so the statistic sees the target."""
    setup = _setup(SENSITIVE)
    r = 4
    gen, datasets, _, recorder = _train(setup, r)
    transcripts = recorder.transcripts()
    votes = torch.stack(recorder.votes, dim=1)  # [M, S, B]
    labels = torch.stack(recorder.labels, dim=1)
    used = torch.stack(recorder.used, dim=1)
    beta, k = 1.0 / gen.config.lam, 2
    expected = (
        log_probability(votes, labels, k=k, beta=beta, single_draw=False).sum(2) * used
    ).sum(1)
    public = setup.public_streams()
    assert public is not None
    ll, impossible = gen.replay_log_likelihoods(
        datasets, transcripts, domain=setup.domain, public_rngs=[public[0]] * r
    )
    assert not impossible.any()
    np.testing.assert_allclose(ll, expected.numpy(), rtol=0, atol=1e-9)
    attack = LikelihoodRatioAttack(
        generator=gen,
        domain=setup.domain,
        without=setup.without,
        with_target=setup.with_target,
        public_rng=public[0],
    )
    features = attack.featurize_transcripts(transcripts)
    assert features.shape == (r, 3)
    assert np.all(np.isfinite(features))
    assert np.any(features[:, 0] != 0.0)
    np.testing.assert_allclose(features[:, 0], features[:, 1] - features[:, 2])


def test_a_transcript_the_world_cannot_produce_is_impossible() -> None:
    """A transcript with more answered steps than the accountant allows (or
    fewer) has likelihood 0 in that world."""
    setup = _setup(SENSITIVE)
    gen, datasets, _, recorder = _train(setup, 2)
    (t, _) = recorder.transcripts()
    longer = VoteTranscript(
        labels=np.concatenate([t.labels, t.labels[:1]]),
        used=np.concatenate([t.used, [True]]),
    )
    shorter = VoteTranscript(labels=t.labels[:-1], used=t.used[:-1])
    public = setup.public_streams()
    assert public is not None
    _, impossible = gen.replay_log_likelihoods(
        [datasets[0]] * 3,
        [t, longer, shorter],
        domain=setup.domain,
        public_rngs=[public[0]] * 3,
    )
    assert impossible.tolist() == [False, True, True]


@pytest.mark.parametrize("single_draw", [False, True])
def test_the_vote_probabilities_sum_to_one(single_draw: bool) -> None:
    n1 = torch.arange(0, 5).repeat(2)
    labels = torch.tensor([True] * 5 + [False] * 5)
    lp = log_probability(n1, labels, k=4, beta=0.7, single_draw=single_draw)
    total = lp[:5].exp() + lp[5:].exp()
    np.testing.assert_allclose(total.numpy(), 1.0, atol=1e-12)
    # Far in the tail the log stays finite (no underflow to -inf).
    far = log_probability(
        torch.tensor([0]), torch.tensor([True]), k=4, beta=1e-3, single_draw=False
    )
    assert math.isfinite(float(far)) and float(far) < -1000
