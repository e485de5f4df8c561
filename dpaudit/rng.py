"""Seeding: one root seed, spawned streams, explicit generators.

Library code never touches global random state. Every function that draws random
numbers takes ``rng: Rngs`` as a keyword argument; the audit derives every round's
stream from one root seed with :meth:`Rngs.spawn` (NumPy ``SeedSequence`` spawning).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch

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
        elif isinstance(seed, int | np.integer) and not isinstance(seed, bool) and seed >= 0:
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
            Rngs.from_seed(np.random.SeedSequence(
                seq.entropy, spawn_key=(*seq.spawn_key, i), pool_size=seq.pool_size))
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
        _POOL = ThreadPoolExecutor(max_workers=ParallelDraws.STREAMS,
                                   thread_name_prefix="dpaudit-rng")
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
        seeds = torch.randint(0, 2**62, (self.STREAMS,), generator=gen,
                              device=self.device).tolist()
        self.children = [torch.Generator(device=self.device).manual_seed(int(s))
                         for s in seeds]

    def rand(self, shape: Sequence[int]) -> torch.Tensor:
        """Uniform on ``[0, 1)``, like ``torch.rand(shape, generator=gen)``."""
        return self._fill(torch.empty(tuple(shape), device=self.device), "uniform")

    def randn(self, shape: Sequence[int]) -> torch.Tensor:
        """Standard normal, like ``torch.randn(shape, generator=gen)``."""
        return self._fill(torch.empty(tuple(shape), device=self.device), "normal")

    def _fill(self, out: torch.Tensor, kind: Literal["uniform", "normal"]) -> torch.Tensor:
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
