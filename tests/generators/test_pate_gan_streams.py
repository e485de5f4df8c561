"""PATE-GAN's random streams: one per model, public vs privacy (docs/soundness.md).

A model depends only on its own streams: ``fit_many`` over M models gives exactly the
models of M single fits, whatever the batch mates or the batch size. With one fixed
public stream, two fits on D and D + {target} share initial weights, the teachers of
the common records and the latent draws; only the privacy noise comes from ``rng``.
"""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from dpaudit.generators.pate_gan import PateGan, PateGanConfig, config_from_options
from dpaudit.generators.pate_gan.teachers import noisy_labels
from dpaudit.generators.pate_gan.trainer import Trainer
from dpaudit.rng import Rngs
from dpaudit.worst_case.datasets import (
    neighbouring_pair,
    worst_case_dataset,
    worst_case_target,
)


@pytest.fixture(scope="module")
def worst():
    ds = worst_case_dataset()
    d0, d1 = neighbouring_pair(ds.train, worst_case_target(ds.domain), domain=ds.domain)
    return ds.domain, d0, d1


def _params(model: PateGan) -> list[torch.Tensor]:
    member = model.generator_
    return [p[member.index].detach().clone() for p in member.ensemble.parameters()]


def _assert_same_model(a: PateGan, b: PateGan, *, exact: bool = True) -> None:
    for pa, pb in zip(_params(a), _params(b), strict=True):
        if exact:
            assert torch.equal(pa, pb)
        else:
            torch.testing.assert_close(pa, pb, rtol=1e-4, atol=1e-6)
    if not exact:
        return
    ca, cb = a.privacy_claim_, b.privacy_claim_
    assert ca.epsilon == cb.epsilon and ca.iterations == cb.iterations
    assert ca.trace["ledger"] == cb.trace["ledger"]
    pd.testing.assert_frame_equal(
        a.sample(30, rng=Rngs.from_seed(9)), b.sample(30, rng=Rngs.from_seed(9))
    )


@pytest.mark.parametrize(
    ("variant", "exact"),
    [(None, True), ("original", True), ("synthcity", False), ("smartnoise", False)],
)
def test_fit_many_equals_single_fits(worst, variant, exact) -> None:
    """Every model of a batch of mixed tables (different lengths, hence padding)
    equals its single fit, and is unchanged when its batch mates or the batch size
    change.

    Bitwise for the reference and original. Every model draws exactly the same numbers
    in a batch as alone (its own streams); but CPU BLAS may block a batched matmul's
    reduction differently for another batch count or thread split (the wider
    networks of synthcity and smartnoise, dropout): there the parameters agree to
    float32 rounding (measured: at most 1e-8 after an iteration)."""
    domain, d0, d1 = worst
    cfg = config_from_options(
        epsilon=1.0,
        delta=1e-5,
        variant=variant,
        num_teachers=2,
        max_iterations=3,
        fixed_iterations=3,
        batch_size=16,
        device="cpu",
    )
    rngs = Rngs.from_seed(11).spawn(4)
    tables = [d0, d1, d1, d0]
    batch = PateGan(cfg).fit_many(tables, domain=domain, rngs=rngs)
    for table, rng, model in zip(tables, rngs, batch, strict=True):
        single = PateGan(cfg).fit(table, domain=domain, rng=rng)
        _assert_same_model(model, single, exact=exact)
    # Other batch mates, another batch size, another position.
    other = PateGan(cfg).fit_many(
        [d0, d1], domain=domain, rngs=[Rngs.from_seed(99), rngs[1]]
    )
    _assert_same_model(other[1], batch[1], exact=exact)


def test_public_stream_fixes_everything_but_the_noise(worst) -> None:
    """Same public stream, D vs D + {target}: identical initial weights, the same
    teacher for every common record and identical latents; the privacy noise differs
    between privacy streams and is the same for the same one."""
    domain, d0, d1 = worst
    cfg = PateGanConfig(device="cpu", num_teachers=2, max_iterations=2, batch_size=16)
    public = Rngs.from_seed(5)
    t0 = Trainer(cfg, domain, 2, [d0], [Rngs.from_seed(1)], [public])
    t1 = Trainer(cfg, domain, 2, [d1], [Rngs.from_seed(2)], [public])
    t0.build()
    t1.build()
    for net in ("generator", "student", "teachers"):
        for p0, p1 in zip(
            getattr(t0, net).parameters(), getattr(t1, net).parameters(), strict=True
        ):
            assert torch.equal(p0, p1)

    def teacher_of(t: Trainer) -> list[int]:
        n = int(t.batch.n_rows[0])
        owner = [-1] * n
        for j in range(t.k):
            s, size = int(t.start[0, j]), int(t.size[0, j])
            for row in t.perm[0, s : s + size].tolist():
                owner[row] = j
        return owner

    assert teacher_of(t1)[: len(d0)] == teacher_of(t0)
    assert torch.equal(t0.latent(50), t1.latent(50))
    # Privacy noise: another privacy stream, other noisy labels on the same votes.
    n1 = torch.ones(1, 2000, dtype=torch.long)
    again = Trainer(cfg, domain, 2, [d0], [Rngs.from_seed(1)], [public])
    assert torch.equal(noisy_labels(t0, n1), noisy_labels(again, n1))
    assert not torch.equal(noisy_labels(t0, n1), noisy_labels(t1, n1))


def test_fixed_public_stream_fits_and_releases(worst) -> None:
    """With the same public and privacy streams a fit is reproduced exactly; with the
    same public stream and another privacy stream the models differ (the vote noise
    reaches the student and the generator)."""
    domain, d0, _ = worst
    # Wide hidden layers: the default "d,d/2,d" has a one-unit layer on 3 columns,
    # which a ReLU can leave dead (no gradient at all) for some public seeds.
    cfg = PateGanConfig(
        device="cpu",
        num_teachers=2,
        max_iterations=3,
        batch_size=16,
        epsilon=1e9,
        generator_hidden="8,8",
        student_hidden="8",
    )
    public = Rngs.from_seed(3)
    a = PateGan(cfg).fit(d0, domain=domain, rng=Rngs.from_seed(1), public_rng=public)
    b = PateGan(cfg).fit(d0, domain=domain, rng=Rngs.from_seed(1), public_rng=public)
    c = PateGan(cfg).fit(d0, domain=domain, rng=Rngs.from_seed(2), public_rng=public)
    _assert_same_model(a, b)
    assert any(
        not torch.equal(x, y) for x, y in zip(_params(a), _params(c), strict=True)
    )
    release = a.sample(20, rng=Rngs.from_seed(7), public_rng=Rngs.from_seed(8))
    pd.testing.assert_frame_equal(
        release, a.sample(20, rng=Rngs.from_seed(6), public_rng=Rngs.from_seed(8))
    )
    assert PateGan.supports_public_randomness is True
