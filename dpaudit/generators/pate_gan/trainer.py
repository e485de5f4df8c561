"""One batched PATE-GAN training run: Algorithm 1 of Jordon, Yoon and van der Schaar
(ICLR 2019) for ``M`` models as one tensor program.

Per iteration: ``n_T`` teacher steps (:mod:`.teachers`), ``n_S`` student steps charged
to the moments accountant (:mod:`.student`), the generator's steps; or, under
``single_discriminator``, WGAN-GP critic steps (:mod:`.critic`). Members that reach
their budget stop by a mask. There is no Python loop over teachers or models inside a
training step, and every draw of model ``m`` comes from model ``m``'s own streams.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from dpaudit.data import Domain
from dpaudit.generators import accountants as acc
from dpaudit.generators import stop
from dpaudit.generators.base import PrivacyClaim, RdpCurve
from dpaudit.generators.nets import BatchedMLP
from dpaudit.generators.pate_gan.claim import (
    accountant_name,
    non_private_event,
    rdp_of_moments,
    reference_moments,
    uses_accountant,
)
from dpaudit.generators.pate_gan.config import PateGanConfig
from dpaudit.generators.pate_gan.critic import critic_iteration
from dpaudit.generators.pate_gan.private_values import ValueSets, value_sets
from dpaudit.generators.pate_gan.state import TrainerState
from dpaudit.generators.pate_gan.student import generator_iteration, student_iteration
from dpaudit.generators.pate_gan.teachers import teacher_iteration, teacher_losses
from dpaudit.rng import Rngs


@dataclass
class Fitted:
    """What one trained member carries into its :class:`PateGan`."""

    generator: BatchedMLP
    index: int
    device: torch.device
    latent_dim: int
    domain: Domain
    num_teachers: int
    claim: PrivacyClaim
    category_frequencies: dict[str, tuple[np.ndarray, np.ndarray]] | None
    label: tuple[str, tuple[np.ndarray, np.ndarray]] | None
    values: ValueSets | None = None


def frequencies(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """A column's exact value frequencies (values sorted)."""
    counts = series.value_counts(normalize=True, sort=False).sort_index()
    return counts.index.to_numpy(), counts.to_numpy(dtype=float)


class Trainer(TrainerState):
    """Runs the phases over a :class:`TrainerState` (internal)."""

    def __init__(
        self,
        cfg: PateGanConfig,
        domain: Domain,
        k: int,
        datasets: list[pd.DataFrame],
        rngs: list[Rngs],
        public_rngs: list[Rngs] | None = None,
    ) -> None:
        super().__init__(cfg, domain, k, datasets, rngs, public_rngs)
        self.trace_eps: list[list[float]] = []
        self.trace_eps_di: list[list[float]] = []
        self.trace_moment1: list[list[float]] = []
        self.trace_losses: list[tuple[int, list[float], list[float]]] = []

    def run(self) -> list[Fitted]:
        """Trains every model until its budget (or the iteration cap) is reached."""
        started = time.perf_counter()
        cfg = self.cfg
        self.build()
        accounted = uses_accountant(cfg)
        if accounted:
            total = cfg.max_iterations
        else:
            total = min(cfg.fixed_iterations or cfg.max_iterations, cfg.max_iterations)
        for it in range(total):
            stop.training_step()  # a stopping audit discards this batch here
            if not bool(self.active.any()):
                break
            if cfg.repartition_every_iteration:
                # A fresh random partition every iteration: over training every
                # teacher sees every record.
                self.perm, self.start, self.size = self.partition()
            if cfg.single_discriminator:
                critic_iteration(self)
            else:
                teacher_iteration(self)
                student_iteration(self, uses_accountant=accounted)
            generator_iteration(self)
            self.iterations += self.active.to(torch.long)
            if cfg.record_trace:
                self._record(it)
            if accounted and cfg.budget_overshoot:
                # The budget is checked once per outer iteration, after the fact.
                self.active &= self.epsilon(self.gap_counts) <= cfg.epsilon
        return self._fitted(time.perf_counter() - started)

    def _record(self, it: int) -> None:
        self.trace_eps.append(self.epsilon(self.gap_counts).cpu().tolist())
        self.trace_moment1.append(
            (self.gap_counts @ self.own_table[:, 0]).cpu().tolist()
        )
        di = acc.data_independent_increment(lam=self.cfg.lam, orders=self.cfg.orders)
        queries = self.gap_counts.sum(dim=1).cpu().numpy()
        self.trace_eps_di.append(
            acc.epsilon_from_moments(
                queries[:, None] * di[None, :],
                delta=self.cfg.delta,
                conversion=self.cfg.conversion,
            ).tolist()
        )
        if self.cfg.single_discriminator or self.cfg.lr_teachers_refit:
            return
        own, other = teacher_losses(self)
        self.trace_losses.append((it, own, other))

    def _fitted(self, seconds: float) -> list[Fitted]:
        cfg, k = self.cfg, self.k
        accounted = uses_accountant(cfg)
        eps_own = self.epsilon(self.gap_counts).cpu().numpy()
        counts = self.gap_counts.cpu().numpy()
        all_counts = self.all_gap_counts.cpu().numpy()
        di = acc.pate_gan_epsilon(
            counts,
            acc.MomentsAccountantSpec(
                lam=cfg.lam, orders=cfg.orders, data_dependent=False
            ),
            delta=cfg.delta,
            conversion=cfg.conversion,
        )
        # The release's own events: exact frequencies of the private data.
        for flag in ("real_category_frequencies", "label_distribution_given"):
            if getattr(cfg, flag):
                self.record(non_private_event(flag))
        ref_alpha, note = reference_moments(
            cfg, k, all_counts, non_private=self.non_private
        )
        ref = (
            None
            if ref_alpha is None
            else acc.epsilon_from_moments(
                ref_alpha, delta=cfg.delta, conversion="improved"
            )
        )
        # The claimed accountant's log-moments (bugs included): its RDP curve.
        own_alpha = (self.gap_counts @ self.own_table).cpu().numpy()
        # The models of a batch mostly state one curve (and the reference the claimed
        # one): each distinct row of log-moments is converted once, its (frozen) curve
        # shared by the claims that state it.
        curves: dict[tuple[str, bytes], RdpCurve] = {}

        def curve(alpha: np.ndarray) -> RdpCurve:
            key = (alpha.dtype.str, np.ascontiguousarray(alpha).tobytes())
            found = curves.get(key)
            if found is None:
                found = curves[key] = rdp_of_moments(alpha)
            return found

        seen = self.seen.counts().cpu().numpy()
        unused = (self.batch.n_rows - self.seen.union()).cpu().numpy()
        iterations = self.iterations.cpu().numpy()
        out = []
        for i in range(self.m):
            domain = self.batch.domains[i]
            original = self.batch.originals[i]
            categories = None
            if cfg.real_category_frequencies:
                categories = {
                    col.name: frequencies(original[col.name])
                    for col in domain.columns
                    if col.kind in ("binary", "categorical")
                }
            values = value_sets(domain, original) if cfg.private_categories else None
            label = None
            if cfg.label_distribution_given:
                name = cfg.label_column or domain.names[-1]
                label = (name, frequencies(original[name]))
            trace: dict[str, Any] = {
                "records_seen": seen[i].tolist(),
                "records_unused": int(unused[i]),
                "rows": len(original),
                "ledger": acc.ledger_summary(counts[i]),
                "queries_including_skipped": int(all_counts[i].sum()),
                "delta_used": float(self.delta_claim[i]),
                "wall_seconds": seconds / self.m,
                "reference_note": note,
                "non_private_events": sorted(self.non_private),
                # Typed facts a report reads (dpaudit.audit.result.model.TrainingFacts).
                "teachers": 0 if cfg.single_discriminator else k,
                "accounted": accounted,
            }
            if cfg.record_trace:
                trace["epsilon"] = [row[i] for row in self.trace_eps]
                trace["epsilon_data_independent"] = [
                    row[i] for row in self.trace_eps_di
                ]
                trace["moment1"] = [row[i] for row in self.trace_moment1]
                trace["teacher_losses"] = [
                    {
                        "iteration": it,
                        "own": own[i * k : (i + 1) * k],
                        "other": other[i * k : (i + 1) * k],
                    }
                    for it, own, other in self.trace_losses
                ]
            claim = PrivacyClaim(
                epsilon=float(eps_own[i]) if accounted else cfg.epsilon,
                delta=float(self.delta_claim[i]),
                accountant=accountant_name(cfg),
                epsilon_data_independent=float(di[i]) if accounted else None,
                reference_epsilon=None if ref is None else float(ref[i]),
                iterations=int(iterations[i]),
                trace=trace,
                rdp=curve(own_alpha[i]) if accounted else None,
                reference_rdp=None if ref_alpha is None else curve(ref_alpha[i]),
            )
            out.append(
                Fitted(
                    generator=self.generator,
                    index=i,
                    device=self.device,
                    latent_dim=self.z,
                    domain=domain,
                    num_teachers=k,
                    claim=claim,
                    category_frequencies=categories,
                    label=label,
                    values=values,
                )
            )
        return out
