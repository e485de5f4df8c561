"""Contracts 1 and 2 of the generator protocol, over every built-in of the registry.

1. ``fit``/``sample`` take an optional public stream; with ``public_rng=None`` both
   streams come from ``rng`` through :func:`dpaudit.rng.public_and_privacy`, so passing
   those two streams explicitly gives the same model and the same release.
2. ``fit_many`` over M models gives exactly the models of M single ``fit`` calls with
   the same streams (a model depends only on its own streams, never on batch mates).
"""

from __future__ import annotations

import pandas as pd
import pytest

from dpaudit.generators.registry import builtin_generators, generator_factory, get_spec
from dpaudit.rng import Rngs, public_and_privacy
from dpaudit.worst_case.datasets import (
    neighbouring_pair,
    worst_case_dataset,
    worst_case_target,
)

FAST = {"max_iterations": 2, "num_teachers": 2, "device": "cpu"}
BUILTINS = sorted(builtin_generators())
BATCHED = [name for name in BUILTINS if get_spec(name).batched]


def claim(generator) -> dict:
    """The claim's JSON without its wall time (the only field allowed to differ)."""
    out = generator.privacy_claim_.to_json()
    out["trace"].pop("wall_seconds", None)
    return out


def make(name: str):
    options = FAST if get_spec(name).devices else {}
    return generator_factory(name)(epsilon=1.0, delta=1e-5, **options)


@pytest.fixture(scope="module")
def data():
    ds = worst_case_dataset()
    without, with_target = neighbouring_pair(
        ds.train, worst_case_target(ds.domain), domain=ds.domain
    )
    return ds.domain, without, with_target


@pytest.mark.parametrize("name", BUILTINS)
def test_public_stream_split(name: str, data) -> None:
    domain, _, table = data
    rng, sample_rng = Rngs.from_seed(5), Rngs.from_seed(6)
    implicit = make(name).fit(table, domain=domain, rng=rng)
    public, privacy = public_and_privacy(rng)
    explicit = make(name).fit(table, domain=domain, rng=privacy, public_rng=public)
    pub_s, priv_s = public_and_privacy(sample_rng)
    pd.testing.assert_frame_equal(
        implicit.sample(50, rng=sample_rng),
        explicit.sample(50, rng=priv_s, public_rng=pub_s),
    )
    assert claim(implicit) == claim(explicit)


@pytest.mark.parametrize("fixed_public", [False, True])
@pytest.mark.parametrize("name", BATCHED)
def test_fit_many_equals_single_fits(name: str, fixed_public: bool, data) -> None:
    domain, without, with_target = data
    datasets = [without, with_target, with_target]
    rngs = Rngs.from_seed(9).spawn(3)
    publics = [Rngs.from_seed(10)] * 3 if fixed_public else None
    batch = make(name).fit_many(datasets, domain=domain, rngs=rngs, public_rngs=publics)
    assert len(batch) == 3
    for m, (table, rng) in enumerate(zip(datasets, rngs)):
        single = make(name).fit(
            table,
            domain=domain,
            rng=rng,
            public_rng=None if publics is None else publics[m],
        )
        sample_rng = Rngs.from_seed(100 + m)
        pd.testing.assert_frame_equal(
            batch[m].sample(40, rng=sample_rng), single.sample(40, rng=sample_rng)
        )
        assert claim(batch[m]) == claim(single)
