"""Batched sampling: ``sample_many`` releases what each model's own ``sample`` does."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpaudit.data import Column, Domain
from dpaudit.errors import InvalidParameterError, NotFittedError
from dpaudit.generators.g_pate import GPate, GPateConfig
from dpaudit.generators.pate_gan import PateGan, PateGanConfig
from dpaudit.rng import Rngs

DOMAIN = Domain((
    Column(name="age", kind="integer", lower=18, upper=90),
    Column(name="income", kind="continuous", lower=0.0, upper=100.0),
    Column(name="smoker", kind="binary"),
    Column(name="region", kind="categorical", categories=("north", "south", "west")),
))


def table(n: int, seed: int) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": gen.integers(20, 80, n).astype(np.int64),
        "income": gen.uniform(10.0, 60.0, n),
        "smoker": gen.integers(0, 2, n).astype(np.int64),
        "region": gen.choice(["north", "south", "west"], n).astype(object),
    })


def pategan(**kw: object) -> PateGan:
    return PateGan(PateGanConfig(**{"device": "cpu", "max_iterations": 3, "batch_size": 16,
                                    "num_teachers": 3, "epsilon": 5.0, **kw}))


def gpate(**kw: object) -> GPate:
    return GPate(GPateConfig(**{"epsilon": 20.0, "delta": 1e-5, "num_teachers": 10,
                                "batch_size": 8, "sigma1": 20.0, "sigma2": 10.0,
                                "projection_dim": 2, "max_iterations": 3, "device": "cpu",
                                **kw}))


def per_model(models: list, n: int, rngs: list[Rngs], public: list[Rngs] | None
              ) -> pd.DataFrame:
    frames = [m.sample(n, rng=r, public_rng=None if public is None else public[i])
              for i, (m, r) in enumerate(zip(models, rngs))]
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("options", [
    {},
    {"variant": None, "real_category_frequencies": True, "integer_floor": True},
    {"output_not_rescaled": True},
    {"latent_mismatch": True, "label_column": "smoker", "label_distribution_given": True},
])
@pytest.mark.parametrize("shared_public", [False, True])
def test_pategan_sample_many_equals_per_model_sample(options: dict[str, object],
                                                     shared_public: bool) -> None:
    data = [table(60, s) for s in range(5)]
    fit_rngs = Rngs.from_seed(1).spawn(5)
    models = pategan(**options).fit_many(data, domain=DOMAIN, rngs=fit_rngs)
    rngs = Rngs.from_seed(2).spawn(5)
    public = [Rngs.from_seed(3)] * 5 if shared_public else None
    batched = PateGan.sample_many(models, 40, rngs=rngs, public_rngs=public)
    expected = per_model(models, 40, rngs, public)
    pd.testing.assert_frame_equal(batched, expected)
    # Not every model released the same rows (the comparison can fail).
    assert not batched.iloc[:40].reset_index(drop=True).equals(
        batched.iloc[40:80].reset_index(drop=True))
    # A sub-batch, out of order, from two fits: still each model's own release.
    other = pategan(**options).fit(data[0], domain=DOMAIN, rng=fit_rngs[0])
    mixed = [models[3], other, models[1]]
    mixed_rngs = [rngs[3], rngs[0], rngs[1]]
    mixed_public = None if public is None else public[:3]
    pd.testing.assert_frame_equal(
        PateGan.sample_many(mixed, 40, rngs=mixed_rngs, public_rngs=mixed_public),
        per_model(mixed, 40, mixed_rngs, mixed_public))


def test_pategan_sample_many_reuses_no_stream_state() -> None:
    """The release-time draws come from the stream's seed, not from what the Rngs
    object drew before: sampling twice with one Rngs object gives the same rows."""
    model = pategan(real_category_frequencies=True).fit(
        table(60, 0), domain=DOMAIN, rng=Rngs.from_seed(0))
    public = Rngs.from_seed(5)
    first = model.sample(30, rng=Rngs.from_seed(1), public_rng=public)
    pd.testing.assert_frame_equal(first, model.sample(30, rng=Rngs.from_seed(1),
                                                      public_rng=public))


@pytest.mark.parametrize("options", [{}, {"label_column": "region"}])
def test_gpate_sample_many_equals_per_model_sample(options: dict[str, object]) -> None:
    data = [table(120, s) for s in range(3)]
    models = gpate(**options).fit_many(data, domain=DOMAIN, rngs=Rngs.from_seed(4).spawn(3))
    rngs = Rngs.from_seed(6).spawn(3)
    for public in (None, [Rngs.from_seed(7)] * 3):
        batched = GPate.sample_many(models, 25, rngs=rngs, public_rngs=public)
        pd.testing.assert_frame_equal(batched, per_model(models, 25, rngs, public))
    assert not batched.iloc[:25].reset_index(drop=True).equals(
        batched.iloc[25:50].reset_index(drop=True))


def test_pategan_sample_many_decodes_each_domain_of_the_data_bounds_defect() -> None:
    full = table(60, 5)
    no_west = full[full["region"] != "west"].reset_index(drop=True)
    models = pategan(data_bounds=True).fit_many([full, no_west, no_west, full],
                                                domain=DOMAIN,
                                                rngs=Rngs.from_seed(0).spawn(4))
    rngs = Rngs.from_seed(1).spawn(4)
    batched = PateGan.sample_many(models, 30, rngs=rngs)
    pd.testing.assert_frame_equal(batched, per_model(models, 30, rngs, None))
    assert set(batched["region"].iloc[30:90]) <= {"north", "south"}


def test_gpate_sample_many_decodes_each_domain_of_the_data_bounds_defect() -> None:
    full = table(120, 5)
    no_west = full[full["region"] != "west"].reset_index(drop=True)
    models = gpate(data_bounds=True).fit_many([full, no_west, full], domain=DOMAIN,
                                              rngs=Rngs.from_seed(0).spawn(3))
    rngs = Rngs.from_seed(1).spawn(3)
    batched = GPate.sample_many(models, 50, rngs=rngs)
    pd.testing.assert_frame_equal(batched, per_model(models, 50, rngs, None))


def test_sample_many_checks_its_input() -> None:
    model = pategan().fit(table(60, 0), domain=DOMAIN, rng=Rngs.from_seed(0))
    with pytest.raises(InvalidParameterError, match="`rngs` must be one stream per model"):
        PateGan.sample_many([model, model], 5, rngs=[Rngs.from_seed(1)])
    with pytest.raises(InvalidParameterError, match="`models` must be at least one"):
        PateGan.sample_many([], 5, rngs=[])
    with pytest.raises(NotFittedError):
        PateGan.sample_many([pategan()], 5, rngs=[Rngs.from_seed(1)])
    with pytest.raises(InvalidParameterError, match="one configuration"):
        PateGan.sample_many([model, pategan(lr=1e-3).fit(table(60, 0), domain=DOMAIN,
                                                         rng=Rngs.from_seed(0))],
                            5, rngs=Rngs.from_seed(1).spawn(2))
    with pytest.raises(NotFittedError):
        GPate.sample_many([gpate()], 5, rngs=[Rngs.from_seed(1)])
