"""The state of one batched PATE-GAN training run: data, streams, networks, ledgers.

The phases (:mod:`.teachers`, :mod:`.student`, :mod:`.critic`) act on a
:class:`TrainerState`; :mod:`.trainer` runs them. Every draw of model ``m`` comes from
model ``m``'s own counter-based streams (:class:`~dpaudit.rng.ModelStreams`), vectorised
over the model axis: ``public`` for weights, teacher assignment, batches and latents,
``privacy`` for the noise the privacy proof relies on (docs/soundness.md). So a model
depends only on its own streams, never on its batch mates or the batch size.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from dpaudit.data import Domain
from dpaudit.generators import accountants as acc
from dpaudit.generators.nets import (
    BatchedMLP,
    MLPSpec,
    gather_rows,
    is_relu_logit,
    with_ones,
)
from dpaudit.generators.optim import BatchedOptimizer, MaskedStep, make_optimizer
from dpaudit.generators.pate_gan.canary import CanaryTeachers
from dpaudit.generators.pate_gan.claim import non_private_event
from dpaudit.generators.pate_gan.config import (
    PateGanConfig,
    gaussian_label_sigma,
    resolve_device,
    widths,
)
from dpaudit.generators.pate_gan.seen import SeenRows, seen_mode
from dpaudit.generators.pate_gan.transcript import Recorder, Replay
from dpaudit.rng import ModelStreams, Rngs, public_and_privacy


@dataclass
class Batch:
    """The encoded training data of ``M`` models, padded to the longest."""

    data: Tensor  # [M, N, p]
    n_rows: Tensor  # [M]
    domains: list[Domain]
    originals: list[pd.DataFrame]


def latent(streams: ModelStreams, n: int, z: int, dist: str) -> Tensor:
    """Latent noise ``[M, n, z]`` from ``streams`` (``uniform``: U[0,1),
    ``uniform_pm1``: U[-1,1), ``normal``: N(0,1))."""
    if dist == "normal":
        return streams.randn((n, z))
    u = streams.rand((n, z))
    return u.mul_(2.0).sub_(1.0) if dist == "uniform_pm1" else u


class TrainerState:
    """Data, streams, networks and privacy ledgers of ``M`` models (internal)."""

    generator: BatchedMLP
    gen_step: MaskedStep
    critic: BatchedMLP
    critic_step: MaskedStep
    student: BatchedMLP
    student_step: MaskedStep
    teachers: BatchedMLP
    teacher_step: MaskedStep
    data1: Tensor
    lr_weights: Tensor

    def __init__(
        self,
        cfg: PateGanConfig,
        domain: Domain,
        k: int,
        datasets: list[pd.DataFrame],
        rngs: list[Rngs],
        public_rngs: list[Rngs] | None = None,
    ) -> None:
        self.cfg, self.k = cfg, k
        self.m = len(datasets)
        # Non-private events of this run (flag -> reason): data reaching the output
        # without privacy noise (claim.reference_epsilon composes them).
        self.non_private: dict[str, str] = {}
        self.device = resolve_device(cfg.device)
        pairs = [
            public_and_privacy(r, None if public_rngs is None else public_rngs[i])
            for i, r in enumerate(rngs)
        ]
        self.public = ModelStreams.from_rngs([p for p, _ in pairs], device=self.device)
        self.privacy = ModelStreams.from_rngs([q for _, q in pairs], device=self.device)
        self.batch = self._encode(domain, datasets)
        self.p = int(self.batch.data.shape[2])
        self.z = widths(cfg.latent_dim, d=self.p, z=self.p, name="latent_dim")[0]
        self.fused_teachers = False
        m = self.m
        self.sigma = (
            gaussian_label_sigma(
                cfg.epsilon, delta=cfg.delta, form=cfg.gaussian_noise_form
            )
            if cfg.gaussian_label_noise
            else 0.0
        )
        if cfg.delta_override:
            # The delta passed in is ignored: 1 / (n sqrt(n)).
            n = self.batch.n_rows.to(torch.float64)
            delta_claim_t = 1.0 / (n * torch.sqrt(n))
        else:
            delta_claim_t = torch.full(
                (m,), cfg.delta, dtype=torch.float64, device="cpu"
            )
        self.delta_claim = delta_claim_t.cpu().numpy()
        own_spec = acc.MomentsAccountantSpec(
            lam=cfg.lam,
            orders=cfg.orders,
            index_bug=cfg.accountant_index_bug,
            missing_log=cfg.accountant_missing_log,
        )
        self.own_table = torch.as_tensor(
            acc.increment_table(k, own_spec), device=self.device
        )
        self.gap_counts = torch.zeros(m, k + 1, dtype=torch.float64, device=self.device)
        self.all_gap_counts = torch.zeros_like(self.gap_counts)  # incl. skipped batches
        # min_l (alpha(l) + c_l) / l: c_l = log(1/delta) for the classic conversion.
        self.moments_offset = torch.as_tensor(
            acc.moments_offset(
                cfg.orders, delta=self.delta_claim, conversion=cfg.conversion
            ),
            device=self.device,
        )
        self.orders = torch.arange(
            1, cfg.orders + 1, dtype=torch.float64, device=self.device
        )
        self.active = torch.ones(m, dtype=torch.bool, device=self.device)
        # The transcript (every noisy vote) when recorded, or the transcripts this
        # run replays (dpaudit.generators.pate_gan.transcript).
        self.recorder: Recorder | None = None
        self.replay: Replay | None = None
        # Canary teachers (the transcript game's adversarial teachers), or None.
        self.canary: CanaryTeachers | None = None
        self.iterations = torch.zeros(m, dtype=torch.long, device=self.device)
        self.perm, self.start, self.size = self.partition()
        # Rows seen per teacher, linear in the rows (not a teachers x rows matrix).
        self.seen = SeenRows(
            self.perm,
            self.start,
            self.size,
            mode=seen_mode(
                single_discriminator=cfg.single_discriminator,
                shared_sampling=cfg.shared_sampling,
                repartition_every_iteration=cfg.repartition_every_iteration,
                partition_last_only=cfg.partition_last_only,
            ),
        )

    # ----------------------------------------------------------------- data
    def _encode(self, domain: Domain, datasets: list[pd.DataFrame]) -> Batch:
        domains: list[Domain] = []
        encoded: dict[int, tuple[Domain, np.ndarray]] = {}
        for frame in datasets:
            # An audit batch holds a few distinct tables many times: encode each once.
            if id(frame) not in encoded:
                if self.cfg.data_bounds:
                    # Bounds read from the private data: the released range leaks
                    # extremes.
                    self.record(non_private_event("data_bounds"))
                    dom = domain.with_data_bounds(frame)
                else:
                    dom = domain
                if self.cfg.private_categories:
                    # Value sets learned from the private data: the release's support
                    # shows which values the data hold.
                    self.record(non_private_event("private_categories"))
                encoded[id(frame)] = (dom, dom.encode(frame))
            domains.append(encoded[id(frame)][0])
        n_max = max(len(f) for f in datasets)
        p = domain.encoded_dim
        # Filled on the CPU from NumPy, then moved to the trainer's device.
        data = torch.zeros(self.m, n_max, p, device="cpu")
        for i, frame in enumerate(datasets):
            data[i, : len(frame)] = torch.from_numpy(encoded[id(frame)][1])
        n_rows = torch.tensor([len(f) for f in datasets], device="cpu")
        return Batch(
            data=data.to(self.device),
            n_rows=n_rows.to(self.device),
            domains=domains,
            originals=datasets,
        )

    def partition(self) -> tuple[Tensor, Tensor, Tensor]:
        """Each teacher's rows: ``perm[M, N]`` lists each model's rows teacher by
        teacher (padding last); teacher ``t``'s rows are ``perm[start[t]:start[t] +
        size[t]]`` (``start``, ``size``: ``[M, k]``).

        The reference assigns every record to a teacher independently and uniformly
        from the public stream: record ``i``'s teacher is a function of draw ``i``
        only, so adding a record (appended last) never moves another one, and one
        record changes exactly one teacher's data (docs/soundness.md).
        """
        cfg, k = self.cfg, self.k
        n_max = self.batch.data.shape[1]
        n = self.batch.n_rows[:, None]
        index = torch.arange(n_max, device=self.device)[None, :]
        pad = index >= n
        u = self.public.rand((n_max,), dtype=torch.float64)
        if cfg.balanced_partition:
            # A random permutation (or the rows in their stored order) split into
            # balanced contiguous parts (array_split): adding a record shifts the
            # bounds and can move a second teacher's data.
            if cfg.partition_order == "rows":
                perm = index.expand(n.shape[0], -1).clone()  # padding is last already
            else:
                perm = torch.argsort(u + pad.to(u.dtype) * 2.0, dim=1)
            t = torch.arange(k, device=self.device)[None, :]
            size = n // k + (t < n % k).to(torch.long)
        else:
            teacher = torch.floor(u * k).to(torch.long).clamp_(max=k - 1)
            teacher = torch.where(pad, k, teacher)
            perm = torch.argsort(teacher * n_max + index, dim=1)
            # Rows per teacher (padding counted as teacher k, dropped): a count, not
            # a rows x teachers one-hot (quadratic in the rows).
            size = torch.zeros(n.shape[0], k + 1, dtype=torch.long, device=self.device)
            size = size.scatter_add_(1, teacher, torch.ones_like(teacher))[:, :k]
        start = torch.cumsum(size, dim=1) - size
        if cfg.partition_last_only:
            # An index bug: every teacher trains on the last partition.
            start = start[:, -1:].expand(-1, k).clone()
            size = size[:, -1:].expand(-1, k).clone()
        if cfg.shared_sampling or cfg.single_discriminator:
            # Each teacher step samples from all rows.
            start = torch.zeros_like(start)
            size = self.batch.n_rows[:, None].expand(-1, k).clone()
        return perm, start, size

    def teacher_row_indices(self, n: int) -> tuple[Tensor, Tensor]:
        """Indices of ``n`` rows (with replacement) from each teacher's partition,
        ``[M, k, n]``, and which teachers have any rows, ``[M, k]``."""
        m, k = self.m, self.k
        u = self.public.rand((k, n))
        nonempty = self.size > 0
        pos = self.start[..., None] + torch.floor(u * self.size[..., None]).to(
            torch.long
        )
        pos = pos.clamp_(max=self.batch.data.shape[1] - 1)
        rows = torch.gather(self.perm, 1, pos.reshape(m, k * n)).view(m, k, n)
        return rows, nonempty

    def sample_teacher_rows(self, n: int) -> tuple[Tensor, Tensor, Tensor]:
        """``n`` rows (with replacement) from each teacher's partition: the rows
        ``[M*k, n, p]``, their indices ``[M*k, n]`` and the non-empty teachers
        ``[M*k]``."""
        m, k = self.m, self.k
        rows, nonempty = self.teacher_row_indices(n)
        flat = rows.reshape(m, k * n)
        # Gather from each model's own table: no copy of the data per teacher.
        real = gather_rows(self.batch.data, flat).reshape(m * k, n, self.p)
        return real, flat.reshape(m * k, n), nonempty.reshape(m * k)

    def sample_all_rows(self, n: int) -> tuple[Tensor, Tensor]:
        """``n`` rows (with replacement) from each model's whole dataset: [M, n, p],
        and their indices [M, n]."""
        u = self.public.rand((n,))
        idx = torch.floor(u * self.batch.n_rows[:, None]).to(torch.long)
        idx = torch.minimum(idx, self.batch.n_rows[:, None] - 1)
        return gather_rows(self.batch.data, idx), idx

    def latent(self, n: int) -> Tensor:
        """Latent noise of every model: ``[M, n, z]`` (public stream)."""
        return latent(self.public, n, self.z, self.cfg.latent_distribution)

    def record(self, event: tuple[str, str]) -> None:
        """Records a non-private event ``(flag, reason)``."""
        flag, reason = event
        self.non_private[flag] = reason

    def mark_seen(self, idx: Tensor, active_t: Tensor) -> None:
        """Records the rows ``idx[M*k, n]`` as seen by the active teachers."""
        self.seen.mark(idx, active_t)
        if self.canary is not None:
            self.canary.mark(idx, active_t)

    def epsilon(self, gap_counts: Tensor) -> Tensor:
        """The implementation's own accountant on a ledger of vote gaps: ``[M]``."""
        alpha = gap_counts @ self.own_table
        return torch.min((alpha + self.moments_offset) / self.orders, dim=1).values

    # --------------------------------------------------------------- models
    def build(self) -> None:
        """The networks, initialised from each model's public stream."""
        cfg, p, z, m, k = self.cfg, self.p, self.z, self.m, self.k
        out_act: Literal["sigmoid", "linear"] = (
            "sigmoid" if cfg.generator_output == "sigmoid" else "linear"
        )
        init = self.public

        def hidden(expr: str) -> tuple[int, ...]:
            return widths(expr, d=p, z=z, floor=cfg.min_width)

        self.generator = BatchedMLP(
            m,
            MLPSpec(
                n_in=z,
                hidden=hidden(cfg.generator_hidden),
                n_out=p,
                activation=cfg.generator_activation,
                out_activation=out_act,
                residual=cfg.generator_residual,
                layer_norm=cfg.generator_layer_norm,
            ),
            generator=init,
            device=self.device,
        )

        def opt(params: Iterator[torch.nn.Parameter]) -> BatchedOptimizer:
            return make_optimizer(
                params,
                name=cfg.optimizer,
                lr=cfg.lr,
                betas=(cfg.beta1, 0.999),
                weight_decay=cfg.weight_decay,
            )

        self.gen_step = MaskedStep(self.generator, opt(self.generator.parameters()))
        if cfg.single_discriminator:
            self.critic = BatchedMLP(
                m,
                MLPSpec(
                    n_in=p,
                    hidden=hidden(cfg.discriminator_hidden),
                    n_out=1,
                    activation="relu",
                    out_activation="linear",
                ),
                generator=init,
                device=self.device,
            )
            self.critic_step = MaskedStep(self.critic, opt(self.critic.parameters()))
            return
        self.student = BatchedMLP(
            m,
            MLPSpec(
                n_in=p,
                hidden=hidden(cfg.student_hidden),
                n_out=1,
                activation=cfg.student_activation,
                out_activation="sigmoid",
                dropout=cfg.student_dropout,
            ),
            generator=init,
            device=self.device,
        )
        self.student_step = MaskedStep(self.student, opt(self.student.parameters()))
        if not cfg.lr_teachers_refit:
            self.teachers = BatchedMLP(
                m * k,
                MLPSpec(
                    n_in=p,
                    hidden=hidden(cfg.teacher_hidden),
                    n_out=1,
                    activation=cfg.teacher_activation,
                    out_activation="sigmoid",
                ),
                generator=init,
                device=self.device,
            )
            self.teacher_step = MaskedStep(
                self.teachers, opt(self.teachers.parameters())
            )
            # PATE-GAN's teachers (one ReLU layer, a logit) take the hand-written
            # gradient; their real rows come from a table with a ones column.
            self.fused_teachers = is_relu_logit(self.teachers)
            if self.fused_teachers:
                self.data1 = with_ones(self.batch.data)
