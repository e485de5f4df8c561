"""Training ``M`` G-PATE models of one layout as one tensor program.

All ``k`` teachers of all ``M`` models are one ensemble of ``M * k`` members, the
generators one of ``M`` members; the per-record input gradients of every teacher
come from one backward pass; members that reach their budget stop via a mask.

Randomness. Each model has two streams (:func:`dpaudit.rng.public_and_privacy`):
the *privacy* stream feeds only Confident-GNMax's threshold noise and GNMax's vote
noise; the *public* stream everything else, split into three children: the initial
weights, the teacher assignment (:mod:`~dpaudit.generators.g_pate.partition`) and
the training draws (latents, conditioning classes, random projections). The privacy
proof holds for every fixed value of the public stream, so an audit may hold it equal
in both worlds (docs/soundness.md). Each model draws from its own streams, in the
same order whatever the batch, so ``fit_many`` reproduces ``fit`` member by member.
Per-model draws are made a chunk of iterations ahead, outside the training step, so
the step has no loop over models, teachers or records.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from numpy.typing import NDArray
from torch import Tensor, nn
from torch.nn import functional as F

from dpaudit.generators import stop
from dpaudit.generators.base import PrivacyClaim
from dpaudit.generators.g_pate.accounting import Spending
from dpaudit.generators.g_pate.aggregation import (
    Aggregate,
    aggregate_counts,
    back_project,
    dp_grad_agg,
    teacher_input_gradients,
)
from dpaudit.generators.g_pate.config import GPateConfig
from dpaudit.generators.g_pate.layout import Layout
from dpaudit.generators.g_pate.networks import (
    concat_members,
    latent_dim,
    load_member,
    make_generators,
    make_teachers,
)
from dpaudit.generators.g_pate.partition import assign_teachers, partition_rows
from dpaudit.generators.g_pate.transcript import (
    Recorder,
    Replay,
    canary_counts,
    canary_holders,
)
from dpaudit.generators.optim import (
    MaskedStep,
    make_optimizer,
    member_losses,
    train_step,
)
from dpaudit.rng import Rngs

NOISE_BUDGET = 1 << 18
"""Per model, about this many numbers are drawn at once (a whole number of
iterations, at most 32): the chunk length depends on the configuration and the data
width only, never on the number of models, so ``fit_many`` and ``fit`` draw the same
numbers."""


@dataclass(frozen=True, slots=True)
class NoisePlan:
    """How one iteration's draws are laid out.

    Public normals: teacher-step latents ``[s, B, latent]``, generator latents
    ``[B, latent]``, projections ``[B, p, d]``; public uniforms: the classes of the
    generated rows; privacy normals: threshold noise ``[B, p]`` and vote noise
    ``[B, p, bins]``.
    """

    public_shapes: tuple[tuple[int, ...], ...]
    privacy_shapes: tuple[tuple[int, ...], ...]
    uniforms: int
    chunk: int

    @classmethod
    def build(cls, config: GPateConfig, layout: Layout, latent: int) -> NoisePlan:
        b, p, s = config.batch_size, config.projection_dim, config.teacher_steps
        public = ((s, b, latent), (b, latent), (b, p, layout.width))
        privacy = ((b, p), (b, p, config.bins))
        uniforms = (s + 1) * b if layout.classes else 0
        total = sum(math.prod(sh) for sh in (*public, *privacy)) + uniforms
        return cls(
            public, privacy, uniforms, int(min(32, max(1, NOISE_BUDGET // total)))
        )


@dataclass(frozen=True, slots=True)
class Draws:
    """One iteration's draws for all ``M`` models (leading axis: models)."""

    z_teacher: Tensor
    z_generator: Tensor
    projection: Tensor
    threshold_noise: Tensor
    vote_noise: Tensor
    uniforms: Tensor | None


@dataclass(slots=True)
class Fitted:
    """A trained model: its generator, layout, latent width and claim.

    ``generator`` is the model's own one-member generator; it is member ``member`` of
    ``ensemble`` (``members`` members: the generators trained with it), through which
    a batched release runs every model of one ``fit_many`` in one pass.
    """

    generator: nn.Module
    layout: Layout
    latent: int
    claim: PrivacyClaim
    device: torch.device
    ensemble: nn.Module
    member: int
    members: int


class _Chunked:
    """Per-model draws of one kind, a chunk of iterations ahead."""

    def __init__(
        self,
        gens: Sequence[torch.Generator],
        shapes: Sequence[tuple[int, ...]],
        uniforms: int,
        chunk: int,
        device: torch.device,
    ) -> None:
        self.gens, self.shapes, self.uniforms = gens, tuple(shapes), uniforms
        self.sizes = [math.prod(s) for s in self.shapes]
        self.chunk, self.device = chunk, device
        self._normals: Tensor | None = None
        self._uniforms: Tensor | None = None

    def draw(self, iteration: int) -> tuple[list[Tensor], Tensor | None]:
        offset = iteration % self.chunk
        if offset == 0 or self._normals is None:
            # The only loop over models, outside the step: each model's own stream.
            self._normals = torch.stack(
                [
                    torch.randn(
                        self.chunk, sum(self.sizes), generator=g, device=self.device
                    )
                    for g in self.gens
                ]
            )
            if self.uniforms:
                self._uniforms = torch.stack(
                    [
                        torch.rand(
                            self.chunk, self.uniforms, generator=g, device=self.device
                        )
                        for g in self.gens
                    ]
                )
        m = len(self.gens)
        flat = self._normals[:, offset]
        # Contiguous per-iteration tensors (views into the chunk would be strided).
        parts = [
            piece.reshape(m, *shape).contiguous()
            for piece, shape in zip(torch.split(flat, self.sizes, dim=1), self.shapes)
        ]
        uniforms = (
            None if self._uniforms is None else self._uniforms[:, offset].contiguous()
        )
        return parts, uniforms


class Trainer:
    """Trains ``M`` G-PATE models of one layout as one tensor program.

    Args:
        config: the shared configuration.
        layouts: each model's layout (one signature).
        encoded: each model's encoded private table.
        streams: each model's ``(public, privacy)`` streams.
        device: where the tensors live.
        target_rows: canary teachers (:mod:`.transcript`): per model, which rows of
            its table are the target record; None (default): trained teachers.
            Canary teachers are not trained (their votes are fixed by their
            partition); every public and privacy draw is made as with trained ones.
    """

    def __init__(
        self,
        config: GPateConfig,
        layouts: Sequence[Layout],
        encoded: Sequence[NDArray[np.float32]],
        streams: Sequence[tuple[Rngs, Rngs]],
        device: torch.device,
        target_rows: Sequence[NDArray[np.bool_]] | None = None,
    ) -> None:
        self.config, self.layouts, self.device = config, layouts, device
        self.recorder: Recorder | None = None
        self.replay: Replay | None = None
        self.m, self.k = len(layouts), config.num_teachers
        layout = layouts[0]
        self.d, self.classes = layout.width, layout.classes
        self.latent = latent_dim(config, layout)
        publics = [public.spawn(3) for public, _ in streams]
        self._init_networks([init for init, _, _ in publics])
        self._stack_data(encoded, [assign for _, assign, _ in publics])
        self.canary: Tensor | None = None
        if target_rows is not None:
            counts = [
                canary_counts(canary_holders(t, rows, self.k), config.bins)
                for (t, _), rows in zip(self.assignments, target_rows)
            ]
            self.canary = torch.from_numpy(np.stack(counts).astype(np.float32)).to(
                device
            )
        plan = NoisePlan.build(config, layout, self.latent)
        self.public_draws = _Chunked(
            [train.torch(device) for _, _, train in publics],
            plan.public_shapes,
            plan.uniforms,
            plan.chunk,
            device,
        )
        self.privacy_draws = _Chunked(
            [privacy.torch(device) for _, privacy in streams],
            plan.privacy_shapes,
            0,
            plan.chunk,
            device,
        )
        self.teacher_updates = 0

    # ------------------------------------------------------------------ setup
    def _init_networks(self, inits: Sequence[Rngs]) -> None:
        """Each model's teachers and generator from its own initialisation stream
        (so that ``fit_many`` reproduces ``fit``), then one ensemble of all members."""
        cfg, layout, device = self.config, self.layouts[0], self.device
        teachers, generators = [], []
        for init in inits:
            g = init.torch(device)
            teachers.append(
                make_teachers(cfg, layout, self.k, generator=g, device=device)
            )
            generators.append(
                make_generators(cfg, layout, 1, generator=g, device=device)
            )
        self.templates = generators
        self.teachers = concat_members(teachers)
        self.generators = concat_members(generators)
        betas = (0.5, 0.999)
        self.teacher_step = MaskedStep(
            self.teachers,
            make_optimizer(
                self.teachers.parameters(), name="adam", lr=cfg.lr, betas=betas
            ),
        )
        self.generator_step = MaskedStep(
            self.generators,
            make_optimizer(
                self.generators.parameters(), name="adam", lr=cfg.lr, betas=betas
            ),
        )

    def _stack_data(
        self, encoded: Sequence[NDArray[np.float32]], assigns: Sequence[Rngs]
    ) -> None:
        """The models' rows in one padded table, and every teacher's partition."""
        sizes = [x.shape[0] for x in encoded]
        stride = max(sizes)
        table = np.zeros((self.m * stride, self.d + self.classes), dtype=np.float32)
        for i, (lay, x) in enumerate(zip(self.layouts, encoded)):
            free, onehot = lay.split(x)
            table[i * stride : i * stride + x.shape[0]] = np.concatenate(
                [free, onehot], 1
            )
        self.table = torch.from_numpy(table).to(self.device)
        self.assignments = [
            assign_teachers(n, self.k, rng=r) for n, r in zip(sizes, assigns)
        ]
        self.rows, part_sizes = partition_rows(
            self.assignments, self.k, stride, self.device
        )
        self.has_rows = (part_sizes > 0).to(torch.float32)
        self.part_sizes = part_sizes.clamp(min=1)

    # ------------------------------------------------------------------ draws
    def draws(self, iteration: int) -> Draws:
        """This iteration's draws for all models."""
        (z_teacher, z_gen, proj), uniforms = self.public_draws.draw(iteration)
        (thr, vote), _ = self.privacy_draws.draw(iteration)
        return Draws(z_teacher, z_gen, proj, thr, vote, uniforms)

    def _onehot(self, uniforms: Tensor | None, start: int, count: int) -> Tensor:
        if not self.classes or uniforms is None:
            return torch.zeros(self.m, count, 0, device=self.device)
        cls_idx = (uniforms[:, start : start + count] * self.classes).long()
        cls_idx = cls_idx.clamp_(max=self.classes - 1)
        return F.one_hot(cls_idx, self.classes).to(torch.float32)

    # ----------------------------------------------------------------- phases
    def teacher_phase(self, draws: Draws, active_teachers: Tensor) -> None:
        """``teacher_steps`` updates of every teacher on its own rows (real) and the
        generator's rows (fake), non-private."""
        if self.canary is not None:
            return  # canary teachers vote by their partition alone
        b = self.config.batch_size
        for s in range(self.config.teacher_steps):
            self._teacher_update(
                draws.z_teacher[:, s],
                self._onehot(draws.uniforms, s * b, b),
                active_teachers,
            )

    def _teacher_update(
        self, z: Tensor, cond_fake: Tensor, active_teachers: Tensor
    ) -> None:
        b, k = self.config.batch_size, self.k
        with torch.no_grad():
            fake = self.generators(z, cond_fake)
        fake = torch.cat([fake, cond_fake], dim=-1).repeat_interleave(k, dim=0)
        pos = self.teacher_updates * b + torch.arange(b, device=self.device)
        index = self.rows.gather(1, pos[None, :] % self.part_sizes[:, None])
        real = self.table[index]  # [M * k, B, d + C]
        batch = torch.cat([real, fake], dim=1)
        x, cond = batch[..., : self.d], batch[..., self.d :]

        def losses() -> Tensor:
            logits = self.teachers(x, cond)
            # A teacher without rows learns from generated rows only.
            return member_losses(
                F.softplus(-logits[:, :b])
            ) * self.has_rows + member_losses(F.softplus(logits[:, b:]))

        train_step(self.teacher_step, losses, active_teachers)
        self.teacher_updates += 1

    def aggregate_phase(self, draws: Draws) -> tuple[Tensor, Aggregate]:
        """The generated batch and DPGradAgg's private direction for each record."""
        cfg = self.config
        b, p = cfg.batch_size, cfg.projection_dim
        cond = self._onehot(draws.uniforms, cfg.teacher_steps * b, b)
        x = self.generators(draws.z_generator, cond)
        if self.canary is not None:
            counts = self.canary[:, None, None, :].expand(self.m, b, p, cfg.bins)
            return x, aggregate_counts(
                counts.contiguous(),
                draws.projection / math.sqrt(p),
                clip=cfg.clip,
                threshold=cfg.threshold_count,
                sigma1=cfg.sigma1,
                sigma2=cfg.sigma2,
                threshold_noise=draws.threshold_noise,
                vote_noise=draws.vote_noise,
            )
        grads = teacher_input_gradients(
            self.teachers, x.detach(), cond, num_teachers=self.k
        )
        agg = dp_grad_agg(
            grads,
            draws.projection / math.sqrt(p),
            clip=cfg.clip,
            bins=cfg.bins,
            threshold=cfg.threshold_count,
            sigma1=cfg.sigma1,
            sigma2=cfg.sigma2,
            threshold_noise=draws.threshold_noise,
            vote_noise=draws.vote_noise,
        )
        if self.replay is not None:
            # The transcript's answers replace the (unrelated) noisy ones.
            answered, winners = self.replay.forced(agg.answered)
            agg = back_project(
                agg.counts,
                draws.projection / math.sqrt(p),
                answered,
                winners,
                clip=cfg.clip,
            )
        return x, agg

    def generator_phase(self, x: Tensor, agg: Aggregate, mask: Tensor) -> None:
        """One generator step by MSE towards ``x + aggregated direction``."""
        target = x.detach() + agg.gradient

        def losses() -> Tensor:
            return ((x - target) ** 2).sum(dim=-1).mean(dim=-1)

        train_step(self.generator_step, losses, mask)

    def _mask(self, active: NDArray[np.bool_]) -> Tensor:
        return torch.from_numpy(active).to(self.device)

    # -------------------------------------------------------------------- run
    def run(self) -> tuple[list[Fitted], list[int]]:
        """Trains until every model's budget or the iteration cap is reached.

        Returns:
            The fitted models, in order, and the indices of those never trained.
        """
        cfg = self.config
        spend = Spending(cfg, self.m)
        for t in range(cfg.max_iterations):
            stop.training_step()  # a stopping audit discards this batch here
            if not spend.admit():
                break
            draws = self.draws(t)
            self.teacher_phase(
                draws, self._mask(spend.active).repeat_interleave(self.k)
            )
            x, agg = self.aggregate_phase(draws)
            answered = agg.answered.reshape(self.m, -1).cpu().numpy()
            counts = (
                agg.counts.reshape(self.m, -1, cfg.bins).cpu().numpy()
                if cfg.traces_data_dependent
                else None
            )
            going = spend.charge(answered, counts)
            if self.recorder is not None:
                self.recorder.observe(
                    agg.answered, agg.winners, spend.active, agg.counts
                )
            if self.replay is not None:
                self.replay.observe(agg.counts, agg.answered, agg.winners, spend.active)
            if not going:
                break
            self.generator_phase(x, agg, self._mask(spend.active))
            spend.commit()
        seen = (
            [
                np.bincount(teacher, minlength=self.k).tolist()
                for teacher, _ in self.assignments
            ]
            if cfg.record_trace
            else None
        )
        claims, untrained = spend.claims(records_seen=seen)
        self.generators.eval()
        for param in self.generators.parameters():
            param.grad = None
        results = []
        for i, claim in enumerate(claims):
            template = self.templates[i]
            load_member(template, self.generators, i, self.m)
            template.eval()
            results.append(
                Fitted(
                    template,
                    self.layouts[i],
                    self.latent,
                    claim,
                    self.device,
                    self.generators,
                    i,
                    self.m,
                )
            )
        return results, untrained
