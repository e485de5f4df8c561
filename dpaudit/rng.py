"""Seeding: one root seed, spawned streams, explicit generators.

Library code never touches global random state. Every function that draws random
numbers takes ``rng: Rngs`` as a keyword argument; the audit derives every round's
stream from one root seed with :meth:`Rngs.spawn` (NumPy ``SeedSequence`` spawning).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch
from torch import Tensor

from dpaudit.errors import InvalidParameterError


@dataclass(frozen=True)
class Rngs:
    """A NumPy generator and the seed sequence it came from.

    Torch generators are made on demand, on the device whose tensors they draw, from
    the same seed sequence (:meth:`torch`), so a CPU and a CUDA run of the same code
    draw from streams with the same seed.
    """

    seed_sequence: np.random.SeedSequence
    numpy: np.random.Generator = field(repr=False)

    @classmethod
    def from_seed(cls, seed: int | np.random.SeedSequence) -> Rngs:
        """Builds the streams of a root seed (a non-negative int or a SeedSequence)."""
        if isinstance(seed, np.random.SeedSequence):
            seq = seed
        elif (
            isinstance(seed, int | np.integer)
            and not isinstance(seed, bool)
            and seed >= 0
        ):
            seq = np.random.SeedSequence(int(seed))
        else:
            raise InvalidParameterError(
                f"`seed` must be a non-negative integer. Got {seed!r}."
            )
        return cls(seed_sequence=seq, numpy=np.random.default_rng(seq))

    def spawn(self, n: int) -> list[Rngs]:
        """Returns ``n`` independent child streams, deterministic in the parent seed.

        Unlike ``SeedSequence.spawn``, this is idempotent: every call returns the same
        children (those the first ``SeedSequence.spawn(n)`` would), so a stream that is
        spawned twice (a cached plan, a resumed audit) never drifts.
        """
        seq = self.seed_sequence
        return [
            Rngs.from_seed(
                np.random.SeedSequence(
                    seq.entropy, spawn_key=(*seq.spawn_key, i), pool_size=seq.pool_size
                )
            )
            for i in range(n)
        ]

    def torch(self, device: torch.device | str = "cpu") -> torch.Generator:
        """A fresh torch generator on ``device`` seeded from this stream's seed."""
        gen = torch.Generator(device=torch.device(device))
        gen.manual_seed(self.int_seed())
        return gen

    def int_seed(self) -> int:
        """A 63-bit integer derived from the seed sequence (for plug-ins taking ints)."""
        state = self.seed_sequence.generate_state(2, dtype=np.uint32)
        return (int(state[0]) << 31) ^ int(state[1])

    @property
    def entropy(self) -> int | None:
        """The root entropy, recorded in results so a run can be repeated."""
        ent = self.seed_sequence.entropy
        return int(ent) if isinstance(ent, int) else None

    @property
    def spawn_key(self) -> tuple[int, ...]:
        """Where this stream sits in the spawn tree of its root seed."""
        return tuple(int(k) for k in self.seed_sequence.spawn_key)


# Worker threads of `ParallelDraws`, shared by every trainer of the process. How many
# there are changes only the speed: each chunk always has its own generator.
_POOL: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(
            max_workers=ParallelDraws.STREAMS, thread_name_prefix="dpaudit-rng"
        )
    return _POOL


class ParallelDraws:
    """Uniform and normal draws for large CPU tensors, filled by several threads.

    PyTorch's CPU generator (MT19937) fills a tensor on one thread, about 2 ns a
    number: at hundreds of batched models the latent noise alone took 10% of a
    training iteration. Here a large tensor is cut into :attr:`STREAMS` contiguous
    chunks, each filled from its own generator, in parallel when torch may use more
    than one thread. The child generators are seeded from ``gen`` when this object is
    made, so the draws are a deterministic function of ``gen``'s state and the shapes
    requested, on any number of threads. Small tensors (below ``min_numel``) and CUDA
    tensors are drawn from ``gen`` itself.
    """

    STREAMS = 4

    def __init__(self, gen: torch.Generator, *, min_numel: int = 1 << 16) -> None:
        self.gen = gen
        self.device = gen.device
        self.min_numel = min_numel
        seeds = torch.randint(
            0, 2**62, (self.STREAMS,), generator=gen, device=self.device
        ).tolist()
        self.children = [
            torch.Generator(device=self.device).manual_seed(int(s)) for s in seeds
        ]

    def rand(self, shape: Sequence[int]) -> torch.Tensor:
        """Uniform on ``[0, 1)``, like ``torch.rand(shape, generator=gen)``."""
        return self._fill(torch.empty(tuple(shape), device=self.device), "uniform")

    def randn(self, shape: Sequence[int]) -> torch.Tensor:
        """Standard normal, like ``torch.randn(shape, generator=gen)``."""
        return self._fill(torch.empty(tuple(shape), device=self.device), "normal")

    def _fill(
        self, out: torch.Tensor, kind: Literal["uniform", "normal"]
    ) -> torch.Tensor:
        def fill(chunk: torch.Tensor, gen: torch.Generator) -> None:
            if kind == "uniform":
                chunk.uniform_(generator=gen)
            else:
                chunk.normal_(generator=gen)

        if self.device.type != "cpu" or out.numel() < self.min_numel:
            fill(out, self.gen)
            return out
        chunks = out.view(-1).tensor_split(self.STREAMS)
        if torch.get_num_threads() == 1:
            for chunk, gen in zip(chunks, self.children):
                fill(chunk, gen)
        else:
            # torch releases the GIL inside the kernels: the chunks fill concurrently.
            list(_pool().map(fill, chunks, self.children))
        return out


def public_and_privacy(rng: Rngs, public_rng: Rngs | None = None) -> tuple[Rngs, Rngs]:
    """The two streams a built-in generator draws from: ``(public, privacy)``.

    ``privacy`` feeds only the noise the generator's privacy proof relies on (PATE-GAN's
    Laplace vote noise, G-PATE's threshold and GNMax noise, a variant's label noise);
    ``public`` feeds everything else (initial weights, teacher assignment, batches,
    latents, projections, the release's sampling). The audit may pass one fixed
    ``public_rng`` for every round and both worlds (DESIGN rule 7, docs/soundness.md);
    without one, both streams are children of ``rng`` (every draw fresh per round).

    >>> r = Rngs.from_seed(0)
    >>> pub, priv = public_and_privacy(r)
    >>> pub.spawn_key, priv.spawn_key
    ((0,), (1,))
    >>> public_and_privacy(r, Rngs.from_seed(7))[0].entropy
    7
    """
    if public_rng is None:
        public, privacy = rng.spawn(2)
        return public, privacy
    return public_rng, rng


# --------------------------------------------------------------------------------
# Counter-based streams, one per model, vectorised over the model axis.

_MASK64 = (1 << 64) - 1


def _signed64(x: int) -> int:
    x &= _MASK64
    return x - (1 << 64) if x >= 1 << 63 else x


_GAMMA = 0x9E3779B97F4A7C15  # splitmix64's Weyl increment (odd)
_MUL1 = 0xBF58476D1CE4E5B9
_MUL2 = 0x94D049BB133111EB


def _mix_int(z: int) -> int:
    """splitmix64's finaliser on a Python int (unsigned 64-bit arithmetic)."""
    z &= _MASK64
    z = ((z ^ (z >> 30)) * _MUL1) & _MASK64
    z = ((z ^ (z >> 27)) * _MUL2) & _MASK64
    return z ^ (z >> 31)


def _mix_(z: Tensor) -> Tensor:
    """splitmix64's finaliser, in place, on an int64 tensor holding unsigned 64-bit
    words (two's complement: multiplication wraps; right shifts are made logical by
    masking off the copied sign bits)."""
    z.bitwise_xor_(z.bitwise_right_shift(30).bitwise_and_((1 << 34) - 1))
    z.mul_(_signed64(_MUL1))
    z.bitwise_xor_(z.bitwise_right_shift(27).bitwise_and_((1 << 37) - 1))
    z.mul_(_signed64(_MUL2))
    z.bitwise_xor_(z.bitwise_right_shift(31).bitwise_and_((1 << 33) - 1))
    return z


_STEPS: dict[tuple[int, torch.device], Tensor] = {}


def _weyl_steps(n: int, device: torch.device) -> Tensor:
    """``(j + 1) * gamma`` for ``j < n`` (int64, wrapping), cached per size and device:
    the same few call sizes recur every training iteration."""
    key = (n, device)
    steps = _STEPS.get(key)
    if steps is None:
        steps = torch.arange(1, n + 1, dtype=torch.int64, device=device)
        steps.mul_(_signed64(_GAMMA))
        if len(_STEPS) >= 256:
            _STEPS.clear()
        _STEPS[key] = steps
    return steps


def _hi_lo(z: Tensor) -> Tensor:
    """Each 64-bit word's high then low 24-bit value, int ``[*z.shape, 2]``: bits
    40-63, then bits 8-31.

    On a little-endian machine read from the word's two 32-bit halves (the int32 view
    of an int64 holds the low half first): bits 8-31 of each half, one shift and one
    mask over both, then the pair swapped.
    """
    if np.little_endian:
        pairs = z.contiguous().view(torch.int32).view(*z.shape, 2)
        v = pairs.bitwise_right_shift(8).bitwise_and_((1 << 24) - 1)
        return torch.stack((v[..., 1], v[..., 0]), dim=-1)
    hi = z.bitwise_right_shift(40).bitwise_and_((1 << 24) - 1)
    lo = z.bitwise_right_shift(8).bitwise_and_((1 << 24) - 1)
    return torch.stack([hi, lo], dim=-1)


def _scaled(v: Tensor, scale: float, dtype: torch.dtype) -> Tensor:
    """Integers below ``2**53`` as ``dtype`` times a power of two ``scale``: exact, so
    one kernel (conversion and scaling) gives the bits of ``v.to(dtype) * scale``."""
    if dtype in (torch.float32, torch.float64):
        return torch.mul(
            v, torch.tensor(scale, dtype=dtype)
        )  # a CPU scalar on any device
    return v.to(dtype).mul_(scale)


class ModelStreams:
    """Independent counter-based random streams, one per model, drawn as one tensor.

    Stream ``m`` has a 64-bit key. Every draw is one *call* with a per-call counter
    ``c`` (0, 1, 2, ...; one per call, whatever its size): model ``m``'s words of that
    call are the splitmix64 sequence started at ``mix(key_m ^ mix(c))``, word ``j``
    being ``mix(start_m + (j + 1) * gamma)`` (Steele, Lea and Flood 2014). So model
    ``m``'s draws depend only on its key, the sequence of calls and the per-model
    shapes requested: never on the other models of the batch or on how many there
    are, and a draw of shape ``[M, n]`` gives every model the same first ``n'``
    values as a draw of ``[M, n']`` would. All of it is int64 tensor arithmetic, so
    the bits are the same on CPU and CUDA.

    Uniforms use 24 bits (float32; two per word) or 53 bits (float64); normals come
    from Box-Muller on pairs of uniforms; Laplace by inverse CDF.
    """

    def __init__(
        self, keys: Tensor, *, device: torch.device | str | None = None
    ) -> None:
        if keys.dtype != torch.int64 or keys.dim() != 1:
            raise InvalidParameterError(
                f"`keys` must be a 1-d int64 tensor. Got {keys.dtype} of shape "
                f"{tuple(keys.shape)}."
            )
        self.keys = keys.to(device) if device is not None else keys
        self.device = self.keys.device
        self.counter = 0

    @classmethod
    def from_rngs(
        cls, rngs: Sequence[Rngs], *, device: torch.device | str = "cpu"
    ) -> ModelStreams:
        """One stream per :class:`Rngs` (its key: 64 bits of its seed sequence)."""
        keys = [
            _signed64(int(r.seed_sequence.generate_state(1, dtype=np.uint64)[0]))
            for r in rngs
        ]
        return cls(torch.tensor(keys, dtype=torch.int64), device=device)

    @property
    def m(self) -> int:
        """The number of streams (models)."""
        return int(self.keys.shape[0])

    def select(self, index: Tensor | Sequence[int]) -> ModelStreams:
        """The streams ``index`` (same counter: their next draws are those they would
        have made here)."""
        out = ModelStreams(self.keys[torch.as_tensor(index, device=self.device)])
        out.counter = self.counter
        return out

    def words(self, n: int) -> Tensor:
        """The next call's ``n`` random 64-bit words per model: int64 ``[M, n]``."""
        c = self.counter
        self.counter += 1
        start = self.keys.bitwise_xor(
            _signed64(_mix_int(c * _GAMMA + 0x5851F42D4C957F2D))
        )
        _mix_(start)
        z = torch.add(start.unsqueeze(1), _weyl_steps(n, self.device).unsqueeze(0))
        return _mix_(z)

    def rand(self, shape: Sequence[int], *, dtype: torch.dtype | None = None) -> Tensor:
        """Uniform on ``[0, 1)``: ``[M, *shape]`` (``dtype``: torch's default)."""
        dtype = dtype or torch.get_default_dtype()
        n = math.prod(shape)
        if dtype == torch.float64:
            return self._unit53(self.words(n)).view(self.m, *shape)
        h = (n + 1) // 2
        # Interleaved (word j gives values 2j and 2j + 1): a longer draw extends a
        # shorter one.
        v = _hi_lo(self.words(h)).view(self.m, 2 * h)
        return _scaled(v if n == 2 * h else v[:, :n], 2.0**-24, dtype).view(
            self.m, *shape
        )

    def randn(
        self, shape: Sequence[int], *, dtype: torch.dtype | None = None
    ) -> Tensor:
        """Standard normal (Box-Muller): ``[M, *shape]`` (``dtype``: torch's default)."""
        dtype = dtype or torch.get_default_dtype()
        n = math.prod(shape)
        h = (n + 1) // 2
        if dtype == torch.float64:
            z = self.words(2 * h)
            u1, u2 = self._unit53(z[:, 0::2]), self._unit53(z[:, 1::2])
            bits = 53
        else:
            v = _hi_lo(self.words(h))
            u1 = _scaled(v[..., 0], 2.0**-24, dtype)
            u2 = _scaled(v[..., 1], 2.0**-24, dtype)
            bits = 24
        # u1 in (0, 1]: log is finite.
        r = u1.add_(2.0**-bits).log_().mul_(-2.0).sqrt_()
        theta = u2.mul_(2.0 * math.pi)
        out = torch.empty((self.m, h, 2), dtype=r.dtype, device=r.device)
        torch.mul(r, torch.cos(theta), out=out[..., 0])
        torch.mul(r, theta.sin_(), out=out[..., 1])
        flat = out.view(self.m, 2 * h)
        return (flat if n == 2 * h else flat[:, :n]).reshape(self.m, *shape)

    def laplace(
        self,
        shape: Sequence[int],
        *,
        scale: float | Tensor,
        dtype: torch.dtype | None = None,
    ) -> Tensor:
        """Laplace with the given scale (inverse CDF): ``[M, *shape]``."""
        return laplace_from_uniform(self.rand(shape, dtype=dtype), scale)

    @staticmethod
    def _unit53(z: Tensor) -> Tensor:
        return _scaled(
            z.bitwise_right_shift(11).bitwise_and_((1 << 53) - 1),
            2.0**-53,
            torch.float64,
        )


def laplace_from_uniform(u: Tensor, scale: float | Tensor) -> Tensor:
    """Laplace noise by inverse CDF from uniform draws ``u`` on ``[0, 1)``."""
    eps = 1e-7 if u.dtype != torch.float64 else 1e-15
    u = (u - 0.5).clamp_(-0.5 + eps, 0.5 - eps)
    if isinstance(scale, Tensor):
        return -scale * torch.sign(u) * torch.log1p(-2.0 * u.abs())
    # The same products with fewer temporaries: -scale * sign(u) is exact (+-scale or
    # 0), and its product with the logarithm commutes.
    magnitude = u.abs().mul_(-2.0).log1p_()
    return magnitude.mul_(u.sign_().mul_(-scale))
