"""G-PATE's two random streams: only Confident-GNMax's noise is private.

With one public stream for both worlds, fits on ``D`` and ``D u {target}`` start
from the same weights, assign the common records to the same teachers and draw the
same latents, classes and projections; a fresh privacy stream changes the threshold
and vote noise only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from dpaudit.data import Column, Domain
from dpaudit.generators.g_pate import GPate, GPateConfig
from dpaudit.generators.g_pate.layout import Layout
from dpaudit.generators.g_pate.trainer import Trainer
from dpaudit.rng import Rngs

CFG = GPateConfig(
    epsilon=20.0,
    delta=1e-5,
    num_teachers=4,
    batch_size=6,
    sigma1=20.0,
    sigma2=10.0,
    projection_dim=2,
    max_iterations=8,
    device="cpu",
    label_column="y",
)


def domain() -> Domain:
    return Domain(
        (
            Column(name="a", kind="continuous", lower=0.0, upper=10.0),
            Column(name="b", kind="binary"),
            Column(name="y", kind="categorical", categories=("p", "q", "r")),
        )
    )


def table(n: int, seed: int) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "a": gen.uniform(0, 10, n),
            "b": gen.integers(0, 2, n),
            "y": gen.choice(["p", "q", "r"], n).astype(object),
        }
    )


DATA = table(40, 0)
PLUS = pd.concat([DATA, table(1, 99)], ignore_index=True)


def trainer(data: pd.DataFrame, *, public: Rngs, privacy: Rngs) -> Trainer:
    dom = domain()
    return Trainer(
        CFG,
        [Layout.build(dom, CFG)],
        [dom.encode(data)],
        [(public, privacy)],
        torch.device("cpu"),
    )


def state(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in module.state_dict().items()}


def test_same_public_stream_fixes_weights_partitions_latents_and_projections() -> None:
    public = Rngs.from_seed(5)
    a = trainer(DATA, public=public, privacy=Rngs.from_seed(1))
    b = trainer(PLUS, public=public, privacy=Rngs.from_seed(2))
    for left, right in ((a.teachers, b.teachers), (a.generators, b.generators)):
        sa, sb = state(left), state(right)
        assert sa.keys() == sb.keys()
        for key in sa:
            torch.testing.assert_close(sa[key], sb[key], rtol=0, atol=0)
    (ta, ka), (tb, kb) = a.assignments[0], b.assignments[0]
    np.testing.assert_array_equal(tb[: len(DATA)], ta)
    np.testing.assert_array_equal(kb[: len(DATA)], ka)
    differs = False
    for t in range(3):
        da, db = a.draws(t), b.draws(t)
        for name in ("z_teacher", "z_generator", "projection", "uniforms"):
            x, y = getattr(da, name), getattr(db, name)
            assert x is not None and y is not None
            torch.testing.assert_close(x, y, rtol=0, atol=0)
        # Independent privacy streams: the noise differs (equal with probability 0).
        differs |= not torch.equal(da.threshold_noise, db.threshold_noise)
        assert not torch.equal(da.vote_noise, db.vote_noise)
    assert differs


def test_the_privacy_stream_feeds_only_the_noise() -> None:
    """Same privacy stream, different public streams: the noise is equal, the
    public draws are not."""
    a = trainer(DATA, public=Rngs.from_seed(5), privacy=Rngs.from_seed(1))
    b = trainer(DATA, public=Rngs.from_seed(6), privacy=Rngs.from_seed(1))
    da, db = a.draws(0), b.draws(0)
    torch.testing.assert_close(da.threshold_noise, db.threshold_noise, rtol=0, atol=0)
    torch.testing.assert_close(da.vote_noise, db.vote_noise, rtol=0, atol=0)
    assert not torch.equal(da.z_generator, db.z_generator)
    assert not torch.equal(da.projection, db.projection)


def test_fit_with_a_fixed_public_stream_varies_only_by_the_privacy_noise() -> None:
    """Two fits with one public stream and different privacy streams: different
    votes answered (the noise differs), same release sampling for a fixed public
    stream in ``sample``."""
    dom = domain()
    public = Rngs.from_seed(5)
    one = GPate(CFG).fit(DATA, domain=dom, rng=Rngs.from_seed(1), public_rng=public)
    again = GPate(CFG).fit(DATA, domain=dom, rng=Rngs.from_seed(1), public_rng=public)
    two = GPate(CFG).fit(DATA, domain=dom, rng=Rngs.from_seed(2), public_rng=public)
    assert one.privacy_claim_.iterations > 0
    assert one.privacy_claim_ == again.privacy_claim_
    assert one.privacy_claim_.trace["answered"] != two.privacy_claim_.trace["answered"]
    pd.testing.assert_frame_equal(
        one.sample(30, rng=Rngs.from_seed(7), public_rng=Rngs.from_seed(8)),
        one.sample(30, rng=Rngs.from_seed(9), public_rng=Rngs.from_seed(8)),
    )
    assert not one.sample(30, rng=Rngs.from_seed(7)).equals(
        one.sample(30, rng=Rngs.from_seed(9))
    )


def test_fit_many_with_public_streams_equals_single_fits() -> None:
    """Contract 2 with the game's fixed public stream: the models of ``fit_many``
    over both worlds equal single fits (same claims; weights up to float32 rounding,
    see test_g_pate.py)."""
    dom = domain()
    public = Rngs.from_seed(5)
    privacy = Rngs.from_seed(11).spawn(3)
    datasets = [DATA, PLUS, DATA]
    batched = GPate(CFG).fit_many(
        datasets, domain=dom, rngs=privacy, public_rngs=[public] * 3
    )
    for data, rng, model in zip(datasets, privacy, batched):
        alone = GPate(CFG).fit(data, domain=dom, rng=rng, public_rng=public)
        assert model.privacy_claim_ == alone.privacy_claim_
        assert model._fitted is not None and alone._fitted is not None
        for p, q in zip(
            model._fitted.generator.parameters(), alone._fitted.generator.parameters()
        ):
            torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)


def test_public_streams_are_checked() -> None:
    from dpaudit.errors import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="one stream per dataset"):
        GPate(CFG).fit_many(
            [DATA, DATA],
            domain=domain(),
            rngs=Rngs.from_seed(0).spawn(2),
            public_rngs=[Rngs.from_seed(1)],
        )
    with pytest.raises(InvalidParameterError, match="`public_rng` must be"):
        GPate(CFG).fit(DATA, domain=domain(), rng=Rngs.from_seed(0), public_rng=7)  # type: ignore[arg-type]
    assert GPate.supports_public_randomness is True
