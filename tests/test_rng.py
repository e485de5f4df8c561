"""Seeding: one root seed, idempotent spawning, independent streams."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from scipy import stats

from dpaudit.errors import InvalidParameterError
from dpaudit.rng import ModelStreams, ParallelDraws, Rngs, public_and_privacy


def test_spawn_is_idempotent_and_matches_seedsequence() -> None:
    root = Rngs.from_seed(7)
    first = [r.int_seed() for r in root.spawn(4)]
    assert first == [r.int_seed() for r in root.spawn(4)]
    expected = np.random.SeedSequence(7).spawn(4)
    assert [r.spawn_key for r in root.spawn(4)] == [
        tuple(s.spawn_key) for s in expected
    ]
    assert len(set(first)) == 4
    assert first != [r.int_seed() for r in Rngs.from_seed(8).spawn(4)]


def test_torch_generator_reproducible() -> None:
    rng = Rngs.from_seed(3)
    a = rng.torch().seed()
    assert rng.torch().initial_seed() == rng.torch().initial_seed()
    assert a is not None


@pytest.mark.parametrize("bad", [-1, 1.5, "3", True])
def test_bad_seed(bad) -> None:
    with pytest.raises(
        InvalidParameterError, match="`seed` must be a non-negative integer"
    ):
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


# ----------------------------------------------------------- per-model streams


def _streams(seed: int, m: int) -> ModelStreams:
    return ModelStreams.from_rngs(Rngs.from_seed(seed).spawn(m))


def test_model_streams_depend_only_on_their_key() -> None:
    """A model's draws are the same whatever its batch mates, the batch size, its
    position, and the length of the draw (a longer draw extends a shorter one)."""
    rngs = Rngs.from_seed(3).spawn(5)
    big = ModelStreams.from_rngs(rngs)
    alone = ModelStreams.from_rngs([rngs[3]])
    mixed = ModelStreams.from_rngs([Rngs.from_seed(77), rngs[3]])
    for dtype in (torch.float32, torch.float64):
        a = big.rand((4, 9), dtype=dtype)
        b = alone.rand((4, 9), dtype=dtype)
        c = mixed.rand((37,), dtype=dtype)
        assert torch.equal(a[3], b[0])
        assert torch.equal(a[3].reshape(-1), c[1, :36])
        x = big.randn((11,), dtype=dtype)
        assert torch.equal(x[3], alone.randn((11,), dtype=dtype)[0])
        assert torch.equal(x[3, :7], mixed.randn((7,), dtype=dtype)[1])
    assert torch.equal(big.words(5)[3], alone.words(5)[0])
    assert big.select([3]).counter == big.counter
    assert torch.equal(big.select([3]).rand((6,)), alone.rand((6,)))


def test_model_streams_public_and_privacy_differ() -> None:
    pub, priv = public_and_privacy(Rngs.from_seed(4))
    s = ModelStreams.from_rngs([pub, priv])
    u = s.rand((50,))
    assert not torch.equal(u[0], u[1])


@pytest.mark.statistical
def test_model_streams_distributions() -> None:
    """Kolmogorov-Smirnov tests of 200,000 draws per kind against U[0, 1) (float32 and
    float64), N(0, 1) (both) and Laplace(0, 2): each fails a correct sampler with
    probability 1e-6 (5 tests: at most 5e-6 in all). Every bit of the 64-bit words is
    fair: the count of ones in 100,000 words is Binomial(100,000, 1/2), and a
    deviation beyond 6 standard deviations (about 2e-9 per bit, 64 bits: < 2e-7) fails
    it."""
    s = _streams(21, 2)
    u32 = s.rand((100_000,))
    assert float(u32.min()) >= 0.0 and float(u32.max()) < 1.0
    assert stats.kstest(u32.reshape(-1).double().numpy(), "uniform").pvalue > 1e-6
    u64 = s.rand((100_000,), dtype=torch.float64)
    assert stats.kstest(u64.reshape(-1).numpy(), "uniform").pvalue > 1e-6
    for dtype in (torch.float32, torch.float64):
        z = s.randn((100_000,), dtype=dtype).reshape(-1).double().numpy()
        assert stats.kstest(z, "norm").pvalue > 1e-6
    lap = s.laplace((100_000,), scale=2.0, dtype=torch.float64).reshape(-1).numpy()
    assert stats.kstest(lap, "laplace", args=(0.0, 2.0)).pvalue > 1e-6
    words = s.words(50_000).reshape(-1)
    shifts = torch.arange(64, dtype=torch.int64)
    ones = ((words[:, None] >> shifts) & 1).sum(dim=0).double()
    n = words.numel()
    assert float((ones - n / 2).abs().max()) < 6 * (n / 4) ** 0.5


@pytest.mark.statistical
def test_model_streams_independent_across_models_and_calls() -> None:
    """Normals of 4 models, and of two consecutive calls of one model: each Pearson
    correlation of 100,000 pairs is N(0, 1/n) under independence; |r| > 5.5/sqrt(n)
    has probability 4e-8 (7 pairs: < 3e-7). Two-sample KS between models fails with
    probability 1e-6 each (3 tests)."""
    s = _streams(8, 4)
    n = 100_000
    z = s.randn((n,), dtype=torch.float64).numpy()
    for a, b in itertools.combinations(range(4), 2):
        assert abs(np.corrcoef(z[a], z[b])[0, 1]) < 5.5 / n**0.5
    nxt = s.randn((n,), dtype=torch.float64).numpy()
    assert abs(np.corrcoef(z[0], nxt[0])[0, 1]) < 5.5 / n**0.5
    for a, b in ((0, 1), (1, 2), (2, 3)):
        assert stats.ks_2samp(z[a], z[b]).pvalue > 1e-6


def test_model_streams_bad_keys() -> None:
    with pytest.raises(
        InvalidParameterError, match="`keys` must be a 1-d int64 tensor"
    ):
        ModelStreams(torch.zeros(3))


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_model_streams_same_bits_on_cuda() -> None:
    """Integer arithmetic only: the words and the uniforms are identical on CUDA."""
    cpu, cuda = (
        _streams(5, 3),
        ModelStreams.from_rngs(Rngs.from_seed(5).spawn(3), device="cuda"),
    )
    assert torch.equal(cpu.words(1000), cuda.words(1000).cpu())
    assert torch.equal(cpu.rand((999,)), cuda.rand((999,)).cpu())
    torch.testing.assert_close(cpu.randn((999,)), cuda.randn((999,)).cpu())


# ------------------------------------------- the stream definition, in plain Python

_M64 = (1 << 64) - 1


def _ref_mix(z: int) -> int:
    z &= _M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
    return z ^ (z >> 31)


def _ref_words(key: int, call: int, n: int) -> list[int]:
    """Model ``key``'s words of call ``call``: splitmix64 started at
    ``mix(key ^ mix(call * gamma + c0))`` (unsigned 64-bit)."""
    gamma = 0x9E3779B97F4A7C15
    start = _ref_mix((key & _M64) ^ _ref_mix(call * gamma + 0x5851F42D4C957F2D))
    return [_ref_mix(start + (j + 1) * gamma) for j in range(n)]


def _ref_unit24(key: int, call: int, n: int) -> list[float]:
    out: list[float] = []
    for w in _ref_words(key, call, (n + 1) // 2):
        out += [(w >> 40) * 2.0**-24, ((w >> 8) & 0xFFFFFF) * 2.0**-24]
    return out[:n]


def test_model_streams_match_their_definition() -> None:
    """The vectorised streams give exactly the bits of the definition written out in
    Python integers (words; float32 uniforms: the high then the low 24 bits of each
    word; float64: the top 53 bits; odd lengths drop the last value), and the normals
    and Laplace draws are those formulas applied to these uniforms, bit for bit."""
    s = _streams(12, 3)
    keys = [int(k) for k in s.keys]
    calls = iter(range(100))

    def check_uniforms(n: int) -> None:
        got32 = s.rand((n,), dtype=torch.float32)
        c = next(calls)
        got64 = s.rand((n,), dtype=torch.float64)
        c64 = next(calls)
        for i, key in enumerate(keys):
            ref32 = torch.tensor(_ref_unit24(key, c, n), dtype=torch.float32)
            assert torch.equal(got32[i], ref32)
            ref64 = torch.tensor(
                [(w >> 11) * 2.0**-53 for w in _ref_words(key, c64, n)],
                dtype=torch.float64,
            )
            assert torch.equal(got64[i], ref64)

    words = s.words(7)
    next(calls)
    for i, key in enumerate(keys):
        ref = [w - (1 << 64) if w >> 63 else w for w in _ref_words(key, 0, 7)]
        assert words[i].tolist() == ref
    for n in (1, 2, 9, 64, 301):
        check_uniforms(n)
    # Box-Muller on 24-bit pairs (float32) and on 53-bit pairs (float64).
    n = 9
    z32 = s.randn((n,), dtype=torch.float32)
    c = next(calls)
    z64 = s.randn((n,), dtype=torch.float64)
    c64 = next(calls)
    for i, key in enumerate(keys):
        ws = _ref_words(key, c, (n + 1) // 2)
        u1 = torch.tensor([(w >> 40) * 2.0**-24 for w in ws], dtype=torch.float32)
        u2 = torch.tensor(
            [((w >> 8) & 0xFFFFFF) * 2.0**-24 for w in ws], dtype=torch.float32
        )
        r = torch.sqrt(torch.log(u1 + 2.0**-24) * -2.0)
        theta = u2 * (2.0 * math.pi)
        ref = torch.stack([r * torch.cos(theta), r * torch.sin(theta)], 1).reshape(-1)[
            :n
        ]
        assert torch.equal(z32[i], ref)
        ws = _ref_words(key, c64, 2 * ((n + 1) // 2))
        v1 = torch.tensor([(w >> 11) * 2.0**-53 for w in ws[0::2]], dtype=torch.float64)
        v2 = torch.tensor([(w >> 11) * 2.0**-53 for w in ws[1::2]], dtype=torch.float64)
        r64 = torch.sqrt(torch.log(v1 + 2.0**-53) * -2.0)
        t64 = v2 * (2.0 * math.pi)
        ref64 = torch.stack([r64 * torch.cos(t64), r64 * torch.sin(t64)], 1).reshape(
            -1
        )[:n]
        assert torch.equal(z64[i], ref64)
    # Laplace by inverse CDF, with a float and with a tensor scale.
    for dtype, eps in ((torch.float64, 1e-15), (torch.float32, 1e-7)):
        for scale in (0.37, torch.tensor(2.5, dtype=dtype)):
            lap = s.laplace((64,), scale=scale, dtype=dtype)
            c = next(calls)
            for i, key in enumerate(keys):
                if dtype == torch.float64:
                    u = torch.tensor(
                        [(w >> 11) * 2.0**-53 for w in _ref_words(key, c, 64)],
                        dtype=dtype,
                    )
                else:
                    u = torch.tensor(_ref_unit24(key, c, 64), dtype=dtype)
                u = (u - 0.5).clamp(-0.5 + eps, 0.5 - eps)
                ref = -scale * torch.sign(u) * torch.log1p(-2.0 * u.abs())
                assert torch.equal(lap[i], ref)
