"""Which rows each PATE-GAN teacher trained on (the trace's ``records_seen``).

Teacher ``t`` of a model draws its rows from its region of the model's partition,
positions ``start[t] .. start[t] + size[t]`` of ``perm``
(:meth:`~dpaudit.generators.pate_gan.state.TrainerState.partition`). Where the
partition is drawn once, a teacher's distinct rows are recorded as a bit per position
of its region, not per row of the table: ``[M * k, W + 1]`` bits for the widest region
``W`` (the extra column takes the draws of inactive teachers). Modes:

- ``disjoint`` (the reference and every variant with fixed disjoint partitions): ``k W``
  is about ``n``: linear in the rows.
- ``region`` (``partition_last_only``: every teacher the same region, one partition):
  ``W`` is about ``n / k``: linear.
- ``identical`` (``single_discriminator``: the one critic is reported as every
  teacher; all see the same rows): one set of ``n`` bits per model: linear.
- ``rows`` (``shared_sampling``, ``repartition_every_iteration``): each teacher draws
  from all ``n`` rows, so ``k`` genuinely different sets of up to ``n`` rows are
  counted with ``k n`` bits. These two bug variants stay quadratic (``k`` grows with
  ``n``); the memory plan (:mod:`dpaudit.audit.games.memory`) counts it.

Counts are exactly those of the former ``[M * k, n]`` matrix of rows seen (which every
variant allocated, and once more per step): tests/generators/test_pate_gan_seen.py
compares them.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor

Mode = Literal["disjoint", "region", "identical", "rows"]


def seen_mode(
    *,
    single_discriminator: bool,
    shared_sampling: bool,
    repartition_every_iteration: bool,
    partition_last_only: bool,
) -> Mode:
    """The ledger's mode for a configuration's flags (see the module)."""
    if single_discriminator:
        return "identical"
    if shared_sampling or repartition_every_iteration:
        return "rows"
    return "region" if partition_last_only else "disjoint"


class SeenRows:
    """Distinct rows seen per teacher of ``M`` models.

    Args:
        perm: ``[M, N]`` each model's rows teacher by teacher.
        start, size: ``[M, k]`` each teacher's region of ``perm``.
        mode: see the module.
    """

    def __init__(
        self, perm: Tensor, start: Tensor, size: Tensor, *, mode: Mode
    ) -> None:
        m, n_max = perm.shape
        k = start.shape[1]
        self.m, self.k, self.mode = m, k, mode
        self.by_position = mode in ("disjoint", "region")
        self.position = torch.empty(0, dtype=torch.long, device=perm.device)
        self.start = torch.zeros(m * k, 1, dtype=torch.long, device=perm.device)
        self.width = n_max
        if self.by_position:
            # position[row] = where the row sits in perm (the inverse permutation).
            self.position = torch.empty_like(perm)
            arange = torch.arange(n_max, device=perm.device).expand(m, -1)
            self.position.scatter_(1, perm, arange)
            self.start = start.reshape(m * k, 1)
            self.width = int(size.max()) if size.numel() else 0
        groups = m if mode == "identical" else m * k
        self.seen = torch.zeros(
            groups, self.width + 1, dtype=torch.bool, device=perm.device
        )

    def mark(self, idx: Tensor, active_t: Tensor) -> None:
        """Records the rows ``idx[M*k, n]`` as seen by the teachers ``active_t[M*k]``
        (the others' draws are dropped)."""
        m, k = self.m, self.k
        n = idx.shape[1]
        off = idx
        if self.by_position:
            pos = torch.gather(self.position, 1, idx.reshape(m, k * n))
            off = pos.view(m * k, n) - self.start
        off = torch.where(active_t[:, None], off, self.width)
        if self.mode == "identical":
            # The same rows for every teacher: the first active one's draws.
            first = active_t.view(m, k).to(torch.long).argmax(dim=1)
            pick = torch.arange(m, device=idx.device) * k + first
            self.seen.scatter_(1, off[pick], True)
            return
        self.seen.scatter_(1, off, True)

    def counts(self) -> Tensor:
        """Distinct rows seen by each teacher: ``[M, k]``."""
        per = self.seen[:, : self.width].sum(dim=1)
        if self.mode == "identical":
            return per[:, None].expand(-1, self.k)
        return per.view(self.m, self.k)

    def union(self) -> Tensor:
        """Distinct rows seen by any teacher of each model: ``[M]``."""
        inner = self.seen[:, : self.width]
        if self.mode == "identical":
            return inner.sum(dim=1)
        by_model = inner.view(self.m, self.k, self.width)
        if self.mode == "disjoint":
            return by_model.sum(dim=(1, 2))
        return by_model.any(dim=1).sum(dim=1)

    def nbytes(self) -> int:
        """Bytes held (the bits and the inverse permutation)."""
        return int(
            self.seen.numel() * self.seen.element_size()
            + self.position.numel() * self.position.element_size()
        )
