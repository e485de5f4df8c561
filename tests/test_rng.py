"""Seeding: one root seed, idempotent spawning, independent streams."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from scipy import stats

from dpaudit.errors import InvalidParameterError
from dpaudit.rng import ParallelDraws, Rngs


def test_spawn_is_idempotent_and_matches_seedsequence() -> None:
    root = Rngs.from_seed(7)
    first = [r.int_seed() for r in root.spawn(4)]
    assert first == [r.int_seed() for r in root.spawn(4)]
    expected = np.random.SeedSequence(7).spawn(4)
    assert [r.spawn_key for r in root.spawn(4)] == [tuple(s.spawn_key) for s in expected]
    assert len(set(first)) == 4
    assert first != [r.int_seed() for r in Rngs.from_seed(8).spawn(4)]


def test_torch_generator_reproducible() -> None:
    rng = Rngs.from_seed(3)
    a = rng.torch().seed()
    assert rng.torch().initial_seed() == rng.torch().initial_seed()
    assert a is not None


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_bad_seed(bad) -> None:
    with pytest.raises(InvalidParameterError, match="`seed` must be a non-negative integer"):
        Rngs.from_seed(bad)


def _draws(seed: int, **kw: int) -> ParallelDraws:
    return ParallelDraws(torch.Generator().manual_seed(seed), **kw)


@pytest.mark.parametrize("kind", ["rand", "randn"])
def test_parallel_draws_deterministic_on_any_thread_count(kind: str) -> None:
    """Same generator state, same draws, whether the chunks fill on 1 or 2 threads; a
    different seed differs."""
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = getattr(_draws(5), kind)((300, 700))
        torch.set_num_threads(2)
        two = getattr(_draws(5), kind)((300, 700))
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(one, two)
    assert not torch.equal(one, getattr(_draws(6), kind)((300, 700)))
    small = _draws(5)
    assert torch.equal(getattr(small, kind)((3, 4)), getattr(_draws(5), kind)((3, 4)))


def test_parallel_draws_distributions() -> None:
    """Kolmogorov-Smirnov tests of 210,000 draws (large enough to be cut into chunks
    from separate generators) against U[0, 1) and N(0, 1), and of chunk 0 against 1
    and 2 against 3 (two-sample): each test fails a correct sampler with probability 1e-6
    (6 tests: at most 6e-6 in all)."""
    draws = _draws(11)
    u = draws.rand((210_000,)).double().numpy()
    z = draws.randn((210_000,)).double().numpy()
    assert u.min() >= 0.0 and u.max() < 1.0
    assert stats.kstest(u, "uniform").pvalue > 1e-6
    assert stats.kstest(z, "norm").pvalue > 1e-6
    for x in (u, z):
        chunks = np.array_split(x, ParallelDraws.STREAMS)
        for a, b in itertools.pairwise(chunks):
            assert not np.array_equal(a[:100], b[:100])  # distinct streams
        assert stats.ks_2samp(chunks[0], chunks[1]).pvalue > 1e-6
        assert stats.ks_2samp(chunks[2], chunks[3]).pvalue > 1e-6
